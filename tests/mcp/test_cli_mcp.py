"""`eve-py mcp` from the command line: its refusals, and `--agent` (eve's MCP channel) over stdio."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
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
