"""`eve-py serve APP_DIR`: the HTTP session API and browser chat on uvicorn.

```
eve-py serve APP_DIR [--host 127.0.0.1] [--port 8000] [--model mock|provider/model] [--store PATH|URL]
                     [--allowed-host NAME ...] [--workers N] [--lease-s SECONDS] [--recheck-s SECONDS]
                     [--forwarded-allow-ips IPS]
```

`--store` (else `EVE_STORE`) takes a SQLite file or a `postgresql://` URL. `--workers N` runs
N server processes on one listening socket, each with its own event loop (see
`eve_py.cli._workers`). On PostgreSQL they cooperate fully (see docs/deploy.md); on a SQLite
file a stream served by one worker sees another worker's turn only when it re-reads the store.

Bearer tokens come from `EVE_API_TOKEN` (comma-separated for several principals). Without
one the server has no authentication, so it listens on loopback only and says so; a
non-loopback `--host` without a token is refused, and so are requests from other sites'
pages and requests naming another `Host` than a loopback name, `--host` or `--allowed-host`
(see `eve_py.server._guard`).

`X-Forwarded-For` / `X-Forwarded-Proto` are read only from the proxies `--forwarded-allow-ips`
(else `FORWARDED_ALLOW_IPS`, else uvicorn's own default: `127.0.0.1`, a proxy on this machine) names.
"""

from __future__ import annotations

import argparse
import gc
import ipaddress
import os
import re
import signal
import socket
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import anyio

from eve_py.agent import load_agent, load_mock_model
from eve_py.cli._types import port, positive_int, seconds
from eve_py.cli._workers import supervise
from eve_py.errors import UsageError
from eve_py.harness import Runtime
from eve_py.models import Model
from eve_py.sessions import SessionStore
from eve_py.sessions._opening import build_store, is_postgres_url, open_store, store_spec

__all__ = ("add_serve_parser", "bind_listener", "is_loopback", "serve")


def add_serve_parser(commands: Any) -> None:
    """Add the `serve` subcommand to the CLI's subparsers."""
    serve_cmd: argparse.ArgumentParser = commands.add_parser(
        "serve", help="serve an app over HTTP (session API, NDJSON stream, browser chat)"
    )
    serve_cmd.add_argument(
        "app_dir", type=Path, help="the app folder, holding agent/ (agent.py, tools/*.py) and optionally evals/"
    )
    serve_cmd.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve_cmd.add_argument("--port", type=port, default=8000, help="port to listen on (default 8000; 0 picks one)")
    serve_cmd.add_argument("--model", help='"mock" for the app\'s agent/mock_model.py, or "provider/model"')
    serve_cmd.add_argument(
        "--store",
        help="a SQLite file or a postgresql:// URL (default $EVE_STORE, else APP_DIR/.eve/sessions.db)",
    )
    serve_cmd.add_argument("--workers", type=positive_int, default=1, help="server processes to run (default 1)")
    serve_cmd.add_argument(
        "--lease-s",
        type=seconds,
        default=120.0,
        metavar="SECONDS",
        help="how long a killed worker's turn waits before another worker finishes it (default 120; "
        "a live worker's heartbeat keeps its lease)",
    )
    serve_cmd.add_argument(
        "--recheck-s",
        type=seconds,
        default=5.0,
        metavar="SECONDS",
        help="how often a quiet stream re-reads the store and looks for turns whose worker died (default 5)",
    )
    serve_cmd.add_argument("--listen-fd", type=int, help=argparse.SUPPRESS)  # a worker of --workers
    serve_cmd.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"], help="uvicorn's"
    )
    serve_cmd.add_argument("--access-log", action="store_true", help="log every request")
    serve_cmd.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a Host name the server answers to besides loopback names (repeatable; *.example.com allowed)",
    )
    serve_cmd.add_argument(
        "--forwarded-allow-ips",
        metavar="IPS",
        help="proxy addresses whose X-Forwarded-For/-Proto headers are trusted (comma-separated, * for any; "
        "default $FORWARDED_ALLOW_IPS, else 127.0.0.1)",
    )


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address (or `localhost`)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _allowed_hosts(args: argparse.Namespace, tokens: list[str]) -> list[str] | None:
    """`--allowed-host` names plus the `--host` listened on; None (the app's default) when neither applies."""
    if not args.allowed_host and tokens:
        return None
    listened = args.host.strip("[]")
    return [f"[{listened}]" if ":" in listened else listened, *args.allowed_host]


