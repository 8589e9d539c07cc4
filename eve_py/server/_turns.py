"""Turns run in the server process, as tasks of a task group owned by the app's lifespan.

A request that starts work (an `Operation`: `Send`, `Answer`, `Resume`) hands it to `TurnRunner.start`, which runs it
in the background and returns as soon as the work made its first commit: the caller then
knows the request was accepted (or gets the error it raised before writing anything, such as
a rejected answer), and the work goes on without it, once the caller had its turn to answer.
A slow model in one session never blocks another session, and the HTTP response does not wait
for the model.

The runner installs itself as the runtime's `on_event` listener: each committed write (its
session, where its events landed in the log, the events) is handed to the `Hub`, which wakes
that session's stream readers; and as its `on_live` listener: a running tool's reports go to
the hub's live readers as they happen. A context variable set by the task that runs a request's work
tells which request a write answers, so the request learns its first events.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup, TaskStatus

from eve_py.errors import ApiError, SessionConflictError, SessionStateError
from eve_py.harness._commit import Committed, EventListener
from eve_py.harness._park import LiveListener
from eve_py.harness._runtime import Runtime
from eve_py.harness._session import Session
from eve_py.protocol import Event, TurnStarted
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


@dataclass
class _Work:
    """The task running one request's work; `report` tells the request it was accepted."""

    session_id: str
    task_status: TaskStatus[Started] | None = None
    until_turn: bool = False
    """Report once the work committed a `turn.started` (a message whose turn starts after its
    first commit, which dismisses a parked batch), not at its first commit."""
    events: list[Event] = field(default_factory=list)
    first_index: int | None = None

    def report(self, committed: Committed | None) -> None:
        if self.task_status is None:
            return
        if committed is not None:
            if self.first_index is None:
                self.first_index = committed.first_index
            self.events += committed.events
            if self.until_turn and not any(isinstance(e, TurnStarted) for e in committed.events):
                return
        status, self.task_status = self.task_status, None
        status.started(Started(self.events, self.first_index))


_current: ContextVar[_Work | None] = ContextVar("eve_py_server_work", default=None)


class TurnRunner:
    """Runs session work in the background and routes the runtime's events to the hub.

    Args:
        runtime: The runtime; its `on_event` and `on_live` are replaced by the runner's listeners,
            which call the listeners it had before.
        hub: Where stream readers wait.
    """

    def __init__(self, runtime: Runtime, hub: Hub) -> None:
        self.runtime = runtime
        self.hub = hub
        self._previous: EventListener | None = runtime.on_event
        runtime.on_event = self._listen
        self._previous_live: LiveListener | None = runtime.on_live
        runtime.on_live = self._live
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

    @contextmanager
    def attribute(self, session_id: str) -> Iterator[None]:
        """Route events committed inside this block (in this task) to `session_id`'s readers."""
        token = _current.set(_Work(session_id))
        try:
            yield
        finally:
            _current.reset(token)

    async def start(self, session: Session, work: Operation, *, until_turn: bool = False) -> Started:
        """Run `work` on the session in the background; return once it committed its first batch.

        With `until_turn`, return once it committed the `turn.started` of a turn (or ended).

        Returns:
            The first committed batch and its index in the log (none if the work committed nothing).

        Raises:
            EveError: Whatever the work raised before its first commit (nothing was written).
            ApiError: 503 when the server is not running (lifespan not started or shutting down).
        """
        group = self._group
        if group is None:
            raise ApiError(
                "The server is not accepting work (it is starting or shutting down).", status=503, code="unavailable"
            )
        started: Started = await group.start(functools.partial(self._run, until_turn=until_turn), session, work)
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

    async def _run(
        self, session: Session, work: Operation, *, until_turn: bool, task_status: TaskStatus[Started]
    ) -> None:
        self._enter(session.id)
        await self._work(session, work, task_status, until_turn=until_turn)

    async def _work(
        self,
        session: Session,
        work: Operation,
        task_status: TaskStatus[Started] | None,
        *,
        until_turn: bool = False,
    ) -> None:
        session_id = session.id
        current = _Work(session_id, task_status, until_turn)
        _current.set(current)  # this task's own context
        try:
            await work(session)
        except (SessionConflictError, SessionStateError):
            if current.task_status is not None and not current.events:
                raise
            current.report(None)
            # Background recovery that another worker won: expected, nothing to fix.
            _log.info("session %s is being run by another worker", session_id)
        except Exception:
            if current.task_status is not None and not current.events:
                raise  # nothing was written: the request gets the error
            current.report(None)  # accepted: what it wrote stands
            _log.exception("the %s of session %s failed after it was accepted", work.name, session_id)
        else:
            current.report(None)
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

    def _live(self, session_id: str, event: Event) -> None:
        self.hub.live(session_id, event)
        if self._previous_live is not None:
            self._previous_live(session_id, event)

    async def _listen(self, committed: Committed) -> None:
        if committed.session_id in self._busy:
            self._since.setdefault(committed.session_id, committed.first_index)
        self.hub.publish(committed.session_id, committed.events, committed.first_index)
        current = _current.get()
        if current is not None and current.session_id == committed.session_id:
            waiting = current.task_status is not None
            current.report(committed)
            if waiting and current.task_status is None:
                # The request has its answer: let it go out before the turn goes on (a `202` needs
                # only this commit; the turn's next step would otherwise run first, up to its next wait).
                await anyio.lowlevel.cancel_shielded_checkpoint()
        if self._previous is not None:
            outcome = self._previous(committed)
            if inspect.isawaitable(outcome):
                await outcome
