"""`create_app`: the HTTP session API on eve 0.80.1's wire, and the browser chat.

eve's own `Client` and `useEveAgent` drive it unchanged.

```
GET|HEAD /eve/v1/health                    -> 200 {ok: true, status: "ready", workflowId}
GET  /eve/v1/info                          -> 200 eve's agent-info document (see `eve_py.server._info`)
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
POST /eve/v1/session/{id}/links {requestId, expiresAfter?}
                                           -> 201 {ok, token, url, expiresAt} (a signed answer link; eve-py's own)
GET|POST /eve/v1/answer/{token}            the linked request (JSON, or its page) | answer it: 202 (no API token;
                                           see `eve_py.server._links`)
GET|POST /eve/v1/approvals                 the approvals waiting for the caller across sessions | answer
                                           them (see `eve_py.server._approvals`)
POST /ai-sdk/chat                          the Vercel AI SDK's `useChat` (see `eve_py.server._ai_sdk`)
GET  /                                     the browser chat
```

Turns run in the server process (see `eve_py.server._turns`): a `POST` that starts work returns
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

import functools
import gc
import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from eve_py.harness import Runtime
from eve_py.server._ag_ui import AgUi
from eve_py.server._ai_sdk import AiSdkChat
from eve_py.server._approvals import Approvals
from eve_py.server._auth import Authenticator, tokens_from_env
from eve_py.server._feed import follow_feed
from eve_py.server._guard import guard_middleware
from eve_py.server._links import AnswerLinks, hide_answer_tokens
from eve_py.server._owners import OwnerStore, owners_for
from eve_py.server._routes import LEGACY_PREFIX, Api
from eve_py.server._stream import STREAM_VERSION
from eve_py.sessions._feed import SessionFeed

__all__ = ("API_PREFIX", "LEGACY_PREFIX", "STATIC_DIR", "STREAM_VERSION", "create_app")

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
        runtime: The runtime; the app adds its own listeners to it (`Runtime.add_listener`), after
            the runtime's `on_event` and `on_live`.
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
            `eve_py.server._guard`).
        warn_unauthenticated: Log a warning at startup when there are no tokens (`eve-py serve`
            turns it off: it says so itself, naming the address it listens on).

    Raises:
        UsageError: No default owner store fits the runtime's store (pass `owners=`).
    """
    api = Api(
        runtime,
        Authenticator(tokens_from_env() if tokens is None else tokens),
        owners if owners is not None else owners_for(runtime.store),
        max_body_bytes=max_body_bytes,
        recheck_s=recheck_s,
        stream_lease_s=stream_lease_s,
    )
    if not api.auth.enabled and warn_unauthenticated:
        # `eve-py serve` refuses other hosts; an app served another way must be told too.
        _log.warning("no API token configured: every request is accepted; listen on loopback only")
    app = Starlette(
        routes=_routes(api, chat_ui=chat_ui),
        middleware=guard_middleware(authenticated=api.auth.enabled, allowed_hosts=allowed_hosts),
        lifespan=functools.partial(_lifespan, api, grace_s=shutdown_grace_s, owns_owners=owners is None),
        exception_handlers={HTTPException: _http_error, Exception: _internal_error},
    )
    app.state.eve = api
    hide_answer_tokens()  # whoever serves the app, an access log never keeps a link's token
    return app


def _routes(api: Api, *, chat_ui: bool) -> list[Route | Mount]:
    """Every route: eve's session API on eve 1.0's wire and, under `LEGACY_PREFIX`, on eve 0.80.1's,
    then the browser chat's page and files."""
    routes: list[Route | Mount] = [
        *_eve_routes(api, API_PREFIX, chat_ui=chat_ui),
        *_eve_routes(api, LEGACY_PREFIX + API_PREFIX, chat_ui=chat_ui),
        *AgUi(api).routes(),
        *AiSdkChat(api).routes(),
    ]
    if chat_ui:
        routes += [
            Route("/", _index, methods=["GET"]),
            Route("/favicon.ico", _favicon, methods=["GET", "HEAD"]),
            Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
        ]
    return routes


def _eve_routes(api: Api, prefix: str, *, chat_ui: bool) -> list[Route | Mount]:
    """eve's session routes under `prefix`; each handler reads the wire from the path (`wire_of`)."""
    session = f"{prefix}/session/{{session_id}}"
    links = AnswerLinks(api, page=chat_ui)
    approvals = Approvals(api)
    return [
        Route(f"{prefix}/health", api.health, methods=["GET", "HEAD"]),
        Route(f"{prefix}/info", api.info, methods=["GET"]),
        Route(f"{prefix}/session", api.create_session, methods=["POST"]),
        Route(session, api.get_session, methods=["GET"]),
        Route(session, api.post_session, methods=["POST"]),
        Route(f"{session}/stream", api.stream, methods=["GET"]),
        Route(f"{session}/cancel", api.cancel, methods=["POST"]),
        Route(f"{session}/clear", api.clear, methods=["POST"]),
        Route(f"{session}/end", api.reset, methods=["POST"]),
        Route(f"{session}/reset", api.reset, methods=["POST"]),
        Route(f"{session}/compact", api.compact, methods=["POST"]),
        Route(f"{session}/links", links.create, methods=["POST"]),
        Route(f"{prefix}/answer/{{token}}", links.show, methods=["GET"]),
        Route(f"{prefix}/answer/{{token}}", links.answer, methods=["POST"]),
        Route(f"{prefix}/approvals", approvals.list, methods=["GET"]),
        Route(f"{prefix}/approvals", approvals.answer, methods=["POST"]),
    ]


_GC_THRESHOLDS = (20_000, 20, 20)
"""The garbage collector's thresholds while an app runs (Python's are `(700, 10, 10)`).

A request allocates thousands of short-lived objects, and the sessions' records, events and
conversations kept in caches make every older-generation collection long: with Python's
thresholds the collector took about 15 % of a loaded server's CPU, nearly all of it in the
older generations (see docs/performance.md, issue 25 step 7). Collecting the youngest
generation after 20,000 allocations lets most of a request's objects die before any
collection sees them. Cycles are still collected, less often.
"""

_running_apps = 0
_thresholds_before = gc.get_threshold()


@contextmanager
def _collector_thresholds() -> Iterator[None]:
    """`_GC_THRESHOLDS` while any app runs in this process; the thresholds it had before once the last one stops."""
    global _running_apps, _thresholds_before
    if not _running_apps:
        _thresholds_before = gc.get_threshold()
        gc.set_threshold(*_GC_THRESHOLDS)
    _running_apps += 1
    try:
        yield
    finally:
        _running_apps -= 1
        if not _running_apps:
            gc.set_threshold(*_thresholds_before)


@asynccontextmanager
async def _lifespan(api: Api, app: Starlette, *, grace_s: float, owns_owners: bool) -> AsyncIterator[None]:
    """The app's lifetime: the task group turns run in, and one for the feed of other workers' commits and
    the streams' disconnect listeners."""
    store = api.runtime.store
    try:
        with _collector_thresholds():
            async with (
                api.runner.running(grace_s=grace_s),
                api.runtime.expiring(api.runner.expire),
                anyio.create_task_group() as background,
            ):
                if isinstance(store, SessionFeed):
                    await background.start(follow_feed, store, api.hub, api.runner)
                api.listeners = background
                try:
                    yield
                finally:
                    background.cancel_scope.cancel()
    finally:
        api.listeners = None
        api.closing = True
        if owns_owners:
            await api.owners.aclose()


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
