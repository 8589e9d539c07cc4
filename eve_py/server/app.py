"""`create_app`: the HTTP session API (vercel/eve's session protocol) and the browser chat.

```
GET  /eve/v1/health                        -> 200 {ok, status, agent}
POST /eve/v1/session             {message?} -> 202 {ok, sessionId, status, turnId?, startIndex?}
GET  /eve/v1/session/{id}                  -> 200 {sessionId, status, turn, inputRequests, eventCount, ...}
POST /eve/v1/session/{id}        {message} | {inputResponses}
                                           -> 202 {ok, sessionId, status: "accepted", turnId, startIndex}
GET  /eve/v1/session/{id}/stream?startIndex=N  -> NDJSON, one event per line
POST /eve/v1/session/{id}/cancel {turnId?} -> 202 {ok, sessionId, status: "accepted"}
                                           |  200 {status: "no_active_turn"}
GET  /                                     the browser chat
```

Turns run in the server process (see `eve_py.server.turns`): a `POST` that starts work returns
`202` once the work's first events are stored, and `startIndex` is the index of the first of
them, so `GET .../stream?startIndex=N` shows exactly what the request caused. The stream
replays the stored events from `startIndex` (a negative one counts from the end of the log),
then follows the session live, `message.delta` events included, until its turn settles
(parks, completes, fails or is cancelled). Deltas are never stored and do not count in
`startIndex`; a client that reconnects from the index after the last stored event it got
loses nothing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from eve_py.errors import ApiError, AuthenticationError, EveError, SessionNotFoundError
from eve_py.events import Event, new_id
from eve_py.harness.runtime import Runtime
from eve_py.server.auth import Authenticator, tokens_from_env
from eve_py.server.hub import WAKE, Hub
from eve_py.server.owners import OwnerStore, owners_for
from eve_py.server.turns import IndexingStore, TurnRunner, TurnWork
from eve_py.server.wire import (
    CancelBody,
    CreateSessionBody,
    SessionInputBody,
    bad_request,
    error_body,
    error_status,
    parse_body,
)
from eve_py.sessions.record import SessionRecord
from eve_py.sessions.store import SessionStore

__all__ = ("API_PREFIX", "STATIC_DIR", "STREAM_VERSION", "create_app")

_log = logging.getLogger("eve_py.server")

API_PREFIX = "/eve/v1"
STREAM_VERSION = "1"
"""The `x-eve-stream-version` header of every stream."""
STATIC_DIR = Path(__file__).resolve().parent / "static"
"""The browser chat's files (shipped in the package)."""

_NDJSON = "application/x-ndjson"


def create_app(
    runtime: Runtime,
    *,
    tokens: Sequence[str] | None = None,
    owners: OwnerStore | None = None,
    max_body_bytes: int = 1_048_576,
    recheck_s: float = 5.0,
    shutdown_grace_s: float = 5.0,
    chat_ui: bool = True,
) -> Starlette:
    """Build the Starlette app serving `runtime`'s sessions over HTTP.

    Serve it with uvicorn (`eve-py serve` does). The app owns a task group for its lifetime (its
    lifespan), in which turns run; one app serves one lifespan.

    Args:
        runtime: The runtime; the app installs its own `on_event` listener (calling any listener
            the runtime had) and wraps `runtime.store` to learn where each request's events land
            in the log.
        tokens: Accepted bearer tokens, one principal each; None reads `EVE_API_TOKEN`
            (comma-separated). Empty: no authentication, so listen on loopback only.
        owners: Where session ownership is kept; defaults to a table in the SQLite store's file,
            or memory for a `MemorySessionStore`.
        max_body_bytes: Larger request bodies get 413.
        recheck_s: How often a stream following a turn that this process does not run (another
            server on the same store) re-reads the store, in seconds. Turns run here wake their
            readers at once.
        shutdown_grace_s: On shutdown, how long running turns may go on before they are cancelled.
        chat_ui: Serve the browser chat at `/`.

    Raises:
        UsageError: No default owner store fits the runtime's store (pass `owners=`).
    """
    api = _Api(
        runtime,
        Authenticator(tokens_from_env() if tokens is None else tokens),
        owners if owners is not None else owners_for(_unwrapped(runtime.store)),
        max_body_bytes=max_body_bytes,
        recheck_s=recheck_s,
    )
    owns_owners = owners is None

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if not api.auth.enabled:
            # `eve-py serve` refuses other hosts; an app served another way must be told too.
            _log.warning("no API token configured: every request is accepted; listen on loopback only")
        try:
            async with api.runner.running(grace_s=shutdown_grace_s):
                yield
        finally:
            if owns_owners:
                await api.owners.aclose()

    routes: list[Route | Mount] = [
        Route(f"{API_PREFIX}/health", api.health, methods=["GET"]),
        Route(f"{API_PREFIX}/session", api.create_session, methods=["POST"]),
        Route(f"{API_PREFIX}/session/{{session_id}}", api.get_session, methods=["GET"]),
        Route(f"{API_PREFIX}/session/{{session_id}}", api.post_session, methods=["POST"]),
        Route(f"{API_PREFIX}/session/{{session_id}}/stream", api.stream, methods=["GET"]),
        Route(f"{API_PREFIX}/session/{{session_id}}/cancel", api.cancel, methods=["POST"]),
    ]
    if chat_ui:
        routes += [
            Route("/", _index, methods=["GET"]),
            Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
        ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_error, Exception: _internal_error},
    )
    app.state.eve = api
    return app


