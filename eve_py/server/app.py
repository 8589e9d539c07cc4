"""`create_app`: the HTTP session API on eve 0.80.1's wire, and the browser chat.

eve's own `Client` and `useEveAgent` drive it unchanged.

```
GET|HEAD /eve/v1/health                    -> 200 {ok: true, status: "ready", workflowId}
GET  /eve/v1/info                          -> 200 eve's agent-info document (see `eve_py.server.info`)
POST /eve/v1/session      {message?, clientContext?, outputSchema?}
                                           -> 202 {ok, sessionId, status: "accepted", deliveryId?, turnId?, startIndex?}
POST /eve/v1/session/{id} {message, clientContext?, outputSchema?, turnPolicy?} | {inputResponses}
                                           -> 202 {ok, sessionId, status: "accepted", deliveryId?, turnId?, startIndex?}
GET  /eve/v1/session/{id}/stream?startIndex=N[&follow=false][&includeTailIndex=1]
                                           -> NDJSON, one event per line
POST /eve/v1/session/{id}/cancel {turnId?} -> 202 {ok, sessionId, status: "accepted"}
                                           |  200 {ok, status: "no_active_turn"}
POST /eve/v1/session/{id}/clear            -> 202 {ok, sessionId, status: "accepted"}
POST /eve/v1/session/{id}/reset {reason?}  -> 200 {ok, previousSessionId, status: "reset"}
                                           |  200 {ok, status: "no_active_session"}
POST /eve/v1/session/{id}/compact          -> 501 unsupported (eve-py does not compact)
GET  /eve/v1/session/{id}                  -> 200 {sessionId, status, turn, inputRequests, ...} (eve-py's own)
GET  /                                     the browser chat
```

Turns run in the server process (see `eve_py.server.turns`): a `POST` that starts work returns
`202` once the work's first events are stored, with the message's `deliveryId` (every event of
the turn it starts carries it in `meta.deliveryIds`) and `startIndex`, the index of the first
event the request caused. The stream replays the stored events from `startIndex` (a negative
one counts from the end of the log) and follows the session live. It ends at the stored tail
with `follow=false`, after a terminal `session.completed`/`session.failed`, or once nothing
happened for `stream_lease_s` seconds (a client reconnects from its cursor, as eve's does);
readers stop at the turn boundary they wait for (`turn.waiting`, `session.waiting`) themselves.
Every streamed event is stored first, text deltas included, so `startIndex` counts every line.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from eve_py._wire import WireModel
from eve_py.errors import (
    ApiError,
    AuthenticationError,
    EveError,
    ModelConfigurationError,
    SessionNotFoundError,
    SessionStateError,
)
from eve_py.events import InputResolved, TurnStarted, new_id
from eve_py.harness.runtime import Runtime
from eve_py.server.auth import Authenticator, tokens_from_env
from eve_py.server.feed import follow_feed
from eve_py.server.guard import guard_middleware
from eve_py.server.hub import Hub
from eve_py.server.info import agent_info, health
from eve_py.server.owners import OwnerStore, owners_for
from eve_py.server.stream import NDJSON, STREAM_VERSION, StreamReader, start_index, stream_headers
from eve_py.server.turns import TurnRunner, TurnWork
from eve_py.server.wire import (
    CancelBody,
    CreateSessionBody,
    ResetBody,
    SessionInputBody,
    decode_json,
    error_body,
    error_status,
    parse_body,
    too_large,
)
from eve_py.sessions.feed import SessionFeed
from eve_py.sessions.record import SessionRecord

__all__ = ("API_PREFIX", "STATIC_DIR", "STREAM_VERSION", "create_app")

_log = logging.getLogger("eve_py.server")

API_PREFIX = "/eve/v1"
STATIC_DIR = Path(__file__).resolve().parent / "static"
"""The browser chat's files (shipped in the package)."""


