"""`define_mcp_server`: an MCP server whose tools an agent may call, declared in `agent/connections/`.

```python
# agent/connections/desk.py: the server's tools join the agent as desk__<tool>
import sys
from eve_py.mcp import define_mcp_server

server = define_mcp_server(command=[sys.executable, "-m", "eve_py", "mcp", "../refund-desk-mcp"])
# or: define_mcp_server(url="https://mcp.example.com/mcp", bearer_env="DESK_TOKEN")
```

Secrets never sit in the file: headers and the bearer token name environment variables, read
when a connection opens. The connection is opened on the first call and kept for the process
(`_sessions`); each call is bounded by `timeout_s`. The server's roots requests are answered
with `roots` (paths under the app folder, or URIs).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from mcp import StdioServerParameters
from mcp.client import Client
from mcp.client.session import ElicitationFnT, ListRootsFnT, SamplingFnT
from mcp.client.streamable_http import streamable_http_client

from eve_py.errors import ToolDefinitionError, ToolError

__all__ = ("McpServerDefinition", "define_mcp_server", "open_client")


@dataclass(frozen=True, kw_only=True)
class McpServerDefinition:
    """An MCP server an agent connects to. Make one with `define_mcp_server`."""

    command: tuple[str, ...] | None = None
    """The stdio command and its arguments (run in the app folder), or None for `url`."""
    url: str | None = None
    """The streamable-HTTP endpoint, or None for `command`."""
    headers_env: Mapping[str, str] = field(default_factory=dict)
    """HTTP header name -> the environment variable holding its value."""
    bearer_env: str | None = None
    """The environment variable holding a bearer token (sent as `Authorization: Bearer ...`)."""
    env: tuple[str, ...] = ()
    """Environment variables passed on to a stdio command (besides the SDK's safe defaults)."""
    prefix: str | None = None
    """Tools join as `<prefix>__<tool>`; the connection file's name by default."""
    timeout_s: float = 30.0
    """How long one call (connect, every round, the result) may take before it fails."""
    needs_approval: bool = False
    """Whether every call of this server's tools needs a person's approval first."""
    roots: tuple[str, ...] = ()
    """What the server's `roots/list` requests are answered with: `file://` URIs, or paths
    (relative to the app folder) sent as such. Without roots the client declares no roots capability."""


def define_mcp_server(
    *,
    command: Sequence[str] | None = None,
    url: str | None = None,
    headers_env: Mapping[str, str] | None = None,
    bearer_env: str | None = None,
    env: Sequence[str] = (),
    prefix: str | None = None,
    timeout_s: float = 30.0,
    needs_approval: bool = False,
    roots: Sequence[str] = (),
) -> McpServerDefinition:
    """Declare an MCP server whose tools the agent may call (export it as `server`).

    Args:
        command: A stdio server: the command and its arguments, run with the app folder as
            working directory.
        url: A streamable-HTTP server's endpoint (`http://` or `https://`).
        headers_env: HTTP headers to send, each naming the environment variable with its value.
        bearer_env: The environment variable holding a bearer token for `url`.
        env: Environment variables a stdio command gets on top of the SDK's safe defaults.
        prefix: The tools' name prefix (`<prefix>__<tool>`); defaults to the file's name.
        timeout_s: The bound on one call, in seconds (> 0).
        needs_approval: Ask a person to approve every call of these tools.
        roots: The roots the server may work in, answering its `roots/list`: `file://` URIs, or
            paths relative to the app folder.

    Raises:
        ToolDefinitionError: Neither or both of `command` and `url`, an empty command, a URL
            that is not http(s), headers or bearer for a stdio server, a bad timeout, or roots
            that are not a list of non-empty strings.
    """
    if (command is None) == (url is None):
        raise ToolDefinitionError("define_mcp_server: give exactly one of command=[...] (stdio) or url=... (HTTP)")
    if command is not None and (isinstance(command, str) or not command or not all(command)):
        raise ToolDefinitionError("define_mcp_server: command must be a non-empty list of non-empty strings")
    if url is not None and not url.startswith(("http://", "https://")):
        raise ToolDefinitionError(f"define_mcp_server: url must be http:// or https://, got {url!r}")
    if command is not None and (headers_env or bearer_env):
        raise ToolDefinitionError("define_mcp_server: headers_env and bearer_env are for url=... servers")
    if isinstance(roots, str) or not all(isinstance(root, str) and root for root in roots):
        raise ToolDefinitionError("define_mcp_server: roots must be a list of non-empty paths or file:// URIs")
    if any("://" in root and not root.startswith("file://") for root in roots):
        raise ToolDefinitionError("define_mcp_server: a root is a path or a file:// URI (MCP roots are files)")
    if not timeout_s > 0:
        raise ToolDefinitionError(f"define_mcp_server: timeout_s must be > 0, got {timeout_s!r}")
    return McpServerDefinition(
        command=None if command is None else tuple(command),
        url=url,
        headers_env=dict(headers_env or {}),
        bearer_env=bearer_env,
        env=tuple(env),
        prefix=prefix,
        timeout_s=timeout_s,
        needs_approval=needs_approval,
        roots=tuple(roots),
    )


def _variable(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise ToolError(f"the environment variable {name} is not set")
    return value


@asynccontextmanager
async def open_client(
    server: McpServerDefinition,
    *,
    cwd: Path,
    elicitation_callback: ElicitationFnT | None = None,
    sampling_callback: SamplingFnT | None = None,
    list_roots_callback: ListRootsFnT | None = None,
) -> AsyncIterator[Client]:
    """A connected SDK `Client` for `server` (protocol era negotiated by the SDK); each callback
    given declares its capability.

    Raises:
        ToolError: An environment variable the definition names is not set.
        Exception: Whatever the SDK raises when the server cannot be started or reached.
    """
    callbacks: dict[str, Any] = {
        "elicitation_callback": elicitation_callback,
        "sampling_callback": sampling_callback,
        "list_roots_callback": list_roots_callback,
    }
    if server.command is not None:
        program, *args = server.command
        env = {name: os.environ[name] for name in server.env if name in os.environ}
        params = StdioServerParameters(command=program, args=args, env=env or None, cwd=cwd)
        async with Client(params, **callbacks) as client:
            yield client
        return
    assert server.url is not None
    headers = {header: _variable(name) for header, name in server.headers_env.items()}
    if server.bearer_env is not None:
        headers["Authorization"] = f"Bearer {_variable(server.bearer_env)}"
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(server.timeout_s)) as http:
        transport = streamable_http_client(server.url, http_client=http)
        async with Client(transport, **callbacks) as client:
            yield client
