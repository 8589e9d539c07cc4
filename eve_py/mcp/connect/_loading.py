"""Loading `agent/connections/*.py`: each MCP server's tools, listed once, as the agent's tools.

`load_agent` calls `connection_tools(app_dir)` when the app has an `agent/connections/` folder.
Each file exports `server = define_mcp_server(...)`; its tools are listed when the app loads
(on a thread of their own, so loading works inside a running event loop too) and join the
agent as `<prefix>__<tool>` with the server's own input and output schemas.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import mcp_types as types

from eve_py._loading import ImportTimedOut, LoadFailure, import_timeout, load_module
from eve_py.errors import ToolResolutionError
from eve_py.mcp.connect._definition import McpServerDefinition, open_client
from eve_py.mcp.connect._remote import remote_plan
from eve_py.mcp.connect._sessions import ServerSession
from eve_py.tools import ResolvedTool

__all__ = ("connection_files", "connection_tools")

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def connection_files(app_dir: Path) -> list[Path]:
    """Every `agent/connections/*.py` not named `_*`, sorted."""
    folder = app_dir / "agent" / "connections"
    return sorted(p for p in folder.glob("*.py") if not p.name.startswith("_")) if folder.is_dir() else []


def _definition(path: Path, app_dir: Path) -> McpServerDefinition:
    relative = path.relative_to(app_dir / "agent").as_posix()
    loaded = load_module(path, app_dir=app_dir, timeout_s=import_timeout(None))
    if isinstance(loaded, ImportTimedOut):
        raise ToolResolutionError(f'"{relative}" did not finish importing within {loaded.timeout_s:g} s', path=relative)
    if isinstance(loaded, LoadFailure):
        raise ToolResolutionError(
            f'"{relative}" failed to import: {type(loaded.error).__name__}: {loaded.error}', path=relative
        )
    server = getattr(loaded, "server", None)
    if not isinstance(server, McpServerDefinition):
        raise ToolResolutionError(
            f'Expected the export "server" from "{relative}" to be define_mcp_server(...)', path=relative
        )
    return server


async def _list(server: McpServerDefinition, app_dir: Path) -> list[types.Tool]:
    with anyio.fail_after(server.timeout_s):
        async with open_client(server, cwd=app_dir) as client:
            return list((await client.list_tools()).tools)


def _listed(server: McpServerDefinition, app_dir: Path, relative: str) -> list[types.Tool]:
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="eve-py mcp list") as pool:
            return pool.submit(anyio.run, _list, server, app_dir).result()
    except TimeoutError:
        reason = f"it did not answer within {server.timeout_s:g} s"
    except Exception as exc:
        while isinstance(exc, ExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        reason = f"{type(exc).__name__}: {exc}"
    raise ToolResolutionError(f'Cannot list the tools of the MCP server in "{relative}": {reason}', path=relative)


def connection_tools(app_dir: str | Path) -> dict[str, ResolvedTool]:
    """The tools of every MCP server the app declares, by their prefixed names.

    Raises:
        ToolResolutionError: A connection file fails to import or exports no server, a server
            cannot be reached or listed within its timeout, or a prefixed name is not a valid
            tool name (letters, digits, `_` and `-`, at most 64 characters).
    """
    app_dir = Path(app_dir)
    tools: dict[str, ResolvedTool] = {}
    for path in connection_files(app_dir):
        relative = path.relative_to(app_dir / "agent").as_posix()
        server = _definition(path, app_dir)
        prefix = server.prefix or path.stem
        session = ServerSession(server=server, app_dir=app_dir)
        for listed in _listed(server, app_dir, relative):
            name = f"{prefix}__{listed.name}"
            if not _TOOL_NAME.match(name):
                raise ToolResolutionError(
                    f'The MCP server in "{relative}" lists a tool named {listed.name!r}; as {name!r} it is not a '
                    "valid tool name (letters, digits, _ and -, at most 64 characters); choose a shorter prefix",
                    path=relative,
                )
            tools[name] = ResolvedTool(
                name=name,
                description=listed.description or listed.title or listed.name,
                input_schema=dict(listed.input_schema),
                output_schema=None if listed.output_schema is None else dict(listed.output_schema),
                client_resolved=False,
                needs_approval=server.needs_approval,
                to_model_output=None,
                path=relative,
                plan=remote_plan(server, server_name=prefix, tool=listed, app_dir=app_dir, session=session),
            )
    return tools
