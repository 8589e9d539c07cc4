"""The AI SDK's own chat client (`ai` 7's `AbstractChat`) sees a running tool's progress and logs live.

`drive_progress.mjs` approves the reporting echo of `tests/reporting_app.py`; the echo waits
until the chat's `onData` has had its progress and log entry (the script opens the echo's gate
then), so they must reach the client while the call runs. The message keeps them as data parts.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import anyio
import pytest

from tests.ai_sdk_client.test_ai_sdk_client import HERE, NODE, TOKEN
from tests.reporting_app import reporting_app
from tests.server.helpers import eve_serve

pytestmark = pytest.mark.anyio


async def test_the_chat_gets_a_tools_progress_and_log_live_as_data_parts(tmp_path: Path) -> None:
    if not NODE.exists() and shutil.which("npm") is None and not os.environ.get("CI"):
        pytest.skip("npm is not installed: the AI SDK's own client cannot be installed to drive the server")
    app = reporting_app(tmp_path)
    async with eve_serve(tmp_path / "sessions.db", TOKEN, app=app) as (url, _, _):
        with anyio.fail_after(90):
            command = [str(NODE), str(HERE / "drive_progress.mjs"), url, TOKEN, str(app / "gate")]
            done = await anyio.run_process(command, cwd=HERE, check=False)
    steps = {(s := json.loads(line)).pop("step"): s for line in done.stdout.decode().splitlines() if line[:1] == "{"}
    assert done.returncode == 0, steps.get("failed", done.stderr.decode())
    progress = steps["progress"]

    assert progress["outputBeforeGate"] is False  # the reports came while the call ran
    assert [(seen["type"], seen["data"].get("message")) for seen in progress["seen"]] == [
        ("data-tool-progress", "echoing"),
        ("data-tool-log", None),
        ("data-tool-progress", "done"),
    ]
    call_id = progress["seen"][0]["data"]["toolCallId"]
    # The message keeps one progress part per call (the last report) and one part per log entry.
    [last, log] = sorted(progress["parts"], key=lambda part: part["type"], reverse=True)
    assert (last["type"], last["id"], last["data"]) == (
        "data-tool-progress",
        call_id,
        {"toolCallId": call_id, "toolName": "guarded_echo", "progress": 2, "total": 2, "message": "done"},
    )
    assert log["type"] == "data-tool-log"
    assert log["data"] == {
        "toolCallId": call_id,
        "toolName": "guarded_echo",
        "level": "info",
        "data": {"chars": 5},
        "logger": "echo",
    }
    assert "guarded-echo-ok-T4Q9" in progress["text"] and progress.get("error") is None
    assert steps["follow-up"].get("error") is None and steps["follow-up"]["status"] == "ready"
