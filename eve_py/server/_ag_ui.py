"""AG-UI 1.0 over HTTP: `POST /ag-ui` runs the agent for an AG-UI client (`@ag-ui/client`'s `HttpAgent`, CopilotKit).

```
POST /ag-ui[/{agent}]  RunAgentInput {threadId, runId, messages, tools?, context?, resume?, ...}
             -> 200 text/event-stream: RUN_STARTED, STEP_*, TEXT_MESSAGE_*, TOOL_CALL_*, RUN_FINISHED | RUN_ERROR
GET  /ag-ui[/{agent}]  -> 200 the agent's AG-UI capabilities (human-in-the-loop interrupts, approve with edits)
```

The server serves one agent: `{agent}` is its name (another is a 404). The `threadId` is the
eve-py session: created on its first run, owned by the caller's token like a session made with
`POST /eve/v1/session` (another caller's thread is a 404). A run takes what its input adds to
the stored thread (`eve_py.server._ag_ui_input`): `resume` entries and `ToolMessage`s for open
frontend-tool calls answer open requests (`Answer`), a new user message starts a turn (`Send`,
offering the run's `tools` as client tools), both do both (`AnswerThenSend`); then the run's
stored events stream as AG-UI events (`eve_py.server._ag_ui_events`) until the turn completes,
fails or parks. A parked turn ends the run with the `interrupt` outcome, one interrupt per open
request a person answers; parked on frontend tools only, with a plain success (the client runs
its own tools). An answer that eve-py refuses, or history that contradicts the thread, ends the
run with `RUN_ERROR` and eve-py's error code, and stores nothing. A resume that answers only
some of the open requests keeps the batch open: the run ends with an interrupt per request
still open (AG-UI's own client sends every interrupt's entry; eve-py also takes fewer). A run
with no messages and nothing to do (a client attaching to a stored thread) gets the stored
conversation as `MESSAGES_SNAPSHOT` (`eve_py.server._ag_ui_messages`). A run retried after its
stream broke resends what the thread already took (its message, its resume entries): that
starts nothing, and the run follows the turn still running, one a stopped server left included.
A new message while the thread's turn runs waits for it: the run streams the rest of that turn,
then sends the message.
Authentication, origin and body checks are the session routes' own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from ag_ui.core import (
    AgentCapabilities,
    BaseEvent,
    HumanInTheLoopCapabilities,
    IdentityCapabilities,
    ResumeEntry,
    RunAgentInput,
    RunStartedEvent,
    ToolsCapabilities,
    TransportCapabilities,
)
from ag_ui.core.version import PROTOCOL_VERSION
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from eve_py._camel import describe_validation_error
from eve_py._version import version
from eve_py.errors import ApiError, EveError
from eve_py.protocol import (
    ActionLog,
    ActionProgress,
    Event,
    InputRequested,
    TurnCancelled,
    TurnCompleted,
    TurnFailed,
    TurnWaiting,
    new_id,
)
from eve_py.protocol.pending import PendingStep
from eve_py.protocol.requests import InputRequest, InputResponse
from eve_py.protocol.turns import ClientTool
from eve_py.server._ag_ui_events import RunProjection, response_of
from eve_py.server._ag_ui_input import client_tools_of, read_messages
from eve_py.server._ag_ui_messages import snapshot_of
from eve_py.server._bodies import bad_request, error_body, error_response, error_status
from eve_py.server._hub import Subscriber
from eve_py.server._operations import Answer, AnswerThenSend, Operation, Send
from eve_py.server._routes import Api
from eve_py.server._runs import KEEPALIVE, SSE_HEADERS, check_thread_id, follow_run, open_thread

__all__ = ("AgUi",)

_TURN_ENDS = (TurnCompleted, TurnWaiting, TurnFailed, TurnCancelled)


def _sse(event: BaseEvent) -> bytes:
    return b"data: " + event.model_dump_json(by_alias=True).encode("utf-8") + b"\n\n"


def _context(body: RunAgentInput) -> dict[str, Any] | None:
    """The run's AG-UI context as eve-py's client context: description -> value."""
    return {item.description: item.value for item in body.context} if body.context else None


@dataclass(frozen=True)
class _Run:
    """A run's input, and its frontend tools as client tools (checked)."""

    body: RunAgentInput
    tools: list[ClientTool] | None


@dataclass
class _Begun:
    """Where a run's events start, whether it answered only part of the batch, and whether its work runs here."""

    start: int | None
    partial: bool = False
    own: bool = True
    """The run started the work (False: it follows a turn a stopped server left running)."""
    blocked: bool = False
    """The run's message waits for the thread's running turn to end: follow that first, then begin again."""