async def _index(request: Request) -> Response:
    return FileResponse(STATIC_DIR / "index.html", headers={"cache-control": "no-cache"})


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    return JSONResponse({"error": {"code": code, "message": exc.detail}}, status_code=exc.status_code)


async def _internal_error(request: Request, exc: Exception) -> Response:
    # The details stay in the server's log: they may name files, tables or other internals.
    _log.error("unexpected error serving %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse(
        {"error": {"code": "internal_error", "message": "The server failed to handle the request; see its log."}},
        status_code=500,
    )


def _error_response(exc: EveError) -> Response:
    status, _ = error_status(exc)
    headers = {"www-authenticate": 'Bearer realm="eve"'} if isinstance(exc, AuthenticationError) else None
    return JSONResponse(error_body(exc), status_code=status, headers=headers)


_Method = Callable[["_Api", Request], Awaitable[Response]]


def _json_errors(handler: _Method) -> _Method:
    """Turn the eve-py errors a handler raises into `{error: {code, message}}` responses."""

    async def wrapped(self: _Api, request: Request) -> Response:
        try:
            return await handler(self, request)
        except EveError as exc:
            return _error_response(exc)

    wrapped.__name__ = handler.__name__
    wrapped.__doc__ = handler.__doc__
    return wrapped


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
    ) -> None:
        self.runtime = runtime
        self.auth = auth
        self.owners = owners
        self.hub = Hub()
        self.runner = TurnRunner(runtime, self.hub)
        self.max_body_bytes = max_body_bytes
        self.recheck_s = recheck_s

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

    async def _body(self, request: Request) -> Any:
        """The decoded JSON body, None when empty (400 on bad JSON, 413 when too large)."""
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            raise _too_large(self.max_body_bytes)
        raw = bytearray()
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > self.max_body_bytes:
                raise _too_large(self.max_body_bytes)
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise bad_request(f"The body is not valid JSON: {exc}") from exc

    async def _start(self, session_id: str, work: TurnWork) -> dict[str, Any]:
        """Start work in the background; the accepted payload with `turnId` and `startIndex`."""
        started = await self.runner.start(await self.runtime.get_session(session_id), work)
        payload: dict[str, Any] = {"ok": True, "sessionId": session_id, "status": "accepted"}
        if started.start_index is not None:
            payload["startIndex"] = started.start_index
        # A message to a waiting session first settles the old turn's batch; the new turn is the
        # one `turn.started` names, announced ahead as `nextTurnId` by that settling.
        for key in ("nextTurnId", "turnId"):
            ids = [event.data.get(key) for event in started.events]
            turn_id = next((i for i in ids if isinstance(i, str)), None)
            if turn_id is not None:
                payload["turnId"] = turn_id
                break
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

    def _settled(self, record: SessionRecord) -> bool:
        """Whether the session's turn settled: nothing runs here, and nobody else holds a live lease."""
        if self.runner.busy(record.id):
            return False
        return record.status != "running" or not record.lease_held()

    # --- routes --------------------------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        """`GET /health`."""
        return JSONResponse({"ok": True, "status": "ok", "agent": self.runtime.agent.name})

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
        message = body.message
        if message is not None:
            payload = await self._start(session.id, lambda s: s.send(message))
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
        session_id = await self._owned(request)
        body = parse_body(SessionInputBody, await self._body(request))
        record = await self.runtime.store.load(session_id)
        if record.status == "running" and not self.runner.busy(session_id) and self._settled(record):
            await self._recover(record)
            raise ApiError(
                "The session's last turn stopped with its worker and is being finished now; send this again "
                "once it settles (follow the stream).",
                status=409,
                code="session_not_ready",
            )
        work: TurnWork
        if body.input_responses is not None:
            responses = body.input_responses
            work = lambda s: s.respond(responses)  # noqa: E731
        else:
            message = body.message
            assert message is not None
            work = lambda s: s.send(message)  # noqa: E731
        payload = await self._start(session_id, work)
        return JSONResponse(payload, status_code=202, headers={"x-eve-session-id": session_id})

    @_json_errors
    async def cancel(self, request: Request) -> Response:
        """`POST /session/{id}/cancel`: cancel the running turn (a parked one is left as it is)."""
        session_id = await self._owned(request)
        body = parse_body(CancelBody, await self._body(request))
        await self.runtime.store.load(session_id)
        if await self.runner.cancel(session_id, body.turn_id):
            return JSONResponse({"ok": True, "sessionId": session_id, "status": "accepted"}, status_code=202)
        return JSONResponse({"status": "no_active_turn"}, status_code=200)

    @_json_errors
    async def stream(self, request: Request) -> Response:
        """`GET /session/{id}/stream?startIndex=N`: the event log as NDJSON, live until the turn settles."""
        session_id = await self._owned(request)
        raw_start = request.query_params.get("startIndex", "0")
        try:
            start = int(raw_start)
        except ValueError:
            raise bad_request(f"startIndex must be an integer, got {raw_start!r}") from None
        record = await self.runtime.store.load(session_id)
        await self._recover(record)
        if start < 0:
            start = max(0, record.event_count + start)
        headers = {
            "x-eve-session-id": session_id,
            "x-eve-stream-version": STREAM_VERSION,
            "x-eve-start-index": str(start),
            "cache-control": "no-store",
            "x-accel-buffering": "no",
        }
        return StreamingResponse(self._follow(session_id, start), media_type=_NDJSON, headers=headers)

    async def _follow(self, session_id: str, start: int) -> AsyncIterator[bytes]:
        """Stored events from `start`, then live ones, until the session's turn settles."""
        subscriber = self.hub.subscribe(session_id)  # before the first read: no commit is missed
        try:
            cursor = start
            deltas = _DeltaFilter()
            read = True
            while True:
                if read:
                    events = await self.runtime.store.read_events(session_id, cursor)
                    if events:
                        cursor += len(events)
                        deltas.saw(events)
                        yield b"".join(_line(event) for event in events)
                    read = False
                    if self.runner.busy(session_id):
                        continue  # work runs here: its every commit, and its end, wake this reader
                    if events and _ends_turn(events[-1]):
                        return  # nothing runs here and the log's last event settled the turn
                    record = await self.runtime.store.load(session_id)
                    if cursor < record.event_count:
                        read = True  # committed between the two reads
                        continue
                    if self._settled(record):
                        return
                item = await subscriber.get(self.recheck_s)
                if item is None or item is WAKE:
                    read = True
                elif isinstance(item, Event) and not deltas.stale(item):
                    yield _line(item)
        finally:
            self.hub.unsubscribe(subscriber)


