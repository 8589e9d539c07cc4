"""Serving an MCP server over the SDK's transports: stdio, and streamable HTTP on uvicorn.

Stdio speaks on standard input and output only (nothing else may be printed there). HTTP
serves the SDK's streamable-HTTP app at `/mcp` on both protocol eras; on a loopback host the
SDK's DNS-rebinding protection is on (only `127.0.0.1`, `localhost` and `[::1]` hosts and
origins are accepted). Header values reach the SDK without the whitespace around them
(`eve_py._fields`), as RFC 9110 reads them, on either of uvicorn's HTTP parsers.
"""

from __future__ import annotations

import socket
from typing import Any

import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from starlette.applications import Starlette

from eve_py._fields import FieldValues

__all__ = ("MCP_PATH", "http_app", "serve_http", "serve_stdio")

MCP_PATH = "/mcp"
"""Where the streamable-HTTP endpoint lives (the SDK's default)."""


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one client on this process's stdin/stdout until it closes them."""
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


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
