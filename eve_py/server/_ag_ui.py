"""AG-UI 1.0 over HTTP: `POST /ag-ui` runs the agent for an AG-UI client (`@ag-ui/client`'s `HttpAgent`, CopilotKit).

```
POST /ag-ui  RunAgentInput {threadId, runId, messages, context?, resume?, ...}
             -> 200 text/event-stream: RUN_STARTED, STEP_*, TEXT_MESSAGE_*, TOOL_CALL_*, RUN_FINISHED | RUN_ERROR
GET  /ag-ui  -> 200 the agent's AG-UI capabilities (human-in-the-loop interrupts, approve with edits)
```

The `threadId` is the eve-py session: created on its first run, owned by the caller's token
like a session made with `POST /eve/v1/session` (another caller's thread is a 404). A run
either sends the input's last message when it is the person's (`Send`), or, with `resume`
entries, answers the open requests they name (`Answer`, through `TurnRunner.start`), then
streams the run's stored events as AG-UI events (`eve_py.server._ag_ui_events`) until the turn
completes, fails or parks. A parked turn ends the run with the `interrupt` outcome. An answer
that eve-py refuses (unknown request, a payload that does not fit, a second answer) ends the
run with `RUN_ERROR` and eve-py's error code, and stores nothing. A resume that answers only
some of the open requests keeps the batch open: the run ends with an interrupt per request
still open (AG-UI's own client sends every interrupt's entry; eve-py also takes fewer). A run
with no messages and nothing to do (a client attaching to a stored thread) gets the stored
conversation as `MESSAGES_SNAPSHOT` (`eve_py.server._ag_ui_messages`).
Authentication, origin and body checks are the session routes' own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ag_ui.core import (
    AgentCapabilities,
    BaseEvent,
    HumanInTheLoopCapabilities,
    RunAgentInput,
    RunStartedEvent,
    UserMessage,
)
from ag_ui.core.version import PROTOCOL_VERSION
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from eve_py._camel import describe_validation_error
from eve_py.errors import ApiError, EveError
from eve_py.protocol import InputRequested, TurnWaiting, new_id
from eve_py.protocol.requests import InputRequest
from eve_py.server._ag_ui_events import RunProjection, response_of
from eve_py.server._ag_ui_messages import snapshot_of
from eve_py.server._bodies import bad_request, error_body, error_response, error_status
from eve_py.server._hub import Subscriber
from eve_py.server._operations import Answer, Operation, Send
from eve_py.server._routes import Api
from eve_py.server._runs import KEEPALIVE, SSE_HEADERS, check_thread_id, follow_run, open_thread

__all__ = ("AgUi",)


def _sse(event: BaseEvent) -> bytes:
    return b"data: " + event.model_dump_json(by_alias=True).encode("utf-8") + b"\n\n"


def _text(message: UserMessage) -> str:
    """A user message's text (its text parts, joined, for a multimodal one)."""
    if isinstance(message.content, str):
        return message.content
    return "\n".join(text for part in message.content if isinstance(text := getattr(part, "text", None), str))


def _context(body: RunAgentInput) -> dict[str, Any] | None:
    """The run's AG-UI context as eve-py's client context: description -> value."""
    return {item.description: item.value for item in body.context} if body.context else None


@dataclass
class _Begun:
    """What a run's work committed first, and whether it answered only part of the batch."""

    start: int | None
    partial: bool = False


