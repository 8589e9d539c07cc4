"""An agent's MCP servers (`agent/connections/`) keep one session per server per process.

The servers are the SDK's own `MCPServer` (`tests/mcp/sdk_remote_server.py`), over stdio (the
legacy era) and streamable HTTP (the 2026 era). Every call of the agent reuses the server's
session; a session that fails is dropped and the next call opens a new one; `Runtime.aclose()`
closes them. The server's sampling requests are answered by the agent's own model and its
roots requests from the connection's `roots=`.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from eve_py import Runtime, load_agent
from eve_py.protocol.content import ImageContent, TextContent, content_from_json
from eve_py.protocol.messages import ToolMessage
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).with_name("sdk_remote_server.py")
AGENT = 'from eve_py import define_agent\n\nagent = define_agent(instructions="Uses a remote server.")\n'


def _app(tmp_path: Path, connection: str) -> Path:
    (tmp_path / "agent" / "connections").mkdir(parents=True)
    (tmp_path / "agent" / "agent.py").write_text(AGENT)
    (tmp_path / "agent" / "connections" / "remote.py").write_text(
        f"import sys\n\nfrom eve_py.mcp import define_mcp_server\n\nserver = define_mcp_server({connection})\n"
    )
    (tmp_path / "data").mkdir()
    return tmp_path


def stdio_app(tmp_path: Path) -> Path:
    shutil.copy(SERVER, tmp_path / "sdk_remote_server.py")
    return _app(tmp_path, "command=[sys.executable, 'sdk_remote_server.py'], roots=['data', 'file:///srv/shared']")


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, str(SERVER), "http", str(port)], stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        for _ in range(200):
            try:
                httpx.get(url, timeout=0.5)
                break
            except httpx.TransportError:
                if process.poll() is not None:
                    raise AssertionError(f"the SDK server exited with {process.returncode}") from None
                anyio.run(anyio.sleep, 0.05)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def calling(*calls: tuple[str, dict[str, Any]]) -> MockModel:
    """Calls each tool in its own turn; a request with no tools is a sampling request (answered with a poem)."""

    queued = list(calls)

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tools:
            return f"poem for [{request.last_user_message}] as [{request.instructions}]"
        if request.tool_results_since_last_user_message:
            return str(request.tool_results_since_last_user_message[-1].output)
        name, arguments = queued.pop(0)
        return MockResponse(tool_calls=[MockToolCall(name, arguments)])

    return MockModel(respond)


async def outputs(app: Path, *calls: tuple[str, dict[str, Any]]) -> list[str]:
    """Each call's tool output, each in a session of its own, on one runtime (closed at the end)."""
    runtime = Runtime(load_agent(app), model=calling(*calls))
    seen: list[str] = []
    try:
        for _ in calls:
            session = await runtime.create_session()
            with anyio.fail_after(60):
                await session.send("go")
            messages = await session.messages()
            for part in (part for m in messages if isinstance(m, ToolMessage) for part in m.content):
                output = part.output  # the SDK server's structured result is {"result": text}
                seen.append(str(output["result"] if isinstance(output, dict) else output))
    finally:
        await runtime.aclose()
    return seen


async def test_over_stdio_every_call_shares_one_session(tmp_path: Path) -> None:
    first, second, third = await outputs(
        stdio_app(tmp_path), ("remote__whoami", {}), ("remote__whoami", {}), ("remote__whoami", {})
    )
    assert first == second == third and "peer=stdio" in first  # one process served them all


async def test_over_http_every_call_shares_one_session(tmp_path: Path, http_url: str) -> None:
    app = _app(tmp_path, f"url={http_url!r}")
    first, second, third = await outputs(app, ("remote__whoami", {}), ("remote__whoami", {}), ("remote__whoami", {}))
    assert first == second == third  # one HTTP client (one kept-alive connection) served them all


async def test_a_session_that_dies_is_opened_again_for_the_next_call(tmp_path: Path) -> None:
    before, crashed, after = await outputs(
        stdio_app(tmp_path), ("remote__whoami", {}), ("remote__crash", {}), ("remote__whoami", {})
    )
    assert crashed.startswith("Error executing tool remote__crash: MCP server 'remote' failed: ")
    assert before != after and "pid=" in after  # a new process


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_sampling_is_answered_by_the_agents_model(tmp_path: Path, transport: str, request: Any) -> None:
    url = request.getfixturevalue("http_url") if transport == "http" else None
    app = stdio_app(tmp_path) if url is None else _app(tmp_path, f"url={url!r}")
    [written] = await outputs(app, ("remote__poem", {"topic": "rain"}))
    assert written == "poem for [Write a poem about rain] as [You are a poet.]"


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_roots_come_from_the_connections_configuration(tmp_path: Path, transport: str, request: Any) -> None:
    if transport == "stdio":
        app = stdio_app(tmp_path)
    else:
        url = request.getfixturevalue("http_url")
        app = _app(tmp_path, f"url={url!r}, roots=['data', 'file:///srv/shared']")
    [roots] = await outputs(app, ("remote__where", {}))
    assert roots == f"{(tmp_path / 'data').resolve().as_uri()} file:///srv/shared"


async def test_a_remote_result_s_blocks_are_content_even_with_annotations_and_meta(tmp_path: Path) -> None:
    runtime = Runtime(load_agent(stdio_app(tmp_path)), model=calling(("remote__snapshot", {})))
    try:
        session = await runtime.create_session()
        with anyio.fail_after(60):
            await session.send("go")
        [part] = [part for m in await session.messages() if isinstance(m, ToolMessage) for part in m.content]
    finally:
        await runtime.aclose()
    blocks = content_from_json(part.output)
    assert blocks is not None, part.output  # read as text and an image, not as JSON data
    text, image = blocks
    assert isinstance(text, TextContent) and text.text == "the chart"
    assert isinstance(image, ImageContent) and image.mime_type == "image/png" and image.data.startswith("iVBOR")
