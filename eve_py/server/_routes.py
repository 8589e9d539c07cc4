"""The HTTP routes of the session API: each handler reads a request and runs one named operation.

`create_app` (`eve_py.server._app`) mounts them. A handler checks the caller (`_principal`,
`_owned`), reads the body (`eve_py.server._bodies`), then either runs a `Send`, `Answer` or
`Resume` in the background (`eve_py.server._operations`, through `TurnRunner`) or calls the
session's `cancel`, `clear` or `reset` directly, and answers in eve 0.80.1's shapes.
"""

from __future__ import annotations

from typing import Any

from anyio.abc import TaskGroup
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from eve_py._camel import CamelModel
from eve_py.errors import (
    ApiError,
    AuthenticationError,
    ModelConfigurationError,
    SessionNotFoundError,
    SessionStateError,
)
from eve_py.harness._runtime import Runtime
from eve_py.harness._session import Session
from eve_py.protocol import Event, InputResolved, TurnStarted, new_id
from eve_py.server._auth import Authenticator
from eve_py.server._bodies import (
    CancelBody,
    CreateSessionBody,
    ResetBody,
    SessionInputBody,
    decode_json,
    json_errors,
    parse_body,
    too_large,
)
from eve_py.server._hub import Hub
from eve_py.server._info import agent_info, health
from eve_py.server._operations import Answer, Operation, Resume, Send
from eve_py.server._owners import OwnerStore
from eve_py.server._stream import NDJSON, EventStreamResponse, StreamReader, start_index, stream_headers
from eve_py.server._turns import TurnRunner
from eve_py.sessions._feed import SessionFeed
from eve_py.sessions._record import SessionRecord

__all__ = ("Api",)


def _not_active(reason: str) -> ApiError:
    """eve's answer to a message or control for a session it cannot find or that was reset."""
    return ApiError(reason, status=409, code="session_not_active")


class UnownedSessionError(SessionNotFoundError):
    """The session exists but no API principal owns it: it was made outside the server."""

    def __init__(self, session_id: str) -> None:
        super().__init__(
            session_id,
            f"Session {session_id!r} is in this store but belongs to no API principal: it was made outside "
            "the server (eve-py chat, eve-py run or the Python API), and the server answers only the sessions "
            "created through it. Create the session with POST /eve/v1/session and continue it anywhere with "
            "its id (see docs/server.md, sharing a session with the command line).",
        )


