"""The HTTP routes of the session API: each handler reads a request and runs one named operation.

`create_app` (`eve_py.server._app`) mounts them. A handler checks the caller (`_principal`,
`_owned`), reads the body (`eve_py.server._bodies`), then either runs a `Send`, `Answer` or
`Resume` in the background (`eve_py.server._operations`, through `TurnRunner`) or calls the
session's `cancel`, `clear` or `reset` directly.

Each route answers on one of two wires, told apart by the path alone (`wire_of`): eve 1.0's
under `/eve/v1` (stream version 27, delivery receipts, `answers`, `/end`, prewarm), and eve
0.80.1's under `LEGACY_PREFIX` + `/eve/v1` (stream version 26, its receipts), where eve 0.80.1's
client is pointed (`new Client({host: "http://host:8000/v26"})`). Both read and write the same
sessions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from anyio.abc import TaskGroup
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from eve_py._camel import CamelModel
from eve_py._lru import Recent
from eve_py.errors import (
    ApiError,
    AuthenticationError,
    ModelConfigurationError,
    NotAnApproverError,
    RequestAlreadyAnsweredError,
    RequestExpiredError,
    SessionConflictError,
    SessionNotFoundError,
    SessionNotWaitingError,
    SessionStateError,
)
from eve_py.harness import Runtime, Session
from eve_py.parking._answers import text_answer
from eve_py.protocol import Event, InputRequested, InputResolved, InputResponse, TurnStarted, new_id
from eve_py.server._auth import Authenticator
from eve_py.server._bodies import (
    CancelBody,
    CreateSessionBody,
    EndBody,
    SessionInputBody,
    bad_request,
    decode_json,
    json_errors,
    parse_body,
    too_large,
)
from eve_py.server._eve_v27 import STREAM_VERSION_27, V27Encoding, V27Lines, stored_json
from eve_py.server._eve_v27_values import cancel_delivery_id, control_delivery_id
from eve_py.server._hub import Hub
from eve_py.server._idempotency import IdempotencyKeys, KeyUse, delivery_id_for_key
from eve_py.server._info import agent_info, health
from eve_py.server._operations import Answer, Operation, Resume, Send
from eve_py.server._owners import OwnerStore
from eve_py.server._stream import (
    NDJSON,
    STREAM_VERSION,
    Encoding,
    EventStreamResponse,
    StreamReader,
    start_index,
    stream_headers,
)
from eve_py.server._turns import TurnRunner
from eve_py.sessions import SessionRecord
from eve_py.sessions._feed import SessionFeed

__all__ = ("LEGACY_PREFIX", "Api", "wire_of")

LEGACY_PREFIX = "/v26"
"""Where eve 0.80.1's wire is served: its routes under this prefix (`/v26/eve/v1/...`)."""


def wire_of(request: Request) -> int:
    """The stream version a request's route speaks: 26 under `LEGACY_PREFIX`, else eve 1.0's 27."""
    return 26 if request.url.path.startswith(LEGACY_PREFIX + "/") else 27


