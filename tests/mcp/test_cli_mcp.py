"""`eve-py mcp` from the command line: its refusals, and `--agent` (eve's MCP channel) over stdio."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from anyio.streams.text import TextReceiveStream
from mcp import StdioServerParameters
from mcp.client import Client

from eve_py.cli._main import main
from eve_py.sessions._sqlite import SQLiteSessionStore
from tests.conftest import HITL_APP


def test_a_non_loopback_host_is_refused(refund_app: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", str(refund_app), "--http", "--host", "0.0.0.0"]) == 2
    assert "refusing to serve MCP on 0.0.0.0" in capsys.readouterr().err


def test_an_app_with_errors_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", str(tmp_path)]) in (1, 2)
    assert capsys.readouterr().err.strip()


@pytest.mark.anyio
async def test_the_agent_over_stdio_shares_the_session_store(tmp_path: Path) -> None:
    store_path = tmp_path / "sessions.db"
    args = ["-m", "eve_py", "mcp", str(HITL_APP), "--agent", "--model", "mock", "--store", str(store_path)]
    with anyio.fail_after(60):
        async with Client(StdioServerParameters(command=sys.executable, args=args)) as client:
            started = await client.call_tool("agent_start", {"message": "pick a template"})
    assert started.structured_content is not None and started.structured_content["status"] == "input_required"
    store = await SQLiteSessionStore.open(store_path)
    try:
        stored = await store.load(str(started.structured_content["invocationId"]))
        assert stored.status == "waiting"
    finally:
        await store.aclose()


@pytest.mark.anyio
async def test_a_line_that_is_not_json_rpc_gets_a_parse_error_and_the_session_goes_on(refund_app: Path) -> None:
    args = [sys.executable, "-m", "eve_py", "mcp", str(refund_app)]
    with anyio.fail_after(60):
        process = await anyio.open_process(args)
        try:
            assert process.stdin is not None and process.stdout is not None and process.stderr is not None
            await process.stdin.send(b'not json\n{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
            lines: list[dict[str, object]] = []
            buffered = ""
            async for chunk in TextReceiveStream(process.stdout):
                buffered += chunk
                *complete, buffered = buffered.split("\n")
                lines += [json.loads(line) for line in complete if line.strip()]
                if len(lines) >= 2:
                    break
            await process.stdin.aclose()
            errors = b"".join([chunk async for chunk in process.stderr]).decode()
        finally:
            if process.returncode is None:
                process.kill()
            await process.wait()
    refused, pong = lines
    assert refused["id"] is None and refused["error"]["code"] == -32700  # type: ignore[index]
    assert pong == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert "a line on stdin is not a JSON-RPC message" in errors
