"""Helpers for the server tests: the fixture app's runtime, a real uvicorn on 127.0.0.1, gated models."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import uvicorn
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream
from starlette.applications import Starlette

from eve_py import Runtime
from eve_py.agent import Agent, load_mock_model
from eve_py.models._base import Model, ModelDelta, ModelRequest, ModelResponse
from eve_py.protocol.messages import UserMessage
from eve_py.server import create_app
from eve_py.sessions import MemorySessionStore, SessionStore
from tests.conftest import HITL_APP, REPO

ALICE = "alice-token-3f9a"
BOB = "bob-token-77c2"
PICK_BLUE = {"pickedIds": ["tpl_blue"]}


def hitl_runtime(agent: Agent, store: SessionStore | None = None, model: Model | None = None) -> Runtime:
    """A runtime on the fixture app with its own mock model (a fresh one: it records requests)."""
    return Runtime(
        agent, model=model or load_mock_model(HITL_APP), store=store if store is not None else MemorySessionStore()
    )


@dataclass
class Served:
    """A running server."""

    base: str
    """`http://127.0.0.1:PORT`."""
    runtime: Runtime
    app: Starlette

    @property
    def api(self) -> str:
        """The API root, `.../eve/v1`."""
        return self.base + "/v26/eve/v1"

    def client(self, token: str | None = ALICE) -> httpx.AsyncClient:
        """An httpx client on the API root, sending `token`."""
        headers = {"authorization": f"Bearer {token}"} if token else {}
        return httpx.AsyncClient(base_url=self.api, headers=headers, timeout=10.0)


@asynccontextmanager
async def serve(
    runtime: Runtime, *, tokens: Sequence[str] = (ALICE, BOB), http: str = "auto", **options: Any
) -> AsyncIterator[Served]:
    """Run `create_app(runtime)` on a real uvicorn, on a socket bound to 127.0.0.1 before it starts.

    The socket listens before uvicorn runs, so requests made at once simply queue until it accepts.
    `http` picks uvicorn's HTTP parser (`auto`: httptools when installed, as `eve-py serve` runs).
    """
    app = create_app(runtime, tokens=list(tokens), **options)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(256)
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_config=None, lifespan="on", timeout_graceful_shutdown=5, http=http)
    server = uvicorn.Server(config)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            try:
                yield Served(base=f"http://127.0.0.1:{port}", runtime=runtime, app=app)
            finally:
                server.should_exit = True
    finally:
        sock.close()


BOUNDARIES = ("turn.waiting", "session.waiting", "session.completed", "session.failed")
"""Where a reader following a turn stops (the server keeps the stream open past them)."""


async def read_stream(
    client: httpx.AsyncClient,
    session_id: str,
    start: int | str = 0,
    *,
    follow: bool = True,
    delivery_id: str | None = None,
) -> list[dict[str, Any]]:
    """The stream from `start` as decoded lines: up to the first turn boundary, or (`follow=False`) the stored tail.

    With `delivery_id`, boundaries before the first event of that message's turn do not count
    (as eve's client reads a message's response).
    """
    params: dict[str, str | int] = {"startIndex": start} if follow else {"startIndex": start, "follow": "false"}
    lines: list[dict[str, Any]] = []
    with anyio.fail_after(10):
        async with client.stream("GET", f"/session/{session_id}/stream", params=params) as response:
            assert response.status_code == 200, await response.aread()
            async for line in response.aiter_lines():
                if line.strip():
                    lines.append(json.loads(line))
                    if delivery_id is not None and delivery_id in lines[-1]["meta"].get("deliveryIds", []):
                        delivery_id = None
                    if follow and delivery_id is None and lines[-1]["type"] in BOUNDARIES:
                        break
    return lines


def last_user_text(request: ModelRequest) -> str:
    users = [m.content for m in request.messages if isinstance(m, UserMessage)]
    return users[-1] if users else ""


class GatedModel:
    """The fixture's mock model, except for messages containing a keyword:

    - "slow": the step waits for `release` (and sets `entered` first);
    - "stream": the step reports the text deltas "Hel", then waits for `release`, then "lo", and
      answers "Hello".
    """

    def __init__(self) -> None:
        self.inner = load_mock_model(HITL_APP)
        self.entered = anyio.Event()
        self.release = anyio.Event()

    @property
    def name(self) -> str:
        return "gated-mock"

    async def request(self, request: ModelRequest) -> ModelResponse:
        text = last_user_text(request)
        if "stream" in text:
            assert request.on_delta is not None
            await request.on_delta(ModelDelta(kind="text", text="Hel"))
            self.entered.set()
            await self.release.wait()
            await request.on_delta(ModelDelta(kind="text", text="lo"))
            return ModelResponse(text="Hello")
        if "slow" in text:
            self.entered.set()
            await self.release.wait()
            return ModelResponse(text="Finally done.")
        return await self.inner.request(request)


@asynccontextmanager
async def eve_serve(
    store: Path | str, token: str | None, *extra: str, app: Path = HITL_APP, env: dict[str, str] | None = None
) -> AsyncIterator[tuple[str, Process, list[str]]]:
    """Start `python -m eve_py serve` on port 0; yield its URL (from its own output), the process, stdout.

    `store` is a SQLite file or a PostgreSQL URL; `env` is added to this process's environment.
    """
    environ = {k: v for k, v in os.environ.items() if k != "EVE_API_TOKEN"} | (env or {})
    if token is not None:
        environ["EVE_API_TOKEN"] = token
    command = [sys.executable, "-m", "eve_py", "serve", str(app), "--model", "mock", "--port", "0"]
    command += ["--store", str(store), "--log-level", "warning", *extra]
    process = await anyio.open_process(command, cwd=REPO, env=environ)
    lines: list[str] = []
    try:
        assert process.stdout is not None
        buffered = ""
        with anyio.fail_after(30):
            async for chunk in TextReceiveStream(process.stdout):
                buffered += chunk
                *complete, buffered = buffered.split("\n")
                lines += complete
                url = next((line.split()[2] for line in lines if line.startswith("listening on ")), None)
                if url is not None:
                    break
        assert url is not None, lines
        yield url.rstrip("/"), process, lines
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
            with anyio.fail_after(15):
                await process.wait()
        await process.aclose()
