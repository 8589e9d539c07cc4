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

# The first test also downloads the SDK's sdist (conftest.sdk_examples), which a loaded machine
# or a slow index can take well over the suite's 60 s for.
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(240)]

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


async def test_story_client_over_http_on_both_eras(story_main: StoryMain, desk_url: str) -> None:
    assert desk_url.startswith("http://127.0.0.1:") and desk_url.endswith("/mcp"), desk_url
    with anyio.fail_after(60):
        await story_main(desk_url, mode=LATEST_MODERN_VERSION)
        await story_main(desk_url, mode="legacy")