class Api:
    """The route handlers and what they share (one per app)."""

    def __init__(
        self,
        runtime: Runtime,
        auth: Authenticator,
        owners: OwnerStore,
        *,
        max_body_bytes: int,
        recheck_s: float,
        stream_lease_s: float,
    ) -> None:
        self.runtime = runtime
        self.auth = auth
        self.owners = owners
        self.hub = Hub()
        self.runner = TurnRunner(runtime, self.hub)
        self.max_body_bytes = max_body_bytes
        self.recheck_s = recheck_s
        self.stream_lease_s = stream_lease_s
        self.closing = False
        self.listeners: TaskGroup | None = None
        """Where streams' disconnect listeners run: a task group the app's lifespan owns."""

    # --- helpers -------------------------------------------------------------------------------

    def _principal(self, request: Request) -> str:
        return self._caller(request)[0]

    def _caller(self, request: Request) -> tuple[str, str]:
        """The caller's `(principal, token name)`, else 401 (the token is checked once per request)."""
        caller: tuple[str, str] | None = getattr(request.state, "caller", None)
        if caller is None:
            caller = request.state.caller = self.auth.caller(request.headers.get("authorization"))
        if caller is None:
            raise AuthenticationError(
                "Missing or wrong bearer token (send Authorization: Bearer <token>).", status=401, code="unauthorized"
            )
        return caller

    async def _owned(self, request: Request) -> str:
        """The path's session id, once the caller is known to own it (else 401/404)."""
        principal = self._principal(request)
        session_id = str(request.path_params["session_id"])
        owner = await self.owners.owner(session_id)
        if owner == principal:
            return session_id
        # Another principal's session is answered as if it did not exist; one nobody owns is
        # told as it is, so a session made by the CLI is not reported missing.
        if owner is None and await self._stored(session_id):
            raise UnownedSessionError(session_id)
        raise SessionNotFoundError(session_id)

    async def _stored(self, session_id: str) -> bool:
        try:
            await self.runtime.store.load(session_id)
        except SessionNotFoundError:
            return False
        return True

    async def _live(self, request: Request) -> str:
        """Like `_owned`, but an unknown session is eve's 409 `session_not_active`."""
        try:
            return await self._owned(request)
        except SessionNotFoundError as missing:
            raise _not_active(str(missing)) from None

    async def _body(self, request: Request) -> Any:
        """The decoded JSON body, None when empty.

        Raises:
            ApiError: 413 when too large; 415 when not sent as `application/json`; 400 when not strict JSON
                (NaN or Infinity), nested too deep, or holding a lone surrogate.
        """
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            raise too_large(self.max_body_bytes)
        raw = bytearray()
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > self.max_body_bytes:
                raise too_large(self.max_body_bytes)
        if not raw.strip():
            return None
        media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        # Only application/json: the body types a page elsewhere may send without a CORS preflight
        # (text/plain, forms) are refused, whatever they hold.
        if media_type != "application/json":
            raise ApiError(
                "Send the body as JSON (Content-Type: application/json).", status=415, code="unsupported_media_type"
            )
        return decode_json(bytes(raw))

    async def _start(self, session: Session | str, work: Operation, delivery_id: str | None = None) -> dict[str, Any]:
        """Start work in the background; the accepted payload with `deliveryId`, `turnId` and `startIndex`.

        `session` is the session as the route opened it, or its id (then it is opened here).
        """
        if isinstance(session, str):
            session = await self.runtime.get_session(session)
        started = await self.runner.start(session, work, until_turn=delivery_id is not None)
        payload: dict[str, Any] = {"ok": True, "sessionId": session.id, "status": "accepted"}
        if delivery_id is not None:
            payload["deliveryId"] = delivery_id
        if started.start_index is not None:
            payload["startIndex"] = started.start_index
        turn_ids = [e.data.turn_id for e in started.events if isinstance(e, TurnStarted)]
        turn_ids += [e.data.turn_id for e in started.events if isinstance(e, InputResolved)]
        if turn_ids:
            payload["turnId"] = turn_ids[0]
        return payload

    async def _recover(self, record: SessionRecord) -> None:
        """Finish a turn whose worker died (running, lease expired, not running here): `resume()`.

        Without this a server restart would strand such a session: its answers accepted and
        its stream silent. Losing the race to another recovering server is fine.
        """
        if record.status != "running" or self.runner.busy(record.id) or not self._settled(record):
            return
        session = await self.runtime.get_session(record.id)
        if self.runner.busy(record.id):
            return  # another request started it while this one loaded the session
        # In the background: the request that noticed must not wait for the turn's next step.
        # Of several servers recovering at once, resume()'s claim lets exactly one run it.
        self.runner.spawn(session, Resume())

    async def _recover_quiet(self, session_id: str) -> None:
        """A stream saw nothing for a while: finish the session's turn if its worker died meanwhile."""
        if not self.closing and not self.runner.busy(session_id):
            try:
                await self._recover(await self.runtime.store.load(session_id))
            except ApiError:
                pass  # shutting down: the next server on the store recovers it

    def _written_here(self, session_id: str, start: int) -> list[Event] | None:
        """The session's events from `start` on when its work runs here and wrote all of them (`Hub.recent`,
        its `stored` bound moot: `written_from` vouches for the log), so a `202`'s stream needs no store read."""
        since = self.runner.written_from(session_id)
        if since is None or start < since:
            return None
        return self.hub.recent(session_id, start, start)

    def _settled(self, record: SessionRecord) -> bool:
        """Whether the session's turn settled: nothing runs here, and nobody else holds a live lease."""
        if self.runner.busy(record.id):
            return False
        return record.status != "running" or not record.lease_held()

    # --- routes --------------------------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        """`GET|HEAD /health`: public, eve's `{ok: true, status: "ready", workflowId}`."""
        return JSONResponse(health(self.runtime.agent))

    @json_errors
    async def info(self, request: Request) -> Response:
        """`GET /info`: eve's agent-info document (needs the same token as the session routes)."""
        self._principal(request)
        try:
            model_id: str | None = self.runtime.model.name
        except ModelConfigurationError:
            model_id = None
        return JSONResponse(agent_info(self.runtime.agent, model_id=model_id))

    @json_errors
    async def create_session(self, request: Request) -> Response:
        """`POST /session`: create a session owned by the caller, optionally starting a turn."""
        principal = self._principal(request)
        body = parse_body(CreateSessionBody, await self._body(request))
        session_id = new_id("ses")
        await self.owners.claim(session_id, principal)
        parts = body.message_parts()
        with self.runner.attribute(session_id):
            # With a first message, the turn's first write is durable and acknowledged before the
            # `202`: it syncs the session's write too (a store keeps writes in order).
            session = await self.runtime.create_session(session_id, durable=parts is None)
        payload: dict[str, Any] = {"ok": True, "sessionId": session.id, "status": "accepted"}
        if parts is not None:
            delivery_id = new_id("dlv")
            send = Send(parts, body.client_context, body.output_schema, delivery_id)
            payload = await self._start(session, send, delivery_id)
        return JSONResponse(payload, status_code=202, headers={"x-eve-session-id": session.id})

    @json_errors
    async def get_session(self, request: Request) -> Response:
        """`GET /session/{id}`: the session's status, current turn and open input requests."""
        session_id = await self._owned(request)
        await self._recover(await self.runtime.store.load(session_id))
        session = await self.runtime.get_session(session_id)
        record = session.record
        turn = record.turn.to_wire() if record.turn is not None else None
        payload = {
            "ok": True,
            "sessionId": record.id,
            "status": record.status,
            "turn": turn,
            "inputRequests": [r.to_wire() for r in session.input_requests],
            "eventCount": record.event_count,
            "createdAt": record.created_at,
            "updatedAt": record.updated_at,
        }
        return JSONResponse(payload, headers={"x-eve-session-id": record.id})

    @json_errors
    async def post_session(self, request: Request) -> Response:
        """`POST /session/{id}`: a follow-up `message`, or `inputResponses` for the parked batch."""
        session_id = await self._live(request)
        body = parse_body(SessionInputBody, await self._body(request))
        session = await self.runtime.get_session(session_id)
        record = session.record
        if record.status == "ended":
            raise _not_active(f"Session {session_id!r} was reset: it takes no more messages or answers.")
        if record.status == "running" and not self.runner.busy(session_id) and self._settled(record):
            await self._recover(record)
            raise ApiError(
                "The session's last turn stopped with its worker and is being finished now; send this again "
                "once it settles (follow the stream).",
                status=409,
                code="session_not_ready",
            )
        work: Operation
        delivery_id = None
        if body.input_responses is not None:
            work = Answer(body.input_responses, body.client_context, body.output_schema, self._caller(request)[1])
        else:
            parts = body.message_parts()
            assert parts is not None
            delivery_id = new_id("dlv")
            work = Send(parts, body.client_context, body.output_schema, delivery_id)
        payload = await self._start(session, work, delivery_id)
        return JSONResponse(payload, status_code=202, headers={"x-eve-session-id": session_id})

    @json_errors
    async def cancel(self, request: Request) -> Response:
        """`POST /session/{id}/cancel`: cancel the running or parked turn."""
        session_id = await self._owned(request)
        body = parse_body(CancelBody, await self._body(request))
        record = await self.runtime.store.load(session_id)
        turn = record.turn
        if body.turn_id is not None and (turn is None or turn.turn_id != body.turn_id):
            return JSONResponse({"ok": True, "status": "no_active_turn"}, status_code=200)
        if self.runner.busy(session_id):
            cancelled = await self.runner.cancel(session_id, body.turn_id)
        else:
            cancelled = await (await self.runtime.get_session(session_id)).cancel()
        store = self.runtime.store
        if not cancelled and isinstance(store, SessionFeed) and record.status == "running" and record.lease_held():
            await store.request_cancel(session_id)  # the worker running the turn stops it
            cancelled = True
        if cancelled:
            return JSONResponse({"ok": True, "sessionId": session_id, "status": "accepted"}, status_code=202)
        return JSONResponse({"ok": True, "status": "no_active_turn"}, status_code=200)

    @json_errors
    async def clear(self, request: Request) -> Response:
        """`POST /session/{id}/clear`: remove the session's history (`context.cleared`)."""
        session_id = await self._live(request)
        parse_body(CamelModel, await self._body(request))
        session = await self.runtime.get_session(session_id)
        if session.status == "ended":
            return JSONResponse({"ok": True, "status": "no_active_session"})
        if self.runner.busy(session_id):
            raise SessionStateError("A turn is running; clear the session once it settles.", status="running")
        with self.runner.attribute(session_id):
            await session.clear()
        return JSONResponse({"ok": True, "sessionId": session_id, "status": "accepted"}, status_code=202)

    @json_errors
    async def reset(self, request: Request) -> Response:
        """`POST /session/{id}/reset`: retire the session for good (`session.completed`)."""
        session_id = await self._live(request)
        parse_body(ResetBody, await self._body(request))
        if self.runner.busy(session_id):
            await self.runner.cancel(session_id)
            raise SessionStateError("A turn was running; it is being cancelled, reset again.", status="running")
        session = await self.runtime.get_session(session_id)
        with self.runner.attribute(session_id):
            if not await session.reset():
                return JSONResponse({"ok": True, "status": "no_active_session"})
        return JSONResponse({"ok": True, "previousSessionId": session_id, "status": "reset"})

    @json_errors
    async def compact(self, request: Request) -> Response:
        """`POST /session/{id}/compact`: eve-py does not summarize sessions; 501."""
        await self._live(request)
        raise ApiError(
            "eve-py does not compact sessions (no summarizing model step); use clear to drop the history.",
            status=501,
            code="unsupported",
        )

    @json_errors
    async def stream(self, request: Request) -> Response:
        """`GET /session/{id}/stream?startIndex=N[&live=1]`: the event log as NDJSON, then live events."""
        session_id = await self._owned(request)
        query = request.query_params
        start = start_index(query.get("startIndex", "0"))
        follow = query.get("follow", "true").lower() not in ("false", "0")
        live = follow and query.get("live") in ("1", "true")  # eve-py's: running tools' reports as they happen
        with_tail = not follow or query.get("includeTailIndex") in ("1", "true")
        # Subscribed before the record is read: every commit after that read wakes the reader.
        subscriber = self.hub.subscribe(session_id, live=live)
        first = None if with_tail else self._written_here(session_id, start)
        stop = tail = None
        if first is None:
            try:
                record = await self.runtime.store.load(session_id)
                await self._recover(record)
            except BaseException:
                self.hub.unsubscribe(subscriber)
                raise
            if start < 0:
                start = max(0, record.event_count + start)
            first = self.hub.recent(session_id, start, record.event_count)
            stop = None if follow else record.event_count
            tail = record.event_count - 1 if with_tail else None
        reader = StreamReader(
            self.runtime.store,
            subscriber,
            lease_s=self.stream_lease_s,
            recheck_s=self.recheck_s,
            closing=lambda: self.closing,
            unsubscribe=self.hub.unsubscribe,
            on_quiet=lambda: self._recover_quiet(session_id),
        )
        body = reader.lines(start, stop=stop, control=query.get("streamControlVersion") == "1", first=first)
        headers = stream_headers(session_id, start, tail)
        if self.listeners is None:  # served without its lifespan
            return StreamingResponse(body, media_type=NDJSON, headers=headers)
        return EventStreamResponse(body, subscriber, headers, self.listeners, self.hub.unsubscribe)
