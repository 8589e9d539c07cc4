"""The Vercel AI SDK over HTTP: `POST /ai-sdk/chat` runs the agent for `useChat` (`ai` 7's `DefaultChatTransport`).

```
POST /ai-sdk/chat  {id, messages, trigger, messageId?}
                   -> 200 text/event-stream, x-vercel-ai-ui-message-stream: v1: start, start-step,
                      text-*, tool-input-*, tool-approval-request, tool-output-*, finish-step, finish | error
                   |  400, 401, 403, 404, 409, 413, 415, 422: eve's JSON error body, nothing stored
```

The chat `id` is the eve-py session: created on the first request, owned by the caller's token
like a session made with `POST /eve/v1/session` (another caller's chat is a 404), and the same
session on eve's wire (`/eve/v1/session/{id}/...`): a call parked here can be answered there,
and the other way round. The request's messages are read against the stored session
(`eve_py.server._ai_sdk_history`): a new user message starts a turn (`Send`); new tool outputs
and approval decisions answer the parked calls (`Answer`, through `Session.respond`, with its
validation, one winner and one result per call). Anything refused, a contradicting history
included, is an HTTP error before the stream starts, and nothing is stored. The response
streams the run's stored events as UI message chunks (`eve_py.server._ai_sdk_chunks`) until
the turn completes, fails or parks on a person; a request with nothing new gets where the chat
stands. Authentication, origin and body checks are the session routes' own.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from eve_py.errors import ApiError, EveError
from eve_py.harness import Session
from eve_py.protocol import new_id
from eve_py.server._ai_sdk_chunks import Chunk, ChunkProjection
from eve_py.server._ai_sdk_history import ChatPlan, StoredChat, parse_chat, plan_chat
from eve_py.server._bodies import error_response
from eve_py.server._hub import Subscriber
from eve_py.server._operations import Answer, Send
from eve_py.server._routes import Api
from eve_py.server._runs import KEEPALIVE, SSE_HEADERS, check_thread_id, create_thread, follow_run, thread_owner

__all__ = ("AiSdkChat",)

STREAM_HEADER = {"x-vercel-ai-ui-message-stream": "v1"}
"""What tells the AI SDK's client that the body is a UI message stream."""
_DONE = b"data: [DONE]\n\n"


def _sse(chunks: list[Chunk]) -> bytes:
    return b"".join(
        b"data: " + json.dumps(c, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n" for c in chunks
    )


class AiSdkChat:
    """The AI SDK chat route of one app.

    Args:
        api: The app's session routes (their runtime, caller checks, owners and runner).
    """

    def __init__(self, api: Api) -> None:
        self.api = api

    def routes(self) -> list[Route]:
        """`POST /ai-sdk/chat`."""
        return [Route("/ai-sdk/chat", self.chat, methods=["POST"])]

    async def chat(self, request: Request) -> Response:
        """`POST /ai-sdk/chat`: one `useChat` request on the chat's session, answered with the UI message stream."""
        try:
            principal, by = self.api._caller(request)
            body = parse_chat(await self.api._body(request))
            check_thread_id(body.id, "The chat id")
            exists = await thread_owner(self.api, body.id, principal)
            session = await self.api.runtime.get_session(body.id) if exists else None
            stored = await self._stored(session) if session else StoredChat.of([], None, [], self._client_tools())
            plan = plan_chat(body, stored)
            session = session or await create_thread(self.api, body.id, principal)
            session_id = session.id
            subscriber = self.api.hub.subscribe(session_id, live=True)  # before the work starts: no commit is missed
            try:
                start = await self._begin(session, plan, by)
            except BaseException:
                self.api.hub.unsubscribe(subscriber)
                raise
        except EveError as exc:
            return error_response(exc)
        delivery_id = plan.message[0] if plan.message is not None else None
        projection = ChunkProjection(plan.continues or new_id("msg"), delivery_id=delivery_id)
        headers = SSE_HEADERS | STREAM_HEADER | {"x-eve-session-id": session_id}
        stream = self._stream(session_id, start, plan, projection, subscriber)
        return StreamingResponse(stream, media_type="text/event-stream", headers=headers)

    def _client_tools(self) -> frozenset[str]:
        return frozenset(name for name, tool in self.api.runtime.agent.tools.items() if tool.client_resolved)

    async def _stored(self, session: Session) -> StoredChat:
        """The session as stored, for checking the request against it (a turn whose worker died is finished first).

        Raises:
            ApiError: 409 `session_not_ready` while such a turn is being finished.
        """
        conversation = await session.messages()
        record = session.record
        if record.status == "running" and self.api._settled(record):
            await self.api._recover(record)
            raise ApiError(
                "The chat's last turn stopped with its worker and is being finished now; send again in a moment.",
                status=409,
                code="session_not_ready",
            )
        delivery_ids = record.turn.delivery_ids if record.turn is not None else []
        pending = record.pending if record.status == "waiting" else None
        # A turn started on AG-UI may have offered frontend tools: their calls are client tools too.
        offered = {tool.name for tool in (record.turn.client_tools or [])} if record.turn is not None else set()
        return StoredChat.of(conversation, pending, delivery_ids, self._client_tools() | offered)

    async def _begin(self, session: Session, plan: ChatPlan, by: str) -> int | None:
        """Start the request's work; the log index its response streams from (None: nothing to follow)."""
        if plan.message is not None:
            message_id, text = plan.message
            work = Send([text], None, None, message_id)
            return (await self.api.runner.start(session, work)).start_index
        if plan.answers:
            answer = Answer(plan.answers, None, None, by, settle=plan.settle)
            return (await self.api.runner.start(session, answer)).start_index
        # Nothing new (a resent request): follow a turn still running, else say where the chat stands.
        return session.record.event_count if session.record.status == "running" else None

    async def _stream(
        self, session_id: str, start: int | None, plan: ChatPlan, projection: ChunkProjection, subscriber: Subscriber
    ) -> AsyncIterator[bytes]:
        try:
            yield _sse(projection.start())
            if start is not None:
                done = (lambda: projection.ended) if plan.settle else (lambda: True)
                try:
                    async for batch in follow_run(self.api, session_id, start, subscriber, done=done):
                        if batch is None:
                            yield KEEPALIVE
                            continue
                        chunks = [chunk for event in batch for chunk in projection.events(event)]
                        if chunks:
                            yield _sse(chunks)
                except ApiError as exc:  # the server shuts down
                    yield _sse(projection.error(str(exc)))
            if not projection.ended:
                session = await self.api.runtime.get_session(session_id)
                yield _sse(projection.finish("tool-calls" if session.input_requests else "stop"))
            yield _DONE
        finally:
            self.api.hub.unsubscribe(subscriber)
