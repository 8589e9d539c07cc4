"""`LeaseKeeper`: a running turn's lease kept alive by a heartbeat while its worker is busy.

A worker running a turn holds a lease on the session (`SessionRecord.lease`); another worker
takes the turn over only once the lease has expired. Every write of the worker renews it, but
a model step or a tool can take longer than `lease_s` without writing. While a turn runs,
`LeaseKeeper.beating()` renews the lease every `lease_s / 3` seconds with a write that changes
only the lease, so a slow step is never taken over while its worker lives, and a worker that
dies (SIGKILL, power loss) stops renewing: its turn can be taken over `lease_s` after its last
beat.

The keeper wraps the store for one `TurnDriver`. A beat bumps the record's version, so the
driver's next write (based on the version before the beat) would be refused as a conflict: the
keeper knows that the only writes since are its own beats and bases that write on the beat's
version instead. A write of anyone else still conflicts, as it must; a beat that conflicts (the
turn was taken over, `resume(force=True)`) stops the heartbeat.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import anyio

from eve_py.errors import SessionConflictError
from eve_py.events import Event
from eve_py.models.messages import Message
from eve_py.sessions.record import SessionRecord
from eve_py.sessions.store import SessionStore

__all__ = ("LeaseKeeper",)

_log = logging.getLogger("eve_py")


class LeaseKeeper:
    """A `SessionStore` for one turn driver: passes everything through and renews its lease.

    Args:
        store: The store underneath.
        lease_s: The lease's length in seconds; the heartbeat beats every third of it.
    """

    def __init__(self, store: SessionStore, lease_s: float) -> None:
        self._store = store
        self._lease_s = lease_s
        self._lock = anyio.Lock()
        self._held: SessionRecord | None = None
        """The record as last stored by this driver or a beat, while it holds a running lease."""
        self._rebase: tuple[int, int] | None = None
        """(the version the driver last saw, the version the beats since have stored)."""
        self.beats = 0
        """How many beats were written (for tests and logs)."""

    async def create(self, record: SessionRecord, events: Sequence[Event]) -> SessionRecord:
        """See `SessionStore.create`."""
        return await self._store.create(record, events)

    async def load(self, session_id: str) -> SessionRecord:
        """See `SessionStore.load`."""
        return await self._store.load(session_id)

    async def commit(
        self,
        record: SessionRecord,
        events: Sequence[Event],
        messages: Sequence[Message] = (),
        *,
        durable: bool = True,
    ) -> SessionRecord:
        """See `SessionStore.commit`; a write based on the version before this keeper's beats goes on the last one."""
        async with self._lock:
            held, rebase = self._held, self._rebase
            if held is not None and rebase is not None and record.id == held.id and record.version == rebase[0]:
                record = record.model_copy(update={"version": rebase[1]})
            stored = await self._store.commit(record, events, messages, durable=durable)
            self._rebase = None
            self._held = stored if stored.status == "running" and stored.lease is not None else None
            return stored

    async def read_events(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Event]:
        """See `SessionStore.read_events`."""
        return await self._store.read_events(session_id, start, stop)

    async def read_messages(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Message]:
        """See `SessionStore.read_messages`."""
        return await self._store.read_messages(session_id, start, stop)

    async def aclose(self) -> None:
        """Nothing to release: the store underneath is not this keeper's."""

    async def _beat(self) -> None:
        async with self._lock:
            held = self._held
            if held is None or held.lease is None:
                return
            lease = held.lease.model_copy(update={"expires_at": time.time() + self._lease_s})
            try:
                # Only the lease changes: a beat lost to a power loss costs nothing.
                stored = await self._store.commit(held.leased(lease, held.updated_at), [], durable=False)
            except SessionConflictError:
                self._held = None  # taken over: this driver's next write will be refused anyway
                return
            self._rebase = (self._rebase[0] if self._rebase is not None else held.version, stored.version)
            self._held = stored
            self.beats += 1

    @asynccontextmanager
    async def beating(self) -> AsyncIterator[None]:
        """Renew the held lease every `lease_s / 3` seconds until the block ends (never with `lease_s <= 0`)."""
        if self._lease_s <= 0:
            yield
            return

        async def heartbeat() -> None:
            while True:
                await anyio.sleep(self._lease_s / 3)
                try:
                    await self._beat()
                except Exception:  # a lost beat is not the turn's failure; the next write renews too
                    _log.warning("could not renew a turn's lease", exc_info=True)

        failed: BaseException | None = None
        async with anyio.create_task_group() as group:
            group.start_soon(heartbeat)
            try:
                yield
            except anyio.get_cancelled_exc_class():
                raise
            except BaseException as exc:
                failed = exc  # raised as it is below, not wrapped in the task group's ExceptionGroup
            finally:
                group.cancel_scope.cancel()
        if failed is not None:
            raise failed
