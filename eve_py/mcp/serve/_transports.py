"""Serving an MCP server over the SDK's transports: stdio, and streamable HTTP on uvicorn.

Stdio speaks on standard input and output only (nothing else may be printed there). HTTP
serves the SDK's streamable-HTTP app at `/mcp` on both protocol eras; on a loopback host the
SDK's DNS-rebinding protection is on (only `127.0.0.1`, `localhost` and `[::1]` hosts and
origins are accepted). Header values reach the SDK without the whitespace around them
(`eve_py._fields`), as RFC 9110 reads them, on either of uvicorn's HTTP parsers.

On stdio a line that is not a JSON-RPC message gets JSON-RPC's `-32700 Parse error` (with a
null id) and a warning on standard error, where the SDK's transport would drop it silently.
"""

from __future__ import annotations

import logging
import socket
from types import TracebackType
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from starlette.applications import Starlette

from eve_py._fields import FieldValues

__all__ = ("MCP_PATH", "http_app", "serve_http", "serve_stdio")

MCP_PATH = "/mcp"
"""Where the streamable-HTTP endpoint lives (the SDK's default)."""


logger = logging.getLogger(__name__)


class _ParseErrors:
    """The stdio transport's read stream, answering each line it could not read as a JSON-RPC
    message with `-32700` instead of passing the error on (the SDK's session drops it unanswered)."""

    def __init__(self, inner: Any, write: Any) -> None:
        self._inner = inner
        self._write = write

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def _refuse(self, error: Exception) -> None:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        logger.warning("a line on stdin is not a JSON-RPC message: %s", reason)
        refusal = types.JSONRPCError(
            jsonrpc="2.0",
            id=None,
            error=types.ErrorData(
                code=types.PARSE_ERROR, message=f"Parse error: the line is not a JSON-RPC message ({reason})"
            ),
        )
        await self._write.send(SessionMessage(refusal))

    async def receive(self) -> SessionMessage:
        while isinstance(item := await self._inner.receive(), Exception):
            await self._refuse(item)
        return item  # type: ignore[no-any-return]

    def __aiter__(self) -> _ParseErrors:
        return self

    async def __anext__(self) -> SessionMessage:
        while isinstance(item := await self._inner.__anext__(), Exception):
            await self._refuse(item)
        return item  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _ParseErrors:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one client on this process's stdin/stdout until it closes them."""
    async with stdio_server() as (read, write):
        await server.run(_ParseErrors(read, write), write, server.create_initialization_options())


def http_app(server: Server[Any], *, host: str = "127.0.0.1") -> Starlette:
    """The SDK's streamable-HTTP ASGI app for `server`, at `/mcp`.

    Args:
        host: The host it listens on; a loopback host turns the SDK's DNS-rebinding checks on.
    """
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    # Outermost: the SDK's `Host` and `Mcp-Name` checks compare header values as HTTP defines them.
    app.add_middleware(FieldValues)
    return app


def serve_http(server: Server[Any], sock: socket.socket, *, host: str, log_level: str = "warning") -> None:
    """Serve `server` over streamable HTTP on an already bound socket until SIGINT/SIGTERM.

    Raises:
        KeyboardInterrupt: On SIGINT, once uvicorn has shut down gracefully.
    """
    config = uvicorn.Config(http_app(server, host=host), log_level=log_level, lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
