"""The MCP SDK's own refund-desk story client, unchanged, against `eve-py mcp` serving the port.

The client asserts what the story promises: `cents` is hidden from the input schema, each
question is asked once per call, declining `restock` still refunds, declining `scope` aborts
with the SDK's message, and `ToolError`s read as the SDK's. It runs over stdio (legacy era),
over streamable HTTP on the 2026 era (`input_required` rounds with sealed state), over HTTP on
the legacy era (`elicitation/create` pushes), and in-process on both.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import StdioServerParameters
from mcp.types.version import LATEST_MODERN_VERSION

from eve_py.agent import load_agent
from eve_py.mcp import mcp_server

pytestmark = pytest.mark.anyio

StoryMain = Callable[..., Awaitable[None]]


@pytest.fixture
def story_main(sdk_examples: Path, monkeypatch: pytest.MonkeyPatch) -> StoryMain:
    monkeypatch.syspath_prepend(str(sdk_examples))
    module: Any = importlib.import_module("stories.refund_desk.client")
    main: StoryMain = module.main
    return main


def _eve_py(*args: str) -> list[str]:
    return [sys.executable, "-m", "eve_py", "mcp", *args]


@pytest.mark.parametrize("mode", ["legacy", LATEST_MODERN_VERSION])
async def test_story_client_in_process(story_main: StoryMain, refund_app: Path, mode: str) -> None:
    await story_main(mcp_server(load_agent(refund_app)), mode=mode)


async def test_story_client_over_stdio(story_main: StoryMain, refund_app: Path) -> None:
    command, *args = _eve_py(str(refund_app))
    with anyio.fail_after(60):
        await story_main(StdioServerParameters(command=command, args=args), mode="legacy")


async def test_story_client_over_http_on_both_eras(story_main: StoryMain, refund_app: Path) -> None:
    with anyio.fail_after(60):
        async with await anyio.open_process(_eve_py(str(refund_app), "--http", "--port", "0")) as server:
            try:
                assert server.stderr is not None
                first = (await server.stderr.receive()).decode()
                while "listening on " not in first:
                    first += (await server.stderr.receive()).decode()
                url = first.split("listening on ", 1)[1].split()[0]
                assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
                async with anyio.create_task_group() as group:
                    # The server logs to stderr: keep reading it so it never blocks on a full pipe.
                    group.start_soon(_drain, server.stderr)
                    await story_main(url, mode=LATEST_MODERN_VERSION)
                    await story_main(url, mode="legacy")
                    group.cancel_scope.cancel()
            finally:
                server.terminate()
                await server.wait()


async def _drain(stream: Any) -> None:
    async for _ in stream:
        pass
