"""Turns run in the server process, as tasks of a task group owned by the app's lifespan.

A request that starts work (an `Operation`: `Send`, `Answer`, `Resume`) hands it to `TurnRunner.start`, which runs it
in the background and returns as soon as the work made its first commit: the caller then
knows the request was accepted (or gets the error it raised before writing anything, such as
a rejected answer), and the work goes on without it, once the caller had its turn to answer.
A slow model in one session never blocks another session, and the HTTP response does not wait
for the model.

The runner adds itself to the runtime's listeners (`Runtime.add_listener`): each committed write
(its session, where its events landed in the log, the events) is handed to the `Hub`, which wakes
that session's stream readers, and a running tool's reports go to the hub's live readers as they
happen. The request learns that its work is durable through the `acknowledge` callback its
operation hands the session (`Session.send(acknowledge=...)`): the harness calls it once, right
after the write that makes the work's effect durable, with the events written so far.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup, TaskStatus

from eve_py.errors import ApiError, SessionConflictError, SessionStateError
from eve_py.harness import Committed, Runtime, Session
from eve_py.protocol import Event
from eve_py.server._hub import Hub
from eve_py.server._operations import Expire, Operation

__all__ = ("Started", "TurnRunner")

_log = logging.getLogger("eve_py.server")


@dataclass(frozen=True)
class Started:
    """What a request's work committed first: the events, and the log index of the first one."""

    events: list[Event]
    start_index: int | None
    """None when the work committed nothing."""


class _Acknowledgement:
    """Tells the request its work is durable (`Session`'s `acknowledge`), once."""

    __slots__ = ("task_status",)

    def __init__(self, task_status: TaskStatus[Started] | None) -> None:
        self.task_status = task_status

    @property
    def pending(self) -> bool:
        """The request still waits (nothing durable yet)."""
        return self.task_status is not None

    async def __call__(self, committed: Committed) -> None:
        self.report(Started(list(committed.events), committed.first_index))
        # The request has its answer: let it go out before the turn goes on (a `202` needs only
        # this write; the turn's next step would otherwise run first, up to its next wait).
        await anyio.lowlevel.cancel_shielded_checkpoint()

    def report(self, started: Started) -> None:
        status, self.task_status = self.task_status, None
        if status is not None:
            status.started(started)


class TurnRunner:
    """Runs session work in the background and routes the runtime's events to the hub.

    Args:
        runtime: The runtime; the runner adds its listeners to it (`Runtime.add_listener`).
        hub: Where stream readers wait.
    """

    def __init__(self, runtime: Runtime, hub: Hub) -> None:
        self.runtime = runtime
        self.hub = hub
        runtime.add_listener(self._listen, self.hub.live)
        self._busy: dict[str, int] = {}
        self._since: dict[str, int] = {}
        """By busy session: the log index of the first commit its work here made (see `written_from`)."""
        self._group: TaskGroup | None = None
        self._running = 0
        self._drained = anyio.Event()

    def busy(self, session_id: str) -> bool:
        """Whether work for the session is running in this process."""
        return session_id in self._busy

    def written_from(self, session_id: str) -> int | None:
        """The log index from which this process wrote the session's log while its work runs here; None when idle.

        Every event this process committed from there on was handed to the hub. Another process
        may write once a commit here parks or ends the turn (the lease is freed while the work
        still winds down): a stream served from the hub then sees a gap (`Subscriber.take`) and
        reads the store again at its next recheck, so it is late (up to `recheck_s`), never wrong.
        """
        return self._since.get(session_id)

    @property
    def active(self) -> int:
        """How many works are running."""
        return self._running

    @asynccontextmanager
    async def running(self, *, grace_s: float) -> AsyncIterator[None]:
        """Own the task group for the app's lifetime.

        On exit, running turns get `grace_s` seconds to finish; the rest are cancelled (each
        records `turn.cancelled`, and a parked turn stays parked).
        """
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                self._group = None
                with anyio.CancelScope(shield=True):
                    with anyio.move_on_after(grace_s):
                        while self._running:
                            await self._drained.wait()
                    group.cancel_scope.cancel()
                    self.hub.wake_all()

    async def start(self, session: Session, work: Operation) -> Started:
        """Run `work` on the session in the background; return once its effect is durable.

        That is the write `acknowledge` names (an answer's, a message's `turn.started`, the first
        of anything else), or the work's end.

        Returns:
            The events written up to then and the log index of the first (none if nothing was written).

        Raises:
            EveError: Whatever the work raised before its first commit (nothing was written).
            ApiError: 503 when the server is not running (lifespan not started or shutting down).
        """
        group = self._group
        if group is None:
            raise ApiError(
                "The server is not accepting work (it is starting or shutting down).", status=503, code="unavailable"
            )
        started: Started = await group.start(self._run, session, work)
        return started

    async def cancel(self, session_id: str, turn_id: str | None = None) -> bool:
        """Cancel the session's running turn in this process, if it has one (and it is `turn_id`)."""
        if not self.busy(session_id):
            return False
        session = await self.runtime.get_session(session_id)
        turn = session.record.turn
        if turn_id is not None and (turn is None or turn.turn_id != turn_id):
            return False
        return await session.cancel()

    async def expire(self, session_id: str) -> None:
        """Expire the session's requests past their deadline as background work (the expiry sweep's way here).

        Returns once the expiry is written; the turn goes on in the background, as after an answer.

        Raises:
            SessionConflictError: An answer (or another worker) wrote first.
        """
        await self.start(await self.runtime.get_session(session_id), Expire())

    def spawn(self, session: Session, work: Operation) -> None:
        """Run `work` on the session in the background without waiting for anything.

        The session counts as busy from this call on; errors are logged, never raised.

        Raises:
            ApiError: 503 when the server is not running.
        """
        group = self._group
        if group is None:
            raise ApiError(
                "The server is not accepting work (it is starting or shutting down).", status=503, code="unavailable"
            )
        self._enter(session.id)
        group.start_soon(self._work, session, work, None)

    def _enter(self, session_id: str) -> None:
        self._busy[session_id] = self._busy.get(session_id, 0) + 1
        self._running += 1

    async def _run(self, session: Session, work: Operation, *, task_status: TaskStatus[Started]) -> None:
        self._enter(session.id)
        await self._work(session, work, task_status)

    async def _work(self, session: Session, work: Operation, task_status: TaskStatus[Started] | None) -> None:
        session_id = session.id
        # The session acknowledges whatever it wrote, at the latest when the work ends: a request
        # still waiting after an error was not acknowledged because nothing was written.
        acknowledgement = _Acknowledgement(task_status)
        try:
            try:
                await work(session, acknowledgement)
            except (SessionConflictError, SessionStateError):
                if acknowledgement.pending:
                    raise
                # Background recovery that another worker won: expected, nothing to fix.
                _log.info("session %s is being run by another worker", session_id)
            except Exception:
                if acknowledgement.pending:
                    raise  # nothing was written: the request gets the error
                _log.exception("the %s of session %s failed after it was accepted", work.name, session_id)
            acknowledgement.report(Started([], None))  # it wrote nothing, and refused nothing
        finally:
            count = self._busy[session_id] - 1
            if count:
                self._busy[session_id] = count
            else:
                del self._busy[session_id]
                self._since.pop(session_id, None)
            self._running -= 1
            if not self._running:
                self._drained.set()
                self._drained = anyio.Event()
            self.hub.settled(session_id)

    def _listen(self, committed: Committed) -> None:
        if committed.session_id in self._busy:
            self._since.setdefault(committed.session_id, committed.first_index)
        self.hub.publish(committed.session_id, committed.events, committed.first_index)
