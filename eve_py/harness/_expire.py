"""Requests that expire: a session's due requests ended as `expired` in one write, and the sweep that finds them.

One session's expiry is `TurnUnit.expire` (`eve_py.harness._unit`): the decision is
`parking._expire.expire_due` (pure); the unit writes it with its `input.resolved` event (outcome
`expired`), after which the session's turn goes on as after an answer (`Session.expire`).
`Sweeper` finds the sessions to expire without reading any record: every store keeps each waiting
session's first deadline beside it, indexed (`SessionStore.due`). A running server or worker
sweeps every `interval_s` (and at once when it starts, so deadlines that passed while no process
ran are met first); a process that does not sweep expires a session when it opens it (`Runtime.get_session`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

import anyio
from anyio.abc import TaskStatus

from eve_py.errors import SessionConflictError
from eve_py.sessions import SessionStore

__all__ = ("Sweeper",)

_log = logging.getLogger("eve_py")


class Sweeper:
    """Expires every session whose request deadline passed, in batches, a few sessions at a time.

    Args:
        store: Where sessions live (`SessionStore.due` finds them).
        expire_one: Expires one session by id and continues its turn (`Session.expire`, or the
            server's runner doing the same as background work). Conflicts are expected (another
            worker's sweep, an answer that came first) and ignored.
        interval_s: How often the sweep looks, in seconds.
        batch: The most sessions one look takes (the next look takes the rest at once).
        concurrency: How many sessions are expired at the same time.
    """

    def __init__(
        self,
        store: SessionStore,
        expire_one: Callable[[str], Awaitable[object]],
        *,
        interval_s: float = 0.5,
        batch: int = 100,
        concurrency: int = 16,
    ) -> None:
        self.store = store
        self.expire_one = expire_one
        self.interval_s = interval_s
        self.batch = batch
        self.concurrency = concurrency
        self.running = False
        """True while `run` loops: sessions then leave expiring to the sweep."""
        self._wake = anyio.Event()

    def poke(self) -> None:
        """Look now instead of at the next interval (an answer found a request past its deadline)."""
        self._wake.set()

    async def sweep(self) -> int:
        """One look: expire the sessions due now (at most `batch`), `concurrency` at a time.

        Returns:
            How many due sessions were found.
        """
        due = await self.store.due(time.time(), self.batch)
        limiter = anyio.CapacityLimiter(self.concurrency)

        async def one(session_id: str) -> None:
            async with limiter:
                try:
                    await self.expire_one(session_id)
                except SessionConflictError:
                    pass  # answered, or expired by another worker, in between: theirs stands
                except Exception:  # one session's trouble must not stop the others' deadlines
                    _log.exception("could not expire the requests of session %s", session_id)

        async with anyio.create_task_group() as group:
            for session_id in due:
                group.start_soon(one, session_id)
        return len(due)

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sweep until cancelled: once at once, then every `interval_s` (a full batch: again at once)."""
        self.running = True
        task_status.started()
        try:
            while True:
                try:
                    found = await self.sweep()
                except Exception:  # a store outage: the next look tries again
                    _log.exception("the expiry sweep failed; trying again in %.1f s", self.interval_s)
                    found = 0
                if found >= self.batch:
                    continue
                with anyio.move_on_after(self.interval_s):
                    await self._wake.wait()
                self._wake = anyio.Event()
        finally:
            self.running = False
