"""Following the other server processes on a shared store: their commits and cancel requests.

On a store with a `SessionFeed` (PostgreSQL), every server process listens for the store's
notices for as long as it serves: a commit by any process wakes this process's stream readers
of that session at once (no polling lag), and a cancel request sent to any process reaches the
one running the turn. A lost listening connection is re-established; readers are woken then,
since notices sent meanwhile are lost (they re-read the store, which is the truth).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio
from anyio.abc import TaskStatus

from eve_py.server._hub import Hub
from eve_py.server._turns import TurnRunner
from eve_py.sessions._feed import SessionFeed

__all__ = ("follow_feed",)

_log = logging.getLogger("eve_py.server")
_RETRY_S = 1.0
_MAX_RETRY_S = 10.0


async def follow_feed(
    feed: SessionFeed,
    hub: Hub,
    runner: TurnRunner,
    *,
    retry_s: float = _RETRY_S,
    max_retry_s: float = _MAX_RETRY_S,
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Route the feed's notices until cancelled: events wake readers, cancels stop turns running here.

    Reports started once the first listening connection is in place (no commit after that is missed).
    A lost connection is tried again after `retry_s` seconds, the wait doubling with each failed
    attempt up to `max_retry_s`. An outage is logged once, with its cause, when it starts (a
    warning) and once when it ends (info), not at every failed attempt.
    """
    started = False
    failed = 0
    while True:
        try:
            async with feed.notices() as notices:
                if not started:
                    started = True
                    task_status.started()
                else:
                    hub.wake_all()  # notices were lost while reconnecting
                    _log.info("listening to the store's notices again (%d attempt(s) failed)", failed)
                failed = 0
                async for notice in notices:
                    if notice.kind == "events":
                        hub.wake(notice.session_id)
                    elif runner.busy(notice.session_id):
                        await runner.cancel(notice.session_id)
        except Exception as error:
            if not started:
                raise
            failed += 1
            if failed == 1:
                _log.warning(
                    "lost the store's notices; trying again, waiting %g s and up to %g s between attempts",
                    retry_s,
                    max_retry_s,
                    exc_info=True,
                )
            else:
                _log.debug("still no store notices after %d attempts: %s", failed, error)
        await sleep(min(retry_s * 2 ** max(failed - 1, 0), max_retry_s))