def create_app(
    runtime: Runtime,
    *,
    tokens: Sequence[str] | None = None,
    owners: OwnerStore | None = None,
    max_body_bytes: int = 1_048_576,
    recheck_s: float = 5.0,
    stream_lease_s: float = 10.0,
    shutdown_grace_s: float = 5.0,
    chat_ui: bool = True,
    allowed_hosts: Sequence[str] | None = None,
    warn_unauthenticated: bool = True,
) -> Starlette:
    """Build the Starlette app serving `runtime`'s sessions over HTTP.

    Serve it with uvicorn (`eve-py serve` does). The app owns a task group for its lifetime (its
    lifespan), in which turns run; one app serves one lifespan.

    Args:
        runtime: The runtime; the app installs its own `on_event` listener (calling any listener
            the runtime had).
        tokens: Accepted bearer tokens, one principal each; None reads `EVE_API_TOKEN`
            (comma-separated). Empty: no authentication, so listen on loopback only.
        owners: Where session ownership is kept; defaults to a table in the SQLite store's file,
            or memory for a `MemorySessionStore`.
        max_body_bytes: Larger request bodies get 413.
        recheck_s: How often a stream following a turn that this process does not run (another
            server on the same store) re-reads the store, in seconds, and finishes that turn if
            its worker died. Turns run here wake their readers at once, and so do other
            processes' commits on a store with a `SessionFeed` (PostgreSQL).
        stream_lease_s: A stream with nothing new for this long ends (the client reconnects from
            its cursor); below eve's client's 15 s idle timeout.
        shutdown_grace_s: On shutdown, how long running turns may go on before they are cancelled.
        chat_ui: Serve the browser chat at `/`.
        allowed_hosts: `Host` header names the server answers to besides loopback names
            (`*.example.com` wildcards allowed); other hosts get 400. None: loopback names only
            when no token is configured (against DNS rebinding), any host with tokens. Without
            tokens, a request whose `Origin` is another site's also gets 403 (see
            `eve_py.server.guard`).
        warn_unauthenticated: Log a warning at startup when there are no tokens (`eve-py serve`
            turns it off: it says so itself, naming the address it listens on).

    Raises:
        UsageError: No default owner store fits the runtime's store (pass `owners=`).
    """
    api = _Api(
        runtime,
        Authenticator(tokens_from_env() if tokens is None else tokens),
        owners if owners is not None else owners_for(runtime.store),
        max_body_bytes=max_body_bytes,
        recheck_s=recheck_s,
        stream_lease_s=stream_lease_s,
    )
    owns_owners = owners is None

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if not api.auth.enabled and warn_unauthenticated:
            # `eve-py serve` refuses other hosts; an app served another way must be told too.
            _log.warning("no API token configured: every request is accepted; listen on loopback only")
        try:
            async with api.runner.running(grace_s=shutdown_grace_s), anyio.create_task_group() as feeds:
                if isinstance(runtime.store, SessionFeed):
                    await feeds.start(follow_feed, runtime.store, api.hub, api.runner)
                try:
                    yield
                finally:
                    feeds.cancel_scope.cancel()
        finally:
            api.closing = True
            if owns_owners:
                await api.owners.aclose()

    session = f"{API_PREFIX}/session/{{session_id}}"
    routes: list[Route | Mount] = [
        Route(f"{API_PREFIX}/health", api.health, methods=["GET", "HEAD"]),
        Route(f"{API_PREFIX}/info", api.info, methods=["GET"]),
        Route(f"{API_PREFIX}/session", api.create_session, methods=["POST"]),
        Route(session, api.get_session, methods=["GET"]),
        Route(session, api.post_session, methods=["POST"]),
        Route(f"{session}/stream", api.stream, methods=["GET"]),
        Route(f"{session}/cancel", api.cancel, methods=["POST"]),
        Route(f"{session}/clear", api.clear, methods=["POST"]),
        Route(f"{session}/reset", api.reset, methods=["POST"]),
        Route(f"{session}/compact", api.compact, methods=["POST"]),
    ]
    if chat_ui:
        routes += [
            Route("/", _index, methods=["GET"]),
            Route("/favicon.ico", _favicon, methods=["GET", "HEAD"]),
            Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
        ]
    app = Starlette(
        routes=routes,
        middleware=guard_middleware(authenticated=api.auth.enabled, allowed_hosts=allowed_hosts),
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_error, Exception: _internal_error},
    )
    app.state.eve = api
    return app


async def _index(request: Request) -> Response:
    return FileResponse(STATIC_DIR / "index.html", headers={"cache-control": "no-cache"})