class AgUi:
    """The AG-UI route of one app.

    Args:
        api: The app's session routes (their runtime, caller checks, owners and runner).
    """

    def __init__(self, api: Api) -> None:
        self.api = api

    def routes(self) -> list[Route]:
        """`POST /ag-ui` and `GET /ag-ui`."""
        return [Route("/ag-ui", self.run, methods=["POST"]), Route("/ag-ui", self.capabilities, methods=["GET"])]

    async def capabilities(self, request: Request) -> Response:
        """`GET /ag-ui`: what this agent supports, as AG-UI's `AgentCapabilities` (needs the token)."""
        try:
            self.api._principal(request)
        except EveError as exc:
            return error_response(exc)
        loop = HumanInTheLoopCapabilities(supported=True, approvals=True, interrupts=True, approve_with_edits=True)
        return JSONResponse(AgentCapabilities(human_in_the_loop=loop).model_dump(mode="json", by_alias=True))

    async def run(self, request: Request) -> Response:
        """`POST /ag-ui`: one AG-UI run on the thread's session, streamed as server-sent events."""
        try:
            principal = self.api._principal(request)
            body = _parse(await self.api._body(request))
            session_id = await open_thread(self.api, body.thread_id, principal)
            by = self.api._caller(request)[1]
        except EveError as exc:
            return error_response(exc)
        subscriber = self.api.hub.subscribe(session_id)  # before the work starts: no commit is missed
        headers = SSE_HEADERS | {"x-eve-session-id": session_id}
        stream = self._stream(session_id, body, by, subscriber)
        return StreamingResponse(stream, media_type="text/event-stream", headers=headers)

    async def _stream(
        self, session_id: str, body: RunAgentInput, by: str, subscriber: Subscriber
    ) -> AsyncIterator[bytes]:
        projection = RunProjection(session_id, body.run_id)
        try:
            yield _sse(RunStartedEvent(thread_id=session_id, run_id=body.run_id, protocol_version=PROTOCOL_VERSION))
            try:
                begun = await self._begin(session_id, body, by)
            except EveError as exc:
                _, code = error_status(exc)
                for event in projection.error(str(error_body(exc)["error"]), code):
                    yield _sse(event)
                return
            if begun.start is None and not body.messages:
                # A client attaching to a thread it has no messages of (a new page on a stored thread).
                session = await self.api.runtime.get_session(session_id)
                yield _sse(snapshot_of(await session.messages()))
            async for chunk in self._follow(session_id, begun, projection, subscriber):
                yield chunk
        finally:
            self.api.hub.unsubscribe(subscriber)

    async def _begin(self, session_id: str, body: RunAgentInput, by: str) -> _Begun:
        """Start the run's work: answer the resumed requests, or send the person's new message."""
        session = await self.api.runtime.get_session(session_id)
        work: Operation
        if body.resume:
            open_requests = {r.request_id: r for r in session.input_requests}
            responses = [response_of(entry, open_requests.get(entry.interrupt_id)) for entry in body.resume]
            partial = bool(open_requests.keys() - {r.request_id for r in responses})
            work = Answer(responses, _context(body), None, by, settle=not partial)
            started = await self.api.runner.start(session, work)
            return _Begun(started.start_index, partial)
        last = body.messages[-1] if body.messages else None
        if not isinstance(last, UserMessage):
            return _Begun(None)  # nothing new: the run reports where the thread stands
        work = Send([_text(last)], _context(body), None, new_id("dlv"))
        started = await self.api.runner.start(session, work, until_turn=True)
        return _Begun(started.start_index)

    async def _follow(
        self, session_id: str, begun: _Begun, projection: RunProjection, subscriber: Subscriber
    ) -> AsyncIterator[bytes]:
        """The run's stored events as AG-UI events, until the turn completes, fails or parks."""
        batch: list[InputRequest] = []
        if begun.start is not None:
            done = lambda: begun.partial or projection.ended  # noqa: E731 (a partial answer writes once)
            try:
                async for events in follow_run(self.api, session_id, begun.start, subscriber, done=done):
                    if events is None:
                        yield KEEPALIVE
                        continue
                    for event in events:
                        if isinstance(event, InputRequested):
                            batch = event.data.input_requests()
                        requests = await self._open(session_id, batch) if isinstance(event, TurnWaiting) else []
                        for made in projection.events(event, requests):
                            yield _sse(made)
            except ApiError:  # the server shuts down
                for made in projection.error("The server is shutting down; run again.", "unavailable"):
                    yield _sse(made)
                return
        if not projection.ended:
            for made in await self._settled(session_id, projection):
                yield _sse(made)

    async def _open(self, session_id: str, batch: list[InputRequest]) -> list[InputRequest]:
        """The session's open requests (the parked batch's when another client answered them meanwhile)."""
        session = await self.api.runtime.get_session(session_id)
        return session.input_requests or batch

    async def _settled(self, session_id: str, projection: RunProjection) -> list[BaseEvent]:
        """How a run that started no turn ends: the open requests as interrupts, else a success."""
        session = await self.api.runtime.get_session(session_id)
        if session.input_requests:
            return projection.interrupt(session.input_requests)
        return projection.finish()


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
