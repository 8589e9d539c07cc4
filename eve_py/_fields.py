"""`FieldValues`: ASGI middleware handing on header values as HTTP defines them, without the whitespace around them.

RFC 9110 section 5.5: a field value excludes the optional whitespace (spaces and horizontal tabs)
before and after it. uvicorn's h11 parser strips it; its httptools parser, the one
`eve-py[server]` installs, keeps what follows a value (`Host: localhost \\t` reaches the app
as `localhost \\t`). Behind this middleware every reader of a header (eve-py's routes,
Starlette's `TrustedHostMiddleware`, the MCP SDK's `Host` and `Mcp-Name` checks) sees the same
value whichever parser the server runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ("FieldValues", "field_values")

_OWS = b" \t"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def field_values(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """`headers` (an ASGI scope's `(name, value)` pairs) with each value's surrounding spaces and tabs removed."""
    return [(name, value.strip(_OWS)) for name, value in headers]


class FieldValues:
    """ASGI middleware: the app sees every request header's value stripped of surrounding whitespace.

    Args:
        app: The ASGI app to call with the cleaned scope (a copy; the server's own is left alone).
    """

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            headers = scope["headers"]
            cleaned = field_values(headers)
            if cleaned != headers:
                scope = {**scope, "headers": cleaned}
        await self.app(scope, receive, send)
