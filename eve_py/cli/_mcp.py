"""`eve-py mcp APP_DIR`: serve an app's tools to MCP clients (the `mcp` extra).

```
eve-py mcp APP_DIR                                   # stdio: an MCP host starts this command
eve-py mcp APP_DIR --http [--host 127.0.0.1] [--port 8000]   # streamable HTTP at /mcp
eve-py mcp APP_DIR --agent [--model mock] [--store PATH]     # the agent itself (eve's MCP channel)
```

Over stdio nothing but protocol messages goes to stdout; over HTTP the address is printed once
listening. The HTTP server has no authentication, so a non-loopback `--host` is refused.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import anyio

from eve_py.agent import load_agent, load_mock_model
from eve_py.cli._serve import bind_listener, is_loopback
from eve_py.cli._types import port
from eve_py.errors import UsageError
from eve_py.harness._runtime import Runtime
from eve_py.models._base import Model
from eve_py.sessions._sqlite import SQLiteSessionStore

__all__ = ("add_mcp_parser", "run_mcp_command")


def add_mcp_parser(commands: Any) -> None:
    """Add the `mcp` subcommand to the CLI's subparsers."""
    command: argparse.ArgumentParser = commands.add_parser(
        "mcp", help="serve an app's tools over MCP (stdio by default, or streamable HTTP)"
    )
    command.add_argument("app_dir", type=Path, help="the app folder, holding agent/")
    command.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp instead of stdio")
    command.add_argument("--host", default="127.0.0.1", help="with --http: a loopback address (default 127.0.0.1)")
    command.add_argument("--port", type=port, default=8000, help="with --http: the port (default 8000; 0 picks one)")
    command.add_argument(
        "--agent", action="store_true", help="serve the agent itself (agent_start/get/update/cancel), not its tools"
    )
    command.add_argument("--model", help='with --agent: "mock" for agent/mock_model.py, or "provider/model"')
    command.add_argument(
        "--store", type=Path, help="with --agent: SQLite file for sessions (default APP_DIR/.eve/sessions.db)"
    )


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def run_mcp_command(args: argparse.Namespace) -> int:
    """Run `eve-py mcp` until the client leaves (stdio) or until interrupted (HTTP).

    Raises:
        UsageError: The `mcp` extra is missing, `--host` is not loopback, or the port is taken.
        CompileError: The app has errors.
    """
    try:  # the mcp extra is optional: import it only here
        from eve_py.mcp import mcp_server
        from eve_py.mcp.channel import agent_channel
        from eve_py.mcp.serve import serve_stdio
    except ImportError as exc:
        raise UsageError(f"eve-py mcp needs the mcp extra: pip install 'eve-py[mcp]' ({exc})") from exc
    if args.http and not is_loopback(args.host):
        raise UsageError(f"refusing to serve MCP on {args.host}: the MCP endpoint has no authentication")
    agent = load_agent(args.app_dir)
    runtime: Runtime | None = None
    if args.agent:
        model: Model | str | None = load_mock_model(args.app_dir) if args.model == "mock" else args.model
        store = SQLiteSessionStore(args.store or args.app_dir / ".eve" / "sessions.db")
        runtime = Runtime(agent, model=model, store=store)
    server = mcp_server(agent) if runtime is None else agent_channel(runtime)
    try:
        if not args.http:
            anyio.run(serve_stdio, server)
            return 0
        _serve_http(server, args)
    finally:
        if runtime is not None:
            anyio.run(_close, runtime)
    return 0


async def _close(runtime: Runtime) -> None:
    await runtime.aclose()
    await runtime.store.aclose()


def _serve_http(server: Any, args: argparse.Namespace) -> None:
    from eve_py.mcp.serve import MCP_PATH, serve_http

    sock = bind_listener(args.host, args.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"eve-py mcp: {server.name} listening on http://{shown}:{port}{MCP_PATH}", file=sys.stderr, flush=True)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        serve_http(server, sock, host=args.host)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