def bind_listener(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host:port` (0 picks a free port), inheritable by uvicorn's workers.

    Raises:
        UsageError: The address cannot be bound (taken, not local, unknown host).
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc}") from exc
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


async def _close(runtime: Runtime | None, store: SessionStore) -> None:
    if runtime is not None:
        await runtime.aclose()
    await store.aclose()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def serve(args: argparse.Namespace) -> int:
    """Run `eve-py serve` until interrupted; returns the exit code.

    Raises:
        UsageError: No token and a non-loopback host, the server extra is missing, the port is taken.
    """
    try:  # the server extra is optional: import it only here
        import uvicorn  # noqa: F401  # checked here, used by `_run`

        from eve_py.server import create_app
        from eve_py.server._auth import TOKEN_ENV, tokens_from_env
    except ImportError as exc:
        raise UsageError(f"eve-py serve needs the server extra: pip install 'eve-py[server]' ({exc})") from exc

    tokens = tokens_from_env()
    if not tokens and not is_loopback(args.host):
        raise UsageError(
            f"refusing to listen on {args.host} without authentication: set {TOKEN_ENV} (or listen on 127.0.0.1)"
        )

    spec = store_spec(args.store, args.app_dir)
    if is_postgres_url(spec) and args.listen_fd is None:
        anyio.run(_check_store, spec)  # a missing schema is reported before anything listens
    agent = load_agent(args.app_dir)
    # None lets Runtime apply EVE_MODEL, then the agent's own model.
    model: Model | str | None = load_mock_model(args.app_dir) if args.model == "mock" else args.model
    if args.workers > 1:
        return _supervise(args, spec, agent.name)
    store = build_store(spec)
    runtime: Runtime | None = None
    closed = False
    try:
        runtime = Runtime(agent, model=model, store=store, lease_s=args.lease_s)
        app = create_app(
            runtime,
            tokens=tokens,
            recheck_s=args.recheck_s,
            allowed_hosts=_allowed_hosts(args, tokens),
            warn_unauthenticated=False,  # the warning below says it once
        )
        inner = app.router.lifespan_context

        @asynccontextmanager
        async def lifespan(app: Any) -> AsyncIterator[Any]:
            # The store is closed in the server's own event loop: a PostgreSQL pool lives in it.
            nonlocal closed
            try:
                async with inner(app) as state:
                    yield state
            finally:
                closed = True
                await _close(runtime, store)

        app.router.lifespan_context = lifespan
        sock = bind_listener(args.host, args.port) if args.listen_fd is None else socket.socket(fileno=args.listen_fd)
        out = sys.stdout
        if args.listen_fd is None:
            _banner(f"{agent.name} with model {runtime.model.name}; sessions in {_shown_store(spec)}", sock, tokens)
        else:
            print(f"eve-py serve: worker {os.getpid()} ready", file=out, flush=True)
        _run(app, args, sock)
        print("eve-py serve: stopped; parked sessions stay parked in the store", file=sys.stderr, flush=True)
    finally:
        if not closed:
            anyio.run(_close, runtime, store)  # the server's event loop never started
    return 0


def _run(app: Any, args: argparse.Namespace, sock: socket.socket) -> None:
    """Serve `app` on `sock` with uvicorn until SIGINT or SIGTERM (both end it gracefully)."""
    import uvicorn  # the server extra: `serve` checked it is installed

    config = uvicorn.Config(
        app,
        log_level=args.log_level,
        access_log=args.access_log,
        timeout_graceful_shutdown=5,
        lifespan="on",
        forwarded_allow_ips=_forwarded_allow_ips(args),
        server_header=False,
    )
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then raises the signal again: that is
    # how this command ends, so either one exits 0 (SIGTERM is turned into the same path).
    previous = signal.signal(signal.SIGTERM, _interrupt)
    # What is loaded by now (modules, the agent, its schemas) lives as long as the server:
    # out of the collector's sight, every full collection has that much less to walk.
    gc.freeze()
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()


def _forwarded_allow_ips(args: argparse.Namespace) -> str:
    """The proxies whose forwarded headers are trusted: `--forwarded-allow-ips`, `FORWARDED_ALLOW_IPS` or loopback.

    Loopback is uvicorn's own default, kept so that a TLS proxy on the same machine needs no option
    for answer links to get its public `https://` address.
    """
    named: str | None = args.forwarded_allow_ips or os.environ.get("FORWARDED_ALLOW_IPS")
    return named.strip() if named and named.strip() else "127.0.0.1"


async def _check_store(spec: str) -> None:
    await (await open_store(spec)).aclose()


def _shown_store(spec: str) -> str:
    """The store as the banner shows it: a URL without its password."""
    return re.sub(r"://([^:/@]*):[^@]*@", r"://\1@", spec)


def _banner(what: str, sock: socket.socket, tokens: Sequence[str]) -> None:
    from eve_py.server._auth import TOKEN_ENV

    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"eve-py serve: {what}", file=sys.stdout)
    if not tokens:
        print(
            f"warning: {TOKEN_ENV} is not set, so requests are not authenticated; listening on loopback only ({shown})",
            file=sys.stderr,
            flush=True,
        )
    print(f"listening on http://{shown}:{port}/ (chat) and http://{shown}:{port}/eve/v1 (API)", file=sys.stdout)
    sys.stdout.flush()


def _supervise(args: argparse.Namespace, spec: str, agent_name: str) -> int:
    """`--workers N`: bind once, then run the workers (see `eve_py.cli._workers`)."""
    from eve_py.server import tokens_from_env

    sock = bind_listener(args.host, args.port)
    command = [sys.executable, "-m", "eve_py", "serve", str(args.app_dir), "--host", args.host, "--store", spec]
    command += [option for host in args.allowed_host for option in ("--allowed-host", host)]
    command += ["--lease-s", str(args.lease_s), "--recheck-s", str(args.recheck_s), "--log-level", args.log_level]
    command += ["--model", args.model] if args.model else []
    command += ["--access-log"] if args.access_log else []
    command += ["--forwarded-allow-ips", args.forwarded_allow_ips] if args.forwarded_allow_ips else []
    _banner(f"{agent_name}: {args.workers} workers; sessions in {_shown_store(spec)}", sock, tokens_from_env())
    return supervise(command, sock, args.workers)
