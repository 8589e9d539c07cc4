"""`MemorySessionStore`: the `SessionStore` for tests and notebooks; lost when the process ends.

It keeps the same shape as the SQLite store: a small record per session (frozen, replaced on
every write) and two append-only lists of frozen messages and events. A write never copies the
history.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from eve_py.errors import SessionConflictError, SessionNotFoundError
from eve_py.events import Event
from eve_py.models.messages import Message
from eve_py.sessions.record import SessionRecord

__all__ = ("MemorySessionStore",)

_T = TypeVar("_T")


class MemorySessionStore:
    """Keeps sessions in dicts of frozen models; every write is a compare-and-set on the version."""

    def __init__(self) -> None:
        self._records: dict[str, SessionRecord] = {}
        self._events: dict[str, list[Event]] = {}
        self._messages: dict[str, list[Message]] = {}

    async def create(self, record: SessionRecord, events: Sequence[Event]) -> SessionRecord:
        """See `SessionStore.create`."""
        if record.id in self._records:
            raise SessionConflictError(f"A session with id {record.id!r} already exists.")
        stored = record.model_copy(update={"version": 1, "event_count": len(events), "message_count": 0})
        self._records[record.id] = stored
        self._events[record.id] = list(events)
        self._messages[record.id] = []
        return stored

    async def load(self, session_id: str) -> SessionRecord:
        """See `SessionStore.load`."""
        try:
            return self._records[session_id]
        except KeyError:
            raise SessionNotFoundError(session_id) from None

    async def commit(
        self,
        record: SessionRecord,
        events: Sequence[Event],
        messages: Sequence[Message] = (),
        *,
        durable: bool = True,
    ) -> SessionRecord:
        """See `SessionStore.commit`. Atomic because nothing here awaits between check and write."""
        current = await self.load(record.id)
        if current.version != record.version:
            raise SessionConflictError(
                f"Session {record.id!r} was changed by another writer (version {current.version}, "
                f"this write was based on {record.version}); nothing was written."
            )
        stored = record.stored(len(events), len(messages))
        self._records[record.id] = stored
        self._events[record.id] += events
        self._messages[record.id] += messages
        return stored

    async def read_events(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Event]:
        """See `SessionStore.read_events`."""
        return _window(self._events, session_id, start, stop)

    async def read_messages(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Message]:
        """See `SessionStore.read_messages`."""
        return _window(self._messages, session_id, start, stop)

    async def aclose(self) -> None:
        """Nothing to release."""


def _window(logs: dict[str, list[_T]], session_id: str, start: int, stop: int | None) -> list[_T]:
    """Indices, not Python slicing: a negative start or stop means 0, as in the SQLite store."""
    if session_id not in logs:
        raise SessionNotFoundError(session_id)
    return logs[session_id][max(start, 0) : None if stop is None else max(stop, 0)]