class AgUi:
    """The AG-UI route of one app.

    Args:
        api: The app's session routes (their runtime, caller checks, owners and runner).
    """

    def __init__(self, api: Api) -> None:
        self.api = api

    def routes(self) -> list[Route]:
        """`POST /ag-ui` and `GET /ag-ui`, and the same at `/ag-ui/{agent}` (the app's agent name)."""
        return [
            Route(path, endpoint, methods=[method])
            for path in ("/ag-ui", "/ag-ui/{agent}")
            for endpoint, method in ((self.run, "POST"), (self.capabilities, "GET"))
        ]

    def _agent(self, request: Request) -> None:
        """Check the agent a `/ag-ui/{agent}` URL names: this app's (the server serves one).

        Raises:
            ApiError: 404 `agent_not_found` naming the agent this server serves.
        """
        named = request.path_params.get("agent")
        served = self.api.runtime.agent.name
        if named is not None and named != served:
            raise ApiError(
                f"No agent {named!r} here: this server serves one agent, {served!r} (POST /ag-ui or /ag-ui/{served}).",
                status=404,
                code="agent_not_found",
            )

    async def capabilities(self, request: Request) -> Response:
        """`GET /ag-ui`: what this agent supports, as AG-UI's `AgentCapabilities` (needs the token).

        Human-in-the-loop interrupts and approvals with edits, frontend tools (`tools.clientProvided`),
        a streamed but not resumable transport, and the app's name as the agent's identity.
        """
        try:
            self.api._principal(request)
            self._agent(request)
        except EveError as exc:
            return error_response(exc)
        capabilities = AgentCapabilities(
            identity=IdentityCapabilities(name=self.api.runtime.agent.name, type="eve-py", version=version()),
            # No replay of a broken stream: the run is sent again and follows the turn (`_nothing_new`).
            transport=TransportCapabilities(streaming=True, resumable=False),
            tools=ToolsCapabilities(supported=True, parallel_calls=True, client_provided=True),
            human_in_the_loop=HumanInTheLoopCapabilities(
                supported=True, approvals=True, interrupts=True, approve_with_edits=True
            ),
        )
        return JSONResponse(capabilities.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def run(self, request: Request) -> Response:
        """`POST /ag-ui`: one AG-UI run on the thread's session, streamed as server-sent events."""
        try:
            principal = self.api._principal(request)
            self._agent(request)
            body = _parse(await self.api._body(request))
            run = _Run(body, client_tools_of(body.tools or [], self.api.runtime.agent.tools))
            session_id = await open_thread(self.api, body.thread_id, principal)
            by = self.api._caller(request)[1]
        except EveError as exc:
            return error_response(exc)
        subscriber = self.api.hub.subscribe(session_id, live=True)  # before the work starts: no commit is missed
        headers = SSE_HEADERS | {"x-eve-session-id": session_id}
        stream = self._stream(session_id, run, by, subscriber)
        return StreamingResponse(stream, media_type="text/event-stream", headers=headers)

    async def _stream(self, session_id: str, run: _Run, by: str, subscriber: Subscriber) -> AsyncIterator[bytes]:
        body = run.body
        projection = RunProjection(session_id, body.run_id)
        try:
            yield _sse(RunStartedEvent(thread_id=session_id, run_id=body.run_id, protocol_version=PROTOCOL_VERSION))
            try:
                begun = await self._begin(session_id, run, by, projection)
                while begun.blocked and not projection.ended:
                    async for chunk in self._events(session_id, begun, projection, subscriber):
                        yield chunk
                    begun = await self._begin(session_id, run, by, projection)
            except EveError as exc:
                _, code = error_status(exc)
                for event in projection.error(str(error_body(exc)["error"]), code):
                    yield _sse(event)
                return
            if begun.start is None and not body.messages:
                # A client attaching to a thread it has no messages of (a new page on a stored thread).
                session = await self.api.runtime.get_session(session_id)
                reports = [e for e in await session.events() if isinstance(e, ActionProgress | ActionLog)]
                yield _sse(snapshot_of(await session.messages(), reports))
            async for chunk in self._follow(session_id, begun, projection, subscriber):
                yield chunk
        finally:
            self.api.hub.unsubscribe(subscriber)

    async def _begin(self, session_id: str, run: _Run, by: str, projection: RunProjection) -> _Begun:
        """Start the run's work: answer what it answers, send its new user message, or both (answers first)."""
        body = run.body
        session = await self.api.runtime.get_session(session_id)
        record = session.record
        stored = await session.messages() if body.messages else []
        # A parked step stays pending while its answers settle: a stopped server can leave it `running`.
        pending = record.pending
        resumed = {entry.interrupt_id: entry.payload for entry in body.resume or []}
        added = read_messages(body.messages, stored, pending, resumed)
        open_requests = {r.request_id: r for r in session.input_requests}
        answers = _new_answers(body.resume or [], pending)
        answers += added.answers
        projection.requests.update(open_requests)
        projection.answered_here.update(a.request_id for a in added.answers)
        send = None
        if added.message is not None:
            send = Send([added.message], _context(body), None, new_id("dlv"), client_tools=run.tools)
            projection.until_turn = record.status in ("waiting", "running") or bool(answers)
        if not answers:
            if send is None:
                return await self._nothing_new(session_id)
            if record.status == "running":
                # Here, on another worker, or left by a stopped server (finished here once its
                # lease expires): the run streams the rest of that turn, then sends its message.
                return _Begun(record.event_count, own=False, blocked=True)
            started = await self.api.runner.start(session, send)
            return _Begun(started.start_index)
        partial = bool(open_requests.keys() - {r.request_id for r in answers})
        answer = Answer(answers, _context(body), None, by, settle=send is not None or not partial)
        work: Operation = answer if send is None else AnswerThenSend(answer, send)
        started = await self.api.runner.start(session, work)
        return _Begun(started.start_index, partial and send is None)

    async def _nothing_new(self, session_id: str) -> _Begun:
        """A run that adds nothing: it reports where the thread stands, or follows a turn still running.

        A turn a stopped server left running (a restart mid-turn) is finished here once its lease
        expires (`Api._recover`), and the run streams the rest of it.
        """
        record = await self.api.runtime.store.load(session_id)
        if record.status != "running":
            return _Begun(None)
        await self.api._recover(record)
        return _Begun(record.event_count, own=False)

    async def _follow(
        self, session_id: str, begun: _Begun, projection: RunProjection, subscriber: Subscriber
    ) -> AsyncIterator[bytes]:
        """The run's stored events as AG-UI events, until the turn completes, fails or parks."""
        if begun.start is not None:
            async for chunk in self._events(session_id, begun, projection, subscriber):
                yield chunk
        if not projection.ended:
            for made in await self._settled(session_id, projection):
                yield _sse(made)

    async def _events(
        self, session_id: str, begun: _Begun, projection: RunProjection, subscriber: Subscriber
    ) -> AsyncIterator[bytes]:
        """The stored events from `begun.start` as AG-UI events, until the run ends or its work does.

        A `blocked` run reads until the turn it waits for ends (its end is not the run's).
        """
        assert begun.start is not None
        batch: list[InputRequest] = []
        idle = ended = False

        def done() -> bool:
            nonlocal idle
            if begun.partial or projection.ended or idle or ended:
                return True  # a partial answer writes once and leaves the batch parked
            idle = begun.own and not self.api.runner.busy(session_id)  # its work ended: read once more
            return False

        try:
            async for events in follow_run(self.api, session_id, begun.start, subscriber, done=done):
                if events is None:
                    yield KEEPALIVE
                    continue
                for event in events:
                    if isinstance(event, InputRequested):
                        batch = event.data.input_requests()
                    ended = ended or (begun.blocked and isinstance(event, _TURN_ENDS))
                    for made in await self._project(session_id, event, batch, projection):
                        yield _sse(made)
        except ApiError:  # the server shuts down
            for made in projection.error("The server is shutting down; run again.", "unavailable"):
                yield _sse(made)

    async def _project(
        self, session_id: str, event: Event, batch: list[InputRequest], projection: RunProjection
    ) -> list[BaseEvent]:
        """One stored event as AG-UI events; the run's turn parking ends the run (`_waiting`)."""
        if isinstance(event, TurnWaiting) and not projection.until_turn and not projection.ended:
            return await self._waiting(session_id, batch, projection)
        return projection.events(event)

    async def _waiting(self, session_id: str, batch: list[InputRequest], projection: RunProjection) -> list[BaseEvent]:
        """How a run whose turn parked ends: interrupts for what a person answers, else (frontend tools only) a success.

        The open requests are the session's (the parked batch's when another client answered them meanwhile).
        """
        session = await self.api.runtime.get_session(session_id)
        requests = session.input_requests or batch
        turn = session.record.turn
        frontend = {tool.name for tool in (turn.client_tools or [])} if turn is not None else set()
        interrupts = [r for r in requests if r.action.tool_name not in frontend]
        return projection.interrupt(interrupts) if interrupts else projection.finish()

    async def _settled(self, session_id: str, projection: RunProjection) -> list[BaseEvent]:
        """How a run that started no turn ends: the open requests as interrupts, else a success."""
        session = await self.api.runtime.get_session(session_id)
        if session.input_requests:
            return await self._waiting(session_id, [], projection)
        return projection.finish()


def _new_answers(resume: Sequence[ResumeEntry], pending: PendingStep | None) -> list[InputResponse]:
    """The resume entries as answers, without those the thread already took as they are.

    A client retrying a run the server never finished (its connection broke, the server
    restarted mid-settle) resends the same entries: those answers stand, and the run follows
    their turn. A different answer to an answered request stays, for `Session.respond` to refuse.
    """
    requests = {r.request_id: r for r in pending.requests} if pending is not None else {}
    taken = pending.answers if pending is not None else {}
    answers = [response_of(entry, requests.get(entry.interrupt_id)) for entry in resume]
    return [answer for answer in answers if taken.get(answer.request_id) != answer]


def _parse(raw: Any) -> RunAgentInput:
    """The body as AG-UI's `RunAgentInput`.

    Raises:
        ApiError: 400 when it is not one, or its `threadId` cannot name a session.
    """
    if not isinstance(raw, dict):
        raise bad_request("Expected a RunAgentInput JSON object.")
    try:
        body = RunAgentInput.model_validate(raw)
    except ValidationError as exc:
        raise bad_request(f"Invalid RunAgentInput: {describe_validation_error(exc, root='(body)')}") from exc
    check_thread_id(body.thread_id, "threadId")
    return body