def _receipt(session_id: str, delivery_id: str) -> JSONResponse:
    """eve 1.0's `202` delivery receipt `{ok, sessionId, deliveryId}`."""
    return JSONResponse(
        {"ok": True, "sessionId": session_id, "deliveryId": delivery_id},
        status_code=202,
        headers={"x-eve-session-id": session_id, "cache-control": "no-store"},
    )


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
        self.keys = IdempotencyKeys(runtime.store)
        self.renderers: Recent[str, V27Lines] = Recent(1024)
        """Each recently read session's v27 renderer where its last read ended, for a read from there
        (a frontend reads from the `startIndex` of its next `202`): taken by one reader at a time."""

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
                (NaN or Infinity), nested too deep, holding a lone surrogate, or `null`.
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
        decoded = decode_json(bytes(raw))
        if decoded is None:  # `null` is a body, and not an object: only an empty body means "none"
            raise bad_request("Expected a JSON object, not null.")
        return decoded

    async def _start(self, session: Session | str, work: Operation, delivery_id: str | None = None) -> dict[str, Any]:
        """Start work in the background; the accepted payload with `deliveryId`, `turnId` and `startIndex`.

        `session` is the session as the route opened it, or its id (then it is opened here). A
        message's `delivery_id` is in the payload; on eve 1.0's wire answers name theirs too, which
        the caller adds (eve 0.80.1's clients follow an answer by the turn's own ids).
        """
        if isinstance(session, str):
            session = await self.runtime.get_session(session)
        started = await self.runner.start(session, work)
        payload: dict[str, Any] = {"ok": True, "sessionId": session.id, "status": "accepted"}
        if delivery_id is not None:
            payload["deliveryId"] = delivery_id
        if started.start_index is not None:
            payload["startIndex"] = started.start_index
        turn_ids = [e.data.turn_id for e in started.events if isinstance(e, TurnStarted)]
        resolved = [e for e in started.events if isinstance(e, InputResolved)]
        turn_ids += [e.data.turn_id for e in resolved]
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
        """`POST /session/{id}`: a follow-up `message`, or answers for the parked batch (`answers`,
        `inputResponses`); with an `idempotencyKey`, a repeat gets the first receipt and runs nothing."""
        raw = await self._body(request)
        if wire_of(request) == 27 and (raw is None or raw == {}):
            return await self._prewarm(request)
        session_id = await self._live(request)
        body = parse_body(SessionInputBody, raw)
        session = await self.runtime.get_session(session_id)
        if session.record.status == "ended":
            raise _not_active(f"Session {session_id!r} was reset: it takes no more messages or answers.")
        key = body.idempotency_key
        if key is None:
            payload = await self._deliver(request, session, body, None)
            return JSONResponse(payload, status_code=202, headers={"x-eve-session-id": session_id})
        delivery_id = delivery_id_for_key(key)
        async with self.keys.use(session_id, key) as (use, event):
            if use is KeyUse.IN_FLIGHT:
                raise ApiError(
                    "A request with this idempotencyKey is still under way on this session; send it again "
                    "in a moment to get its receipt.",
                    status=409,
                    code="delivery_in_progress",
                )
            if use is KeyUse.DELIVERED:
                repeat = {"ok": True, "sessionId": session_id, "status": "accepted", "deliveryId": delivery_id}
                if event is not None and (turn_id := getattr(event.data, "turn_id", None)) is not None:
                    repeat["turnId"] = turn_id
                headers = {"x-eve-session-id": session_id, "x-eve-idempotent-replay": "true"}
                return JSONResponse(repeat, status_code=202, headers=headers)
            payload = await self._deliver(request, session, body, delivery_id)
        return JSONResponse(payload, status_code=202, headers={"x-eve-session-id": session_id})

    async def _deliver(
        self, request: Request, session: Session, body: SessionInputBody, delivery_id: str | None
    ) -> dict[str, Any]:
        """Start the follow-up or the answers as delivery `delivery_id` (a new id when None); the `202` payload."""
        record = session.record
        if record.status == "running" and not self.runner.busy(record.id) and self._settled(record):
            await self._recover(record)
            raise ApiError(
                "The session's last turn stopped with its worker and is being finished now; send this again "
                "once it settles (follow the stream).",
                status=409,
                code="session_not_ready",
            )
        responses = body.responses()
        if responses is not None:
            by = self._caller(request)[1]
            if delivery_id is None and wire_of(request) == 27:
                delivery_id = new_id("dlv")  # named up front: an approval short of its quorum settles no request
            answer = Answer(responses, body.client_context, body.output_schema, by, delivery_id=delivery_id)
            try:
                payload = await self._start(session, answer)
            except (RequestAlreadyAnsweredError, SessionNotWaitingError):
                if wire_of(request) != 27 or not await _asked_before(session, responses):
                    raise
                # eve 1.0 takes a stale answer (its request answered, withdrawn or settled since) and
                # reports it on the stream, settled `abandoned`; nothing else changes.
                delivery_id = delivery_id or new_id("dlv")
                await session.ignore_delivery(
                    delivery_id, "answers", "its request was answered or settled before", responses
                )
                return {"ok": True, "sessionId": session.id, "status": "accepted", "deliveryId": delivery_id}
            return payload | ({"deliveryId": delivery_id} if delivery_id is not None else {})
        parts = body.message_parts()
        assert parts is not None
        delivery_id = delivery_id or new_id("dlv")
        if wire_of(request) == 27 and (typed := text_answer(session.input_requests, "\n".join(parts))) is not None:
            # eve 1.0: a message that fits the first open prompt answers it (else it withdraws the batch).
            by = self._caller(request)[1]
            answered = Answer([typed], body.client_context, body.output_schema, by, delivery_id=delivery_id)
            # Not theirs to approve, theirs already, or past its deadline: the message withdraws it instead.
            with contextlib.suppress(NotAnApproverError, RequestAlreadyAnsweredError, RequestExpiredError):
                return await self._start(session, answered) | {"deliveryId": delivery_id}
        send = Send(parts, body.client_context, body.output_schema, delivery_id)
        return await self._start(session, send, delivery_id)

    async def _prewarm(self, request: Request) -> Response:
        """eve 1.0's prewarm (`POST /session/{id}` with an empty body): eve-py has nothing to warm.

        `ready` for a live session the caller owns, `no_active_session` for any other (unknown,
        ended, or another principal's, which is not told apart from unknown).
        """
        try:
            session_id = await self._owned(request)
            status = "no_active_session" if (await self.runtime.store.load(session_id)).status == "ended" else "ready"
        except SessionNotFoundError:
            status = "no_active_session"
        return JSONResponse({"ok": True, "status": status}, headers={"cache-control": "no-store"})

    @json_errors
    async def cancel(self, request: Request) -> Response:
        """`POST /session/{id}/cancel`: cancel the running or parked turn."""
        if wire_of(request) == 27:
            return await self._cancel_v27(request)
        session_id = await self._owned(request)
        body = parse_body(CancelBody, await self._body(request))
        record = await self.runtime.store.load(session_id)
        turn = record.turn
        if body.turn_id is not None and (turn is None or turn.turn_id != body.turn_id):
            return JSONResponse({"ok": True, "status": "no_active_turn"}, status_code=200)
        if await self._stop(session_id, record, body.turn_id):
            return JSONResponse({"ok": True, "sessionId": session_id, "status": "accepted"}, status_code=202)
        return JSONResponse({"ok": True, "status": "no_active_turn"}, status_code=200)

    async def _cancel_v27(self, request: Request) -> Response:
        """eve 1.0's cancel: a receipt whether or not a turn stops; `409 session_not_active` for an
        unknown or ended session. `{"turnId": null}` (no turn observed) and another turn's id cancel nothing.
        """
        session_id = await self._live(request)
        body = parse_body(CancelBody, await self._body(request))
        record = await self.runtime.store.load(session_id)
        if record.status == "ended":
            raise _not_active(f"Session {session_id!r} has ended.")
        turn = record.turn
        if turn is None or record.status == "idle" or (body.guarded and body.turn_id != turn.turn_id):
            # Nothing to stop: eve settles such a cancel `ignored`. It is recorded (`delivery.ignored`)
            # so its delivery settles on the stream: with the turn's next write when it runs here; not
            # while it runs in another worker (a write here would conflict with that worker's).
            delivery_id = new_id("dlv_cancel_ignored")
            if record.status != "running" or self.runner.busy(session_id):
                reason = "no turn to stop" if turn is None or record.status == "idle" else "turnId names another turn"
                with contextlib.suppress(SessionConflictError):  # someone wrote meanwhile: the receipt stands
                    await (await self.runtime.get_session(session_id)).ignore_delivery(delivery_id, "cancel", reason)
            return _receipt(session_id, delivery_id)
        await self._stop(session_id, record, turn.turn_id)
        return _receipt(session_id, cancel_delivery_id(turn.turn_id))

    async def _stop(self, session_id: str, record: SessionRecord, turn_id: str | None) -> bool:
        """Cancel the session's turn (`turn_id`'s, when given) wherever it runs: here, parked, or in
        another worker; whether one was cancelled."""
        if self.runner.busy(session_id):
            cancelled = await self.runner.cancel(session_id, turn_id)
        else:
            cancelled = await (await self.runtime.get_session(session_id)).cancel()
        store = self.runtime.store
        if not cancelled and isinstance(store, SessionFeed) and record.status == "running" and record.lease_held():
            await store.request_cancel(session_id)  # the worker running the turn stops it
            cancelled = True
        return cancelled

    @json_errors
    async def clear(self, request: Request) -> Response:
        """`POST /session/{id}/clear`: remove the session's history (`context.cleared`)."""
        session_id = await self._live(request)
        parse_body(CamelModel, await self._body(request))
        session = await self.runtime.get_session(session_id)
        if session.status == "ended":
            if wire_of(request) == 27:
                raise _not_active(f"Session {session_id!r} has ended.")
            return JSONResponse({"ok": True, "status": "no_active_session"})
        if self.runner.busy(session_id):
            raise SessionStateError("A turn is running; clear the session once it settles.", status="running")
        await session.clear()
        if wire_of(request) == 27:
            return _receipt(session_id, await self._effect(session))
        return JSONResponse({"ok": True, "sessionId": session_id, "status": "accepted"}, status_code=202)

    async def _effect(self, session: Session) -> str:
        """The delivery id of the control whose effect (`context.cleared`, `session.completed`) the
        session's log ends with: the control just ran here, in this request, through `session`."""
        events = await session.events(max(0, session.record.event_count - 2))
        effect = [e for e in events if e.type in ("context.cleared", "session.completed")]
        return control_delivery_id(effect[-1].meta.id) if effect else new_id("dlv_ctl")

    @json_errors
    async def reset(self, request: Request) -> Response:
        """`POST /session/{id}/end` (eve 1.0) or `/reset`: retire the session for good (`session.completed`)."""
        session_id = await self._live(request)
        parse_body(EndBody, await self._body(request))
        v27 = wire_of(request) == 27
        if self.runner.busy(session_id):
            await self.runner.cancel(session_id)
            raise SessionStateError(
                "A turn was running; it is being cancelled, end the session again.", status="running"
            )
        session = await self.runtime.get_session(session_id)
        if not await session.reset():
            if v27:
                raise _not_active(f"Session {session_id!r} has ended.")
            return JSONResponse({"ok": True, "status": "no_active_session"})
        if v27:
            return _receipt(session_id, await self._effect(session))
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
        encoding = Encoding(control=query.get("streamControlVersion") == "1")
        version = STREAM_VERSION
        if wire_of(request) == 27:
            try:
                encoding = V27Encoding(
                    await self._v27_lines(session_id, start), lambda lines: self.renderers.put(session_id, lines)
                )
            except BaseException:
                self.hub.unsubscribe(subscriber)
                raise
            version = STREAM_VERSION_27
        reader = StreamReader(
            self.runtime.store,
            subscriber,
            lease_s=self.stream_lease_s,
            recheck_s=self.recheck_s,
            closing=lambda: self.closing,
            unsubscribe=self.hub.unsubscribe,
            on_quiet=lambda: self._recover_quiet(session_id),
        )
        body = reader.lines(start, stop=stop, encoding=encoding, first=first)
        headers = stream_headers(session_id, start, tail, version=version)
        if self.listeners is None:  # served without its lifespan
            return StreamingResponse(body, media_type=NDJSON, headers=headers)
        return EventStreamResponse(body, subscriber, headers, self.listeners, self.hub.unsubscribe)

    async def _v27_lines(self, session_id: str, start: int) -> V27Lines:
        """A v27 renderer that has read the session's first `start` stored events: the one the
        session's last read left there, or a new one that reads them (their lines are not sent)."""
        kept = self.renderers.take(session_id)
        if kept is not None and kept.position == start:
            return kept
        lines = V27Lines()
        if start > 0:
            earlier = self.hub.recent(session_id, 0, start)
            if earlier is None:
                earlier = await self.runtime.store.read_events(session_id, 0, start)
            for event in earlier[:start]:  # their lines are before the read: only the state counts
                lines.line(stored_json(event))
        return lines


async def _asked_before(session: Session, responses: Sequence[InputResponse]) -> bool:
    """Whether each answer names a different request the session asked at some point (its log says),
    none of them still open (a body mixing stale and open answers is refused whole, losing none)."""
    ids = [response.request_id for response in responses]
    if len(set(ids)) != len(ids):
        return False  # one request answered twice in one body: the client's mistake, refused as such
    await session.refresh()
    if {r.request_id for r in session.input_requests} & set(ids):
        return False
    asked = {r.request_id for e in await session.events() if isinstance(e, InputRequested) for r in e.data.requests}
    return all(request_id in asked for request_id in ids)
