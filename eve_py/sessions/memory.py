"""`MemorySessionStore`: the `SessionStore` for tests and notebooks; lost when the process ends."""

from __future__ import annotations

from collections.abc import Sequence

from eve_py.errors import SessionConflictError, SessionNotFoundError
from eve_py.events import Event, dump_event, load_event
from eve_py.sessions.record import SessionRecord

__all__ = ("MemorySessionStore",)


class MemorySessionStore:
    """Keeps sessions as serialized JSON in a dict, so callers never share mutable state with it."""

    def __init__(self) -> None:
        self._records: dict[str, str] = {}
        self._events: dict[str, list[str]] = {}

    async def create(self, record: SessionRecord, events: Sequence[Event]) -> SessionRecord:
        """See `SessionStore.create`."""
        if record.id in self._records:
            raise SessionConflictError(f"A session with id {record.id!r} already exists.")
        stored = record.model_copy(update={"version": 1, "event_count": len(events)})
        self._records[record.id] = stored.model_dump_json(by_alias=True)
        self._events[record.id] = [dump_event(event) for event in events]
        return stored

    async def load(self, session_id: str) -> SessionRecord:
        """See `SessionStore.load`."""
        try:
            raw = self._records[session_id]
        except KeyError:
            raise SessionNotFoundError(session_id) from None
        return SessionRecord.model_validate_json(raw)

    async def commit(self, record: SessionRecord, events: Sequence[Event]) -> SessionRecord:
        """See `SessionStore.commit`. Atomic because nothing here awaits between check and write."""
        current = await self.load(record.id)
        if current.version != record.version:
            raise SessionConflictError(
                f"Session {record.id!r} was changed by another writer (version {current.version}, "
                f"this write was based on {record.version}); nothing was written."
            )
        stored = record.model_copy(
            update={"version": record.version + 1, "event_count": record.event_count + len(events)}
        )
        self._records[record.id] = stored.model_dump_json(by_alias=True)
        self._events[record.id].extend(dump_event(event) for event in events)
        return stored

    async def read_events(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Event]:
        """See `SessionStore.read_events`."""
        if session_id not in self._events:
            raise SessionNotFoundError(session_id)
        # Indices, not Python slicing: a negative start or stop means 0, as in the SQLite store.
        window = self._events[session_id][max(start, 0) : None if stop is None else max(stop, 0)]
        return [load_event(raw) for raw in window]

    async def aclose(self) -> None:
        """Nothing to release."""
