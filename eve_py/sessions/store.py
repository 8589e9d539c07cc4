"""The `SessionStore` protocol: how sessions and their event logs are kept.

Every write is a compare-and-set on the record's `version`, and appends the events of that
write in the same transaction, so the log and the record never disagree and concurrent
writers cannot both win.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from eve_py.events import Event
from eve_py.sessions.record import SessionRecord

__all__ = ("SessionStore",)


@runtime_checkable
class SessionStore(Protocol):
    """Durable storage for sessions. Implementations: `MemorySessionStore`, `SQLiteSessionStore`."""

    async def create(self, record: SessionRecord, events: Sequence[Event]) -> SessionRecord:
        """Store a new session (version 0 → 1) with its first events.

        Raises:
            SessionConflictError: A session with that id exists.
        """
        ...

    async def load(self, session_id: str) -> SessionRecord:
        """Read a session.

        Raises:
            SessionNotFoundError: No such session.
        """
        ...

    async def commit(self, record: SessionRecord, events: Sequence[Event]) -> SessionRecord:
        """Replace the session with `record` if the stored version is still `record.version`.

        The stored record gets `version + 1` and `event_count + len(events)`; `events` are
        appended at indices `record.event_count, ...`. All or nothing.

        Returns:
            The record as stored.

        Raises:
            SessionConflictError: Another write happened since `record` was read.
            SessionNotFoundError: No such session.
        """
        ...

    async def read_events(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Event]:
        """Events with index in `[start, stop)`, oldest first (`stop=None`: to the end).

        Raises:
            SessionNotFoundError: No such session.
        """
        ...

    async def aclose(self) -> None:
        """Release resources (connections); the store is unusable afterwards."""
        ...