def _unwrapped(store: SessionStore) -> SessionStore:
    return store.inner if isinstance(store, IndexingStore) else store


def _ends_turn(event: Event) -> bool:
    """Whether the event is the last one of a settled turn (parked, completed, failed, cancelled)."""
    if event.type == "turn.completed":
        return event.data.get("status") == "completed"
    return event.type in ("session.waiting", "turn.failed", "turn.cancelled")


def _too_large(limit: int) -> EveError:
    return ApiError(f"The body is larger than {limit} bytes.", status=413, code="payload_too_large")


def _line(event: Event) -> bytes:
    return event.model_dump_json(by_alias=True).encode("utf-8") + b"\n"


class _DeltaFilter:
    """Drops a live delta whose step the reader already got from the store (its `step.started`)."""

    def __init__(self) -> None:
        self._steps: dict[str, int] = {}
        self._ended: set[str] = set()

    def saw(self, events: Sequence[Event]) -> None:
        for event in events:
            turn_id = event.data.get("turnId")
            if not isinstance(turn_id, str):
                continue
            if event.type == "step.started":
                step = event.data.get("stepIndex")
                if isinstance(step, int):
                    self._steps[turn_id] = max(step, self._steps.get(turn_id, -1))
            elif event.type in ("turn.failed", "turn.cancelled"):
                self._ended.add(turn_id)

    def stale(self, delta: Event) -> bool:
        turn_id = delta.data.get("turnId")
        step = delta.data.get("stepIndex")
        if not isinstance(turn_id, str) or not isinstance(step, int):
            return False
        return turn_id in self._ended or step <= self._steps.get(turn_id, -1)
