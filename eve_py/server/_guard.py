"""What keeps other web pages out of a server that has no API token: its Host and Origin checks.

With no token, a request needs nothing but network access to the server's socket. A browser
gives any web page that access to `127.0.0.1` in two ways:

- **Cross-site requests.** A page on `http://evil.example` may POST to
  `http://127.0.0.1:8000/eve/v1/session` with `fetch(..., {mode: "no-cors"})` or a form: the
  browser sends it (with `Content-Type: text/plain`, which needs no CORS preflight) and merely
  hides the answer. Browsers name the page's site in the `Origin` header of every such request,
  so a request whose `Origin` is not the server's own is refused (403 `forbidden_origin`).
- **DNS rebinding.** `evil.example` is made to resolve to `127.0.0.1`; the page is then
  same-origin with the server as far as the browser knows, but its requests carry
  `Host: evil.example:8000`. Requests whose `Host` is not a loopback name or one the operator
  listed (`create_app(allowed_hosts=...)`, `eve-py serve --allowed-host`) are refused (400), by
  Starlette's `TrustedHostMiddleware`.

Bodies must also be sent as `application/json` (415 otherwise; see `eve_py.server._routes`), the one body
type a cross-site page cannot send without a preflight that this server never grants.

With API tokens configured the token is the guard: a page elsewhere cannot read it, and
browsers never attach a bearer token on their own. The checks are then off unless
`allowed_hosts` is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from eve_py._fields import FieldValues

__all__ = ("LOOPBACK_HOSTS", "SameOriginOnly", "guard_middleware", "same_origin")

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
"""`Host` names that only a page served from this machine's loopback can send."""

_DEFAULT_PORTS = {"http": ":80", "https": ":443"}


def same_origin(origin: str, host: str | None) -> bool:
    """Whether an `Origin` header names the site whose `Host` header this request carries.

    The scheme is not compared (a TLS-terminating proxy forwards `https` pages' requests over
    `http`); host and port are, a default port counting as absent. `Origin: null` (a sandboxed
    frame, a file) is never the server's own.
    """
    parts = urlsplit(origin.strip())
    if parts.scheme not in _DEFAULT_PORTS or not parts.netloc or host is None:
        return False
    default = _DEFAULT_PORTS[parts.scheme]
    return parts.netloc.lower().removesuffix(default) == host.strip().lower().removesuffix(default)


class SameOriginOnly:
    """ASGI middleware: a request whose `Origin` is another site's gets 403 `forbidden_origin`.

    Requests without an `Origin` header (curl, eve's client, same-origin GETs) pass.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            origin = headers.get("origin")
            if origin is not None and not same_origin(origin, headers.get("host")):
                shown = origin.encode("ascii", "backslashreplace").decode()[:200]
                body = {
                    "ok": False,
                    "error": f"Requests from other sites ({shown}) are refused: this server has no API token, "
                    "so only its own pages may call it (set EVE_API_TOKEN to serve other clients).",
                    "code": "forbidden_origin",
                }
                await JSONResponse(body, status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def guard_middleware(*, authenticated: bool, allowed_hosts: Sequence[str] | None) -> list[Middleware]:
    """The header clean-up and the Host and Origin checks for an app, outermost first.

    Args:
        authenticated: Whether API tokens are configured (then only explicit hosts are checked).
        allowed_hosts: `Host` names besides `LOOPBACK_HOSTS` (`*.example.com` wildcards allowed);
            None: loopback names only without tokens, any host with them.
    """
    # First: the checks (and every route) read header values as HTTP defines them, whichever parser runs.
    guards = [Middleware(FieldValues)]
    if allowed_hosts is not None or not authenticated:
        hosts = [*LOOPBACK_HOSTS, *(allowed_hosts or ())]
        guards.append(Middleware(TrustedHostMiddleware, allowed_hosts=hosts, www_redirect=False))
    if not authenticated:
        guards.append(Middleware(SameOriginOnly))
    return guards
