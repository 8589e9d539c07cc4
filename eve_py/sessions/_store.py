"""The `SessionStore` protocol: how sessions, their conversations and their event logs are kept.

A session is a small mutable record plus two append-only logs: messages (the conversation) and
events. Every write is a compare-and-set on the record's `version` that appends that write's
messages and events in the same transaction, so the logs and the record never disagree,
concurrent writers cannot both win, and nothing written is ever rewritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from eve_py.protocol import Event
from eve_py.protocol.messages import Message
from eve_py.sessions._record import SessionRecord

__all__ = ("SessionStore",)


@runtime_checkable
class SessionStore(Protocol):
    """Durable storage for sessions.

    Implementations: `MemorySessionStore`, `SQLiteSessionStore`, `PostgresSessionStore`.
    """

    async def create(self, record: SessionRecord, events: Sequence[Event], *, durable: bool = True) -> SessionRecord:
        """Store a new session (version 0 → 1) with its first events.

        Args:
            durable: As `commit`'s: False lets the write be synced with the session's next
                durable write (a session nobody was told about may be lost with the process).

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

    async def commit(
        self,
        record: SessionRecord,
        events: Sequence[Event],
        messages: Sequence[Message] = (),
        *,
        durable: bool = True,
    ) -> SessionRecord:
        """Replace the session's record with `record` if the stored version is still `record.version`.

        The stored record gets `version + 1`, `event_count + len(events)` and `message_count +
        len(messages)`; `events` are appended at indices `record.event_count, ...` and
        `messages` at `record.message_count, ...`. All or nothing.

        Writes are kept in the order they were committed: a write is never on disk without
        every write committed before it.

        Args:
            durable: True: the write is on disk (it survives a power loss) when this returns, as
                far as the store's settings promise. False: it may be synced later, with the next
                durable write; a store may treat every write as durable.

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

    async def read_messages(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Message]:
        """Messages with index in `[start, stop)`, oldest first (`stop=None`: to the end).

        Raises:
            SessionNotFoundError: No such session.
        """
        ...

    async def due(self, now: float, limit: int = 100) -> list[str]:
        """Sessions waiting on a request whose deadline (`SessionRecord.input_deadline`) is `now` or earlier.

        Stores keep each waiting session's deadline beside its record, indexed, so this reads no record.

        Args:
            now: Unix time, seconds.
            limit: The most ids returned.

        Returns:
            Their ids, the earliest deadline first.
        """
        ...

    async def waiting(self, limit: int = 1000) -> list[str]:
        """Ids of sessions waiting on input requests (status `waiting`), oldest first, at most `limit`."""
        ...

    async def secret(self, name: str) -> bytes:
        """A random 32-byte value kept in the store under `name`.

        The first call for a name makes it; every later call, from any process on the store,
        returns the same bytes (what answer links are signed with when `EVE_LINK_SECRET` is unset).
        """
        ...

    async def use_once(self, key: str, *, now: float, expires_at: float) -> bool:
        """Record `key` as used until `expires_at`; whether this is its first use.

        From any process on the store, one caller gets True for a key; every other caller gets
        False until `expires_at` has passed (records that lapsed are deleted as calls come).
        What makes a sealed MCP request state answer at most once, on every worker.

        Args:
            key: Any text (a random nonce, with a prefix naming its use).
            now: Unix time, seconds: records whose `expires_at` is this or earlier have lapsed.
            expires_at: Unix time, seconds, when this key's record lapses.
        """
        ...

    async def forget_once(self, key: str) -> None:
        """Drop `key`'s record (if any): its next `use_once` is a first use again.

        For a caller that recorded a key and then could not do what it stood for (the HTTP
        server's idempotency keys, when the request they came with is refused).
        """
        ...

    async def aclose(self) -> None:
        """Release resources (connections); the store is unusable afterwards."""
        ...
