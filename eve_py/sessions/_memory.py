"""`MemorySessionStore`: the `SessionStore` for tests and notebooks; lost when the process ends.

It keeps the same shape as the SQLite store: a small record per session (frozen, replaced on
every write) and two append-only logs of messages and events, kept as their JSON text as the
SQLite store keeps them. A write never copies the history, and a long log is a list of strings:
Python's garbage collector does not walk strings, so a session's age does not slow every
collection (as a log of model objects, each a web of dicts and lists, would).
"""

from __future__ import annotations

import bisect
import secrets
from collections.abc import Sequence

from eve_py.errors import SessionConflictError, SessionNotFoundError
from eve_py.protocol import Event, dump_event, load_event
from eve_py.protocol.messages import Message, dump_message, load_messages
from eve_py.sessions._record import SessionRecord

__all__ = ("MemorySessionStore",)


class MemorySessionStore:
    """Keeps sessions in dicts of frozen models; every write is a compare-and-set on the version."""

    def __init__(self) -> None:
        self._records: dict[str, SessionRecord] = {}
        self._events: dict[str, list[str]] = {}
        self._messages: dict[str, list[str]] = {}
        self._deadlines: dict[str, float] = {}
        """Each waiting session's first deadline, for the sessions that have one."""
        self._by_deadline: list[tuple[float, str]] = []
        """`_deadlines` as (deadline, session id), kept sorted: `due` reads the front, not the whole."""
        self._secrets: dict[str, bytes] = {}
        self._once: dict[str, float] = {}

    async def create(self, record: SessionRecord, events: Sequence[Event], *, durable: bool = True) -> SessionRecord:
        """See `SessionStore.create`."""
        if record.id in self._records:
            raise SessionConflictError(f"A session with id {record.id!r} already exists.")
        stored = record.created(len(events))
        self._records[record.id] = stored
        self._events[record.id] = [dump_event(e) for e in events]
        self._messages[record.id] = []
        self._keep_deadline(stored)
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
        self._events[record.id] += [dump_event(e) for e in events]
        self._messages[record.id] += [dump_message(m) for m in messages]
        self._keep_deadline(stored)
        return stored

    def _keep_deadline(self, stored: SessionRecord) -> None:
        deadline = stored.input_deadline
        previous = self._deadlines.get(stored.id)
        if previous == deadline:
            return
        if previous is not None:
            del self._by_deadline[bisect.bisect_left(self._by_deadline, (previous, stored.id))]
            del self._deadlines[stored.id]
        if deadline is not None:
            self._deadlines[stored.id] = deadline
            bisect.insort(self._by_deadline, (deadline, stored.id))

    async def read_events(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Event]:
        """See `SessionStore.read_events`."""
        return [load_event(raw) for raw in _window(self._events, session_id, start, stop)]

    async def read_messages(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Message]:
        """See `SessionStore.read_messages`."""
        return load_messages(_window(self._messages, session_id, start, stop))

    async def due(self, now: float, limit: int = 100) -> list[str]:
        """See `SessionStore.due`."""
        end = bisect.bisect_right(self._by_deadline, now, key=lambda entry: entry[0])
        return [session_id for _, session_id in self._by_deadline[: min(end, limit)]]

    async def waiting(self, limit: int = 1000) -> list[str]:
        """See `SessionStore.waiting`."""
        return [sid for sid, record in self._records.items() if record.status == "waiting"][:limit]

    async def secret(self, name: str) -> bytes:
        """See `SessionStore.secret` (made once per store object)."""
        return self._secrets.setdefault(name, secrets.token_bytes(32))

    async def use_once(self, key: str, *, now: float, expires_at: float) -> bool:
        """See `SessionStore.use_once` (kept by this store object only)."""
        for lapsed in [k for k, until in self._once.items() if until <= now]:
            del self._once[lapsed]
        if key in self._once:
            return False
        self._once[key] = expires_at
        return True

    async def forget_once(self, key: str) -> None:
        """See `SessionStore.forget_once`."""
        self._once.pop(key, None)

    async def aclose(self) -> None:
        """Nothing to release."""


def _window(logs: dict[str, list[str]], session_id: str, start: int, stop: int | None) -> list[str]:
    """Indices, not Python slicing: a negative start or stop means 0, as in the SQLite store."""
    if session_id not in logs:
        raise SessionNotFoundError(session_id)
    return logs[session_id][max(start, 0) : None if stop is None else max(stop, 0)]
