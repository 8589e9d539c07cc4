"""AG-UI's own client (`@ag-ui/client`'s `HttpAgent`) sees a running tool's progress and logs live.

`drive_progress.mjs` approves the reporting echo of `tests/reporting_app.py`; the echo waits
until the script has seen its progress and log entry (it opens the echo's gate then), so they
must reach `HttpAgent` while the call runs. They end as one activity message per call.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.ag_ui_client.test_ag_ui_client import HERE, NODE, TOKEN, needs_node
from tests.reporting_app import reporting_app
from tests.server.helpers import eve_serve

pytestmark = pytest.mark.anyio


async def test_http_agent_gets_a_tools_progress_and_log_live_as_one_activity_message(tmp_path: Path) -> None:
    needs_node()
    app = reporting_app(tmp_path)
    async with eve_serve(tmp_path / "sessions.db", TOKEN, app=app) as (url, _, _):
        with anyio.fail_after(90):
            command = [str(NODE), str(HERE / "drive_progress.mjs"), url, TOKEN, str(app / "gate")]
            done = await anyio.run_process(command, cwd=HERE, check=False)
    steps = {(s := json.loads(line)).pop("step"): s for line in done.stdout.decode().splitlines() if line[:1] == "{"}
    assert done.returncode == 0, steps.get("failed", done.stderr.decode())
    progress = steps["progress"]

    assert progress["resultBeforeGate"] is False  # the reports came while the call ran
    assert [seen["type"] for seen in progress["seen"]] == ["ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "ACTIVITY_DELTA"]
    [activity] = progress["activities"]
    assert activity["activityType"] == "tool-progress"
    content = activity["content"]
    assert activity["id"] == f"activity_{content['toolCallId']}"
    assert (content["toolName"], content["progress"], content["total"], content["message"]) == (
        "guarded_echo",
        2,
        2,
        "done",
    )
    assert content["logs"] == [{"level": "info", "data": {"chars": len("hello")}, "logger": "echo"}]
    assert "guarded-echo-ok-T4Q9" in progress["message"]