async def _favicon(request: Request) -> Response:
    # Browsers ask for /favicon.ico whatever the page links; the chat's icon is an SVG.
    return FileResponse(
        STATIC_DIR / "favicon.svg", media_type="image/svg+xml", headers={"cache-control": "max-age=86400"}
    )


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    return JSONResponse({"ok": False, "error": exc.detail, "code": code}, status_code=exc.status_code)


async def _internal_error(request: Request, exc: Exception) -> Response:
    # The details stay in the server's log: they may name files, tables or other internals.
    _log.error("unexpected error serving %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse(
        {"ok": False, "error": "The server failed to handle the request; see its log.", "code": "internal_error"},
        status_code=500,
    )


def _error_response(exc: EveError) -> Response:
    status, _ = error_status(exc)
    headers = {"www-authenticate": 'Bearer realm="eve"'} if isinstance(exc, AuthenticationError) else None
    return JSONResponse(error_body(exc), status_code=status, headers=headers)


_Method = Callable[["_Api", Request], Awaitable[Response]]


def _json_errors(handler: _Method) -> _Method:
    """Turn the eve-py errors a handler raises into eve's `{ok: false, error, code}` responses."""

    async def wrapped(self: _Api, request: Request) -> Response:
        try:
            return await handler(self, request)
        except EveError as exc:
            return _error_response(exc)

    wrapped.__name__ = handler.__name__
    wrapped.__doc__ = handler.__doc__
    return wrapped


def _not_active(session_id: str) -> ApiError:
    return ApiError(f"The session {session_id!r} is no longer active.", status=409, code="session_not_active")


