"""`eve-py mcp APP_DIR`: serve an app's tools to MCP clients (the `mcp` extra).

```
eve-py mcp APP_DIR                                   # stdio: an MCP host starts this command
eve-py mcp APP_DIR --http [--host 127.0.0.1] [--port 8000]   # streamable HTTP at /mcp
eve-py mcp APP_DIR --http --store PATH|URL              # workers sharing one store share request states
eve-py mcp APP_DIR --agent [--model mock] [--store PATH]     # the agent itself (eve's MCP channel)
```

Over stdio nothing but protocol messages goes to stdout, and a Ctrl-C ends the server at once
(status 130); over HTTP the address is printed once listening. The HTTP server has no
authentication, so a non-loopback `--host` is refused.

Serving tools, `--store` (a SQLite file, a `postgresql://` URL or `memory`) is where each
2026-era request state's nonce is recorded once used and where the key that seals the states
is kept: every `eve-py mcp` on the same store opens every other's states, and each still
answers once. Without it both live in this process only.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import anyio

from eve_py.agent import Agent, load_agent, load_mock_model
from eve_py.cli._serve import bind_listener, is_loopback
from eve_py.cli._types import port
from eve_py.errors import UsageError
from eve_py.harness import Runtime
from eve_py.models import Model
from eve_py.sessions import SQLiteSessionStore
from eve_py.sessions._opening import build_store, open_store

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
        "--store",
        help="with --agent: SQLite file for sessions (default APP_DIR/.eve/sessions.db); serving tools: a SQLite "
        "file, postgresql:// URL or 'memory' keeping request states' key and used nonces, shared by every worker "
        "on it (default: this process only)",
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
        server = agent_channel(runtime)
    else:
        server = mcp_server(agent) if args.store is None else _shared_tools_server(agent, args.store)
    try:
        if not args.http:
            anyio.run(_serve_stdio, server)  # a Ctrl-C: KeyboardInterrupt, once the server has unwound
            return 0
        _serve_http(server, args)
    finally:
        if runtime is not None:
            anyio.run(_close, runtime)
    return 0


def _shared_tools_server(agent: Agent, spec: str) -> Any:
    """The tools server whose request states are sealed and spent in the store `spec` names.

    The key is read (made once) on a store of its own; the server's store is opened in the
    server's event loop (a PostgreSQL pool lives in it) and closed there when it stops.

    Raises:
        UsageError: `spec` is a URL eve-py has no store for, or PostgreSQL without its extra.
        StoreSchemaError: The database has no eve-py schema, or another version of it.
    """
    from eve_py.mcp import mcp_server
    from eve_py.mcp.serve import request_state_security

    async def security() -> Any:
        opened = await open_store(spec)
        try:
            return await request_state_security(opened)
        finally:
            await opened.aclose()

    store = build_store(spec)
    server = mcp_server(agent, request_state_security=anyio.run(security), store=store)
    inner = server.lifespan

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        try:
            async with inner(app) as state:
                yield state
        finally:
            await store.aclose()

    server.lifespan = lifespan
    return server


async def _serve_stdio(server: Any) -> None:
    """Serve over stdio until the client closes stdin or a Ctrl-C cancels this task.

    The SDK reads stdin in a worker thread that no cancellation stops, so a Ctrl-C alone would wait
    for the client's next line (and the exit for that thread). Its stdin is a pipe fed from ours
    (`_relayed_stdin`), whose input a cancellation ends at once: the reader sees the end and returns.
    """
    from eve_py.mcp.serve import serve_stdio

    with _relayed_stdin() as end_input:

        async def serve() -> None:
            await serve_stdio(server)
            done.cancel_scope.cancel()  # the client left: stop waiting for a cancellation

        async def end_input_when_cancelled() -> None:
            try:
                await anyio.sleep_forever()
            finally:
                end_input()

        async with anyio.create_task_group() as done:  # both are tasks: a Ctrl-C cancels them together
            done.start_soon(end_input_when_cancelled)
            done.start_soon(serve)


@contextmanager
def _relayed_stdin() -> Iterator[Callable[[], None]]:
    """Point fd 0 at a pipe that a daemon thread copies the real stdin into; yields `end_input()`.

    `end_input()` ends the pipe's input at once (its write end becomes the null device, so the
    reader sees the end of input); the copying thread, which may be blocked on the real stdin, is a
    daemon that the exit does not wait for. Without a stdin on fd 0 (e.g. `io.StringIO`) nothing is
    relayed and `end_input()` does nothing.
    """
    try:
        relayed = sys.stdin.fileno() == 0
    except (AttributeError, OSError, ValueError):
        relayed = False
    if not relayed:
        yield lambda: None
        return
    saved, real = os.dup(0), os.dup(0)
    read_end, write_end = os.pipe()
    os.dup2(read_end, 0)
    os.close(read_end)
    lock = threading.Lock()
    closed = False

    def copy() -> None:
        nonlocal closed
        try:
            while chunk := os.read(real, 65536):
                while chunk:
                    chunk = chunk[os.write(write_end, chunk) :]
        except OSError:  # the input broke: end it as if it had ended
            pass
        finally:
            os.close(real)
            with lock:  # end_input() never touches a closed (perhaps reused) descriptor
                os.close(write_end)
                closed = True

    def end_input() -> None:
        with lock:
            if not closed:  # the write end becomes the null device: the pipe's input ends, copy() writes on
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, write_end, inheritable=False)
                os.close(null)

    threading.Thread(target=copy, name="eve-py mcp stdin", daemon=True).start()
    try:
        yield end_input
    finally:
        end_input()
        os.dup2(saved, 0)
        os.close(saved)


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
