"""`ForwardingStore`: a `SessionStore` that passes every call to another, for wrappers to build on.

A wrapper that watches or changes some calls (a test's store that stops at a chosen commit, a
benchmark's byte counter) subclasses it and overrides only those calls.
"""

from __future__ import annotations

from collections.abc import Sequence

from eve_py.protocol import Event
from eve_py.protocol.messages import Message
from eve_py.sessions._record import SessionRecord
from eve_py.sessions._store import SessionStore

__all__ = ("ForwardingStore",)


class ForwardingStore:
    """Passes every `SessionStore` call to `inner` unchanged.

    Args:
        inner: The store underneath (closed by `aclose` too, unless a subclass says otherwise).
    """

    def __init__(self, inner: SessionStore) -> None:
        self.inner = inner

    async def create(self, record: SessionRecord, events: Sequence[Event], *, durable: bool = True) -> SessionRecord:
        """See `SessionStore.create`."""
        return await self.inner.create(record, events, durable=durable)

    async def load(self, session_id: str) -> SessionRecord:
        """See `SessionStore.load`."""
        return await self.inner.load(session_id)

    async def commit(
        self,
        record: SessionRecord,
        events: Sequence[Event],
        messages: Sequence[Message] = (),
        *,
        durable: bool = True,
    ) -> SessionRecord:
        """See `SessionStore.commit`."""
        return await self.inner.commit(record, events, messages, durable=durable)

    async def read_events(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Event]:
        """See `SessionStore.read_events`."""
        return await self.inner.read_events(session_id, start, stop)

    async def read_messages(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Message]:
        """See `SessionStore.read_messages`."""
        return await self.inner.read_messages(session_id, start, stop)

    async def due(self, now: float, limit: int = 100) -> list[str]:
        """See `SessionStore.due`."""
        return await self.inner.due(now, limit)

    async def waiting(self, limit: int = 1000) -> list[str]:
        """See `SessionStore.waiting`."""
        return await self.inner.waiting(limit)

    async def secret(self, name: str) -> bytes:
        """See `SessionStore.secret`."""
        return await self.inner.secret(name)

    async def use_once(self, key: str, *, now: float, expires_at: float) -> bool:
        """See `SessionStore.use_once`."""
        return await self.inner.use_once(key, now=now, expires_at=expires_at)

    async def forget_once(self, key: str) -> None:
        """See `SessionStore.forget_once`."""
        await self.inner.forget_once(key)

    async def aclose(self) -> None:
        """See `SessionStore.aclose`."""
        await self.inner.aclose()