class _Api:
    """The route handlers and what they share."""

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

    # --- helpers -------------------------------------------------------------------------------

    def _principal(self, request: Request) -> str:
        principal = self.auth.principal(request.headers.get("authorization"))
        if principal is None:
            raise AuthenticationError(
                "Missing or wrong bearer token (send Authorization: Bearer <token>).", status=401, code="unauthorized"
            )
        return principal

    async def _owned(self, request: Request) -> str:
        """The path's session id, once the caller is known to own it (else 401/404)."""
        principal = self._principal(request)
        session_id = str(request.path_params["session_id"])
        if await self.owners.owner(session_id) != principal:
            raise SessionNotFoundError(session_id)
        return session_id

    async def _live(self, request: Request) -> str:
        """Like `_owned`, but an unknown session is eve's 409 `session_not_active`."""
        try:
            return await self._owned(request)
        except SessionNotFoundError:
            raise _not_active(str(request.path_params["session_id"])) from None

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

    async def _start(self, session_id: str, work: TurnWork, delivery_id: str | None = None) -> dict[str, Any]:
        """Start work in the background; the accepted payload with `deliveryId`, `turnId` and `startIndex`."""
        session = await self.runtime.get_session(session_id)
        started = await self.runner.start(session, work, until_turn=delivery_id is not None)
        payload: dict[str, Any] = {"ok": True, "sessionId": session_id, "status": "accepted"}
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
        self.runner.spawn(session, lambda s: s.resume())

    async def _recover_quiet(self, session_id: str) -> None:
        """A stream saw nothing for a while: finish the session's turn if its worker died meanwhile."""
        if not self.closing and not self.runner.busy(session_id):
            try:
                await self._recover(await self.runtime.store.load(session_id))
            except ApiError:
                pass  # shutting down: the next server on the store recovers it

    def _settled(self, record: SessionRecord) -> bool:
        """Whether the session's turn settled: nothing runs here, and nobody else holds a live lease."""
        if self.runner.busy(record.id):
            return False
        return record.status != "running" or not record.lease_held()

    # --- routes --------------------------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        """`GET|HEAD /health`: public, eve's `{ok: true, status: "ready", workflowId}`."""
        return JSONResponse(health(self.runtime.agent))

    @_json_errors
    async def info(self, request: Request) -> Response:
        """`GET /info`: eve's agent-info document (needs the same token as the session routes)."""
        self._principal(request)
        try:
            model_id: str | None = self.runtime.model.name
        except ModelConfigurationError:
            model_id = None
        return JSONResponse(agent_info(self.runtime.agent, model_id=model_id))

    @_json_errors
    async def create_session(self, request: Request) -> Response:
        """`POST /session`: create a session owned by the caller, optionally starting a turn."""
        principal = self._principal(request)
        body = parse_body(CreateSessionBody, await self._body(request))
        session_id = new_id("ses")
        await self.owners.claim(session_id, principal)
        with self.runner.attribute(session_id):
            session = await self.runtime.create_session(session_id)
        payload: dict[str, Any] = {"ok": True, "sessionId": session.id, "status": "accepted"}
        parts = body.message_parts()
        if parts is not None:
            delivery_id = new_id("dlv")
            context, schema = body.client_context, body.output_schema
            payload = await self._start(
                session.id,
                lambda s: s.send(parts, client_context=context, output_schema=schema, delivery_id=delivery_id),
                delivery_id,
            )
        return JSONResponse(payload, status_code=202, headers={"x-eve-session-id": session.id})

    @_json_errors
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

    @_json_errors
    async def post_session(self, request: Request) -> Response:
        """`POST /session/{id}`: a follow-up `message`, or `inputResponses` for the parked batch."""
        session_id = await self._live(request)
        body = parse_body(SessionInputBody, await self._body(request))
        record = await self.runtime.store.load(session_id)
        if record.status == "ended":
            raise _not_active(session_id)
        if record.status == "running" and not self.runner.busy(session_id) and self._settled(record):
            await self._recover(record)
            raise ApiError(
                "The session's last turn stopped with its worker and is being finished now; send this again "
                "once it settles (follow the stream).",
                status=409,
                code="session_not_ready",
            )
        context, schema = body.client_context, body.output_schema
        work: TurnWork
        delivery_id = None
        if body.input_responses is not None:
            responses = body.input_responses
            work = lambda s: s.respond(responses, client_context=context, output_schema=schema)  # noqa: E731
        else:
            parts = body.message_parts()
            assert parts is not None
            delivery_id = new_id("dlv")
            work = lambda s: s.send(  # noqa: E731
                parts, client_context=context, output_schema=schema, delivery_id=delivery_id
            )
        payload = await self._start(session_id, work, delivery_id)
        return JSONResponse(payload, status_code=202, headers={"x-eve-session-id": session_id})

    @_json_errors
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

    @_json_errors
    async def clear(self, request: Request) -> Response:
        """`POST /session/{id}/clear`: remove the session's history (`context.cleared`)."""
        session_id = await self._live(request)
        parse_body(WireModel, await self._body(request))
        session = await self.runtime.get_session(session_id)
        if session.status == "ended":
            return JSONResponse({"ok": True, "status": "no_active_session"})
        if self.runner.busy(session_id):
            raise SessionStateError("A turn is running; clear the session once it settles.", status="running")
        with self.runner.attribute(session_id):
            await session.clear()
        return JSONResponse({"ok": True, "sessionId": session_id, "status": "accepted"}, status_code=202)

    @_json_errors
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

    @_json_errors
    async def compact(self, request: Request) -> Response:
        """`POST /session/{id}/compact`: eve-py does not summarize sessions; 501."""
        await self._live(request)
        raise ApiError(
            "eve-py does not compact sessions (no summarizing model step); use clear to drop the history.",
            status=501,
            code="unsupported",
        )

    @_json_errors
    async def stream(self, request: Request) -> Response:
        """`GET /session/{id}/stream?startIndex=N`: the event log as NDJSON, then live events."""
        session_id = await self._owned(request)
        query = request.query_params
        start = start_index(query.get("startIndex", "0"))
        follow = query.get("follow", "true").lower() not in ("false", "0")
        record = await self.runtime.store.load(session_id)
        await self._recover(record)
        if start < 0:
            start = max(0, record.event_count + start)
        tail = record.event_count - 1
        with_tail = not follow or query.get("includeTailIndex") in ("1", "true")
        reader = StreamReader(
            self.runtime.store,
            self.hub.subscribe(session_id),  # before the first read: no commit is missed
            lease_s=self.stream_lease_s,
            recheck_s=self.recheck_s,
            closing=lambda: self.closing,
            unsubscribe=self.hub.unsubscribe,
            on_quiet=lambda: self._recover_quiet(session_id),
        )
        body = reader.lines(start, stop=None if follow else tail + 1, control=query.get("streamControlVersion") == "1")
        headers = stream_headers(session_id, start, tail if with_tail else None)
        return StreamingResponse(body, media_type=NDJSON, headers=headers)
