"""AG-UI's own `HttpAgent` keeps a thread going while the `eve-py serve` behind its URL restarts.

`drive_restart.mjs` holds one `HttpAgent` (npm `@ag-ui/client` 1.0) on one thread; when it
prints `{"step": "restart"}` the test stops the server (SIGINT, or SIGKILL mid-turn), starts a
new one on the same SQLite store and the same port, and tells the script to go on.
"""

from __future__ import annotations

import json
import os
import signal
import socket
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.text import TextReceiveStream

from eve_py.sessions import SQLiteSessionStore
from tests.ag_ui_client.test_ag_ui_client import HERE, NODE, TOKEN, needs_node
from tests.conftest import HITL_APP
from tests.server.helpers import eve_serve

pytestmark = pytest.mark.anyio

REPORT_AGENT = """
from eve_py import define_agent

agent = define_agent(model="anthropic/claude-sonnet-4.6", max_steps=6)
"""
REPORT_TOOL = '''
import os

import anyio

from eve_py import define_tool


async def {name}(name: str) -> dict[str, str]:
    """Fetch a report: slow, and never done in a server started with EVE_TEST_STALL."""
    with open(os.environ["EVE_TEST_LEDGER"], "a") as ledger:
        ledger.write(f"{{os.getpid()}}\\n")
    if os.environ.get("EVE_TEST_STALL"):
        with open(os.environ["EVE_TEST_RUNNING"], "w") as running:  # a FIFO: the test knows it runs now
            running.write("running")
        await anyio.sleep_forever()
    return {{"report": f"{{name}}: all green"}}


tool = define_tool(description="Fetch a report by name.", execute={name}, needs_approval={approval})
'''
REPORT_MODEL = """
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall


def respond(request: MockModelRequest) -> str | MockResponse:
    done = request.tool_results_since_last_user_message
    if not done:
        tool = "approved_report" if "approved" in (request.last_user_message or "") else "fetch_report"
        return MockResponse(tool_calls=[MockToolCall(tool, {"name": "weekly"})])
    return f"The report says: {done[0].output['report']}."


model = MockModel(respond)
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def drive_across_restart(
    mode: str, store: Path, *, app: Path = HITL_APP, env: dict[str, str] | None = None, crash: Path | None = None
) -> dict[str, dict[str, Any]]:
    """Run `drive_restart.mjs MODE`, restarting the server (same store and port) when it asks; its report, by step.

    The first server runs with `env`. It stops with SIGINT; with `crash` (a FIFO), with SIGKILL
    once something in it wrote to that FIFO.
    """
    needs_node()
    options = ("--port", str(free_port()), "--lease-s", "1.5", "--recheck-s", "0.2")
    steps: list[dict[str, Any]] = []
    async with AsyncExitStack() as stack:
        url, first, _ = await stack.enter_async_context(eve_serve(store, TOKEN, *options, app=app, env=env))
        command = [str(NODE), str(HERE / "drive_restart.mjs"), url, TOKEN, mode]
        node = await anyio.open_process(command, cwd=HERE)
        stack.push_async_callback(node.aclose)
        stack.callback(lambda: node.returncode is None and node.kill())
        assert node.stdout is not None and node.stdin is not None
        with anyio.fail_after(60):
            buffered = ""
            async for chunk in TextReceiveStream(node.stdout):
                *lines, buffered = (buffered + chunk).split("\n")
                steps += [json.loads(line) for line in lines if line.startswith("{")]
                if lines and steps and steps[-1]["step"] == "restart":
                    if crash is not None:
                        await anyio.to_thread.run_sync(crash.read_text)  # blocks until the tool writes
                    first.send_signal(signal.SIGINT if crash is None else signal.SIGKILL)
                    await first.wait()
                    again, _, _ = await stack.enter_async_context(eve_serve(store, TOKEN, *options, app=app))
                    assert again == url
                    await node.stdin.send(b"go on\n")
            code = await node.wait()
    report = {step.pop("step"): step for step in steps}
    assert code == 0, report.get("failed")
    return report


async def test_a_thread_parked_before_a_restart_is_resumed_by_the_same_agent(tmp_path: Path) -> None:
    report = await drive_across_restart("parked", tmp_path / "sessions.db")

    [question] = report["parked"]["interrupts"]
    assert (report["parked"]["outcome"], question["reason"]) == ("interrupt", "input_required")
    resumed = report["resumed"]
    assert (resumed["outcome"], resumed["interrupts"], resumed.get("error")) == ("success", [], None)
    assert resumed["message"] == "Recorded your pick: tpl_red."
    assert report["thread"]["roles"] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]


@pytest.fixture
def report_app(tmp_path: Path) -> Path:
    """An app whose one tool, `fetch_report`, writes a ledger line per run and stalls with `EVE_TEST_STALL=1`."""
    app = tmp_path / "report-app"
    (app / "agent" / "tools").mkdir(parents=True)
    (app / "agent" / "agent.py").write_text(REPORT_AGENT)
    for name, approval in (("fetch_report", False), ("approved_report", True)):
        (app / "agent" / "tools" / f"{name}.py").write_text(REPORT_TOOL.format(name=name, approval=approval))
    (app / "agent" / "mock_model.py").write_text(REPORT_MODEL)
    return app


@pytest.mark.parametrize("mode", ["killed", "approved"])
async def test_a_run_broken_by_a_crash_mid_turn_is_continued_on_the_new_server(
    mode: str, report_app: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger, running = tmp_path / "ledger.txt", tmp_path / "running"
    os.mkfifo(running)
    monkeypatch.setenv("EVE_TEST_LEDGER", str(ledger))
    monkeypatch.setenv("EVE_TEST_RUNNING", str(running))
    store = tmp_path / "sessions.db"
    report = await drive_across_restart(mode, store, app=report_app, env={"EVE_TEST_STALL": "1"}, crash=running)

    broken = report["broken"]
    assert "outcome" not in broken and "error" in broken, "the crash broke the run off"
    again = report["again"]
    assert (again.get("outcome"), again.get("error"), again["interrupts"]) == ("success", None, [])
    assert again["message"] == "The report says: weekly: all green."
    assert report["thread"]["tools"] == ['{"report":"weekly: all green"}']
    assert report["thread"]["roles"] == ["user", "assistant", "tool", "assistant"]

    sessions = SQLiteSessionStore(store)
    try:
        events = [e.type for e in await sessions.read_events(f"ag-ui-{mode}")]
    finally:
        await sessions.aclose()
    assert events.count("turn.started") == 1 and events.count("turn.completed") == 1, "one turn, finished"
    assert events.count("action.result") == 1
    assert len(ledger.read_text().splitlines()) == 2, "the tool that was running when the server died ran again"


async def test_a_message_after_a_crash_mid_turn_gets_the_rest_of_that_turn_then_its_own(
    report_app: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger, running = tmp_path / "ledger.txt", tmp_path / "running"
    os.mkfifo(running)
    monkeypatch.setenv("EVE_TEST_LEDGER", str(ledger))
    monkeypatch.setenv("EVE_TEST_RUNNING", str(running))
    store = tmp_path / "sessions.db"
    report = await drive_across_restart("message", store, app=report_app, env={"EVE_TEST_STALL": "1"}, crash=running)

    again = report["again"]
    assert (again.get("outcome"), again.get("error")) == ("success", None)
    assert again["message"] == "The report says: weekly: all green."
    assert report["thread"]["tools"] == ['{"report":"weekly: all green"}'] * 2, "the old turn's result, then the new"
    sessions = SQLiteSessionStore(store)
    try:
        events = [e.type for e in await sessions.read_events("ag-ui-message")]
    finally:
        await sessions.aclose()
    assert events.count("turn.started") == events.count("turn.completed") == 2
    assert events.count("action.result") == 2
    assert len(ledger.read_text().splitlines()) == 3, "cut off, run again by the new server, then the new turn's"
