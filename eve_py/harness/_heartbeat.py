"""`Heartbeat`: a running turn's lease kept alive while its worker is busy, and the checks a takeover passes.

A worker running a turn holds a lease on the session (`SessionRecord.lease`); another worker
takes the turn over only once the lease has expired. Every write of the worker renews it, but
a model step or a tool can take longer than `lease_s` without writing. While a turn runs, its
unit of work's `Heartbeat.beating()` renews the lease every `lease_s / 3` seconds with a write
that changes only the lease (one thread for the whole process schedules the beats; each runs on
its turn's event loop), so a slow step is never taken over while its worker lives, and a worker
that dies (SIGKILL, power loss) stops renewing: its turn can be taken over `lease_s` after its
last beat. A beat that conflicts (the turn was taken over, `resume(force=True)`) stops renewing.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.lowlevel import EventLoopToken

from eve_py.errors import SessionConflictError, SessionStateError
from eve_py.sessions import SessionRecord

__all__ = ("Heartbeat", "check_not_running", "check_takeover")

_log = logging.getLogger("eve_py")


class Heartbeat:
    """Calls `beat` on the caller's event loop every `interval` seconds while `beating()` runs.

    A unit of work (`eve_py.harness._unit.TurnUnit`) owns one; its `beat` renews the unit's lease
    under the unit's own write lock, so a beat and a write never interleave.

    Args:
        beat: Renews the lease (it decides whether there is one to renew).
        interval: Seconds between beats (a third of the lease).
    """

    def __init__(self, beat: Callable[[], Coroutine[Any, Any, None]], interval: float) -> None:
        self._beat = beat
        self.interval = interval

    @asynccontextmanager
    async def beating(self) -> AsyncIterator[None]:
        """Beat every `interval` seconds until the block ends (never with `interval <= 0`)."""
        if self.interval <= 0:
            yield
            return
        _PACEMAKER.add(self, anyio.lowlevel.current_token())
        try:
            yield
        finally:
            _PACEMAKER.remove(self)

    def _beat_from_thread(self, token: EventLoopToken) -> None:
        try:
            anyio.from_thread.run(self._beat, token=token)
        except Exception:  # a lost beat is not the turn's failure; the next write renews too
            _log.warning("could not renew a turn's lease", exc_info=True)


class _Pacemaker:
    """One daemon thread for the process: it sends each running turn's keeper a beat when one is due.

    A task per turn would cost every call a task group (about 0.1 ms each, more than the rest of a
    short step); registering a keeper costs a dict entry. The beat itself runs on the turn's own
    event loop (`anyio.from_thread.run`), so it takes the keeper's lock like any write.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._due: dict[Heartbeat, tuple[EventLoopToken, float]] = {}
        """Registered keepers: their event loop's token, and when their next beat is due (monotonic s)."""
        self._thread: threading.Thread | None = None
        self._wakes_at = float("inf")
        """When the thread wakes up next on its own (monotonic s; infinity: only when told)."""

    def _forget_after_fork(self) -> None:
        """In a forked child: no thread runs there, and the parent's turns are not the child's to renew."""
        self._changed = threading.Condition()
        self._due = {}
        self._thread = None
        self._wakes_at = float("inf")

    def add(self, keeper: Heartbeat, token: EventLoopToken) -> None:
        with self._changed:
            at = time.monotonic() + keeper.interval
            self._due[keeper] = (token, at)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="eve-py lease heartbeat", daemon=True)
                self._thread.start()
            if at < self._wakes_at:  # waking the thread costs the caller a switch: only when it would oversleep
                self._changed.notify()

    def remove(self, keeper: Heartbeat) -> None:
        with self._changed:
            self._due.pop(keeper, None)

    def _next(self) -> list[tuple[Heartbeat, EventLoopToken]]:
        """Wait until at least one beat is due; those beats, their next ones scheduled."""
        with self._changed:
            while True:
                now = time.monotonic()
                due = [(keeper, token) for keeper, (token, at) in self._due.items() if at <= now]
                if due:
                    for keeper, token in due:
                        self._due[keeper] = (token, now + keeper.interval)
                    return due
                self._wakes_at = min((at for _, at in self._due.values()), default=float("inf"))
                self._changed.wait(None if self._wakes_at == float("inf") else self._wakes_at - now)
                self._wakes_at = float("inf")

    def _run(self) -> None:
        while True:
            for keeper, token in self._next():
                keeper._beat_from_thread(token)


_PACEMAKER = _Pacemaker()
# fork() copies only the calling thread: without this a child that forked after a turn ran here
# would think its heartbeat thread alive and never renew a lease, so a slow step could be taken over.
os.register_at_fork(after_in_child=_PACEMAKER._forget_after_fork)


def check_takeover(record: SessionRecord, *, force: bool) -> None:
    """Refuse to take over `record`'s running turn while its worker's lease holds (see `Session.resume`).

    Raises:
        SessionConflictError: Another recovery took the turn over and holds its lease (even with `force`).
        SessionStateError: The running worker's lease holds, and not `force`.
    """
    lease = record.lease
    if lease is None or not record.lease_held():
        return
    left = lease.expires_at - time.time()
    if force and lease.takeover:
        raise SessionConflictError(
            f"Session {record.id!r} was taken over by worker {lease.owner!r}, which is finishing the turn "
            f"(its lease ends in {left:.0f} s); nothing was run here. resume() takes over if that lease expires."
        )
    if not force:
        raise SessionStateError(
            f"Session {record.id!r} is running a turn in worker {lease.owner!r}, whose lease ends in "
            f"{left:.0f} s; resume() takes over once it expires "
            "(or call resume(force=True) if that worker is known to be dead).",
            status=record.status,
        )


def check_not_running(record: SessionRecord) -> None:
    """Refuse a new message while a live worker runs the session's turn (its lease holds).

    Raises:
        SessionStateError: It does.
    """
    if record.lease_held():
        raise SessionStateError(
            f"Session {record.id!r} is running a turn; wait for it, or call resume() if its worker died.",
            status=record.status,
            http_message=f"Session {record.id!r} is running a turn; send again once it ends (its stream "
            "says when). A turn whose worker died is taken over once that worker's lease expires.",
        )
