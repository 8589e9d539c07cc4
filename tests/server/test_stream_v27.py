"""eve 1.0's stream (version 27) on `/eve/v1`: a read from a position continues a read from the start."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from eve_py.agent import Agent
from tests.server.helpers import ALICE, hitl_runtime, serve

pytestmark = pytest.mark.anyio


def _client(base: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=base + "/eve/v1", headers={"authorization": f"Bearer {ALICE}"}, timeout=10.0)


def _facts(line: dict[str, Any]) -> list[str]:
    return [fact["type"] for fact in line.get("facts", ())]


async def _read(client: httpx.AsyncClient, session_id: str, start: int, until: str | None) -> list[dict[str, Any]]:
    """Lines from `start` (transport records left out): up to a commit with the fact `until`, or
    the stored tail (`until=None`)."""
    params: dict[str, str | int] = {"startIndex": start}
    if until is None:
        params["follow"] = "false"
    lines: list[dict[str, Any]] = []
    with anyio.fail_after(10):
        async with client.stream("GET", f"/session/{session_id}/stream", params=params) as response:
            assert response.status_code == 200, await response.aread()
            assert response.headers["x-eve-stream-version"] == "27"
            async for text in response.aiter_lines():
                line = json.loads(text)
                if line.get("$eve") in ("heartbeat", "stream.lease-ended", "stream.ended"):
                    continue
                lines.append(line)
                if until is not None and until in _facts(line):
                    break
    return lines


async def test_reads_from_each_202s_start_index_continue_the_stream_read_from_the_start(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, _client(served.base) as client:
        created = (await client.post("/session", json={"message": "help me pick a template"})).json()
        session_id = created["sessionId"]
        parked = await _read(client, session_id, created["startIndex"], "turn.paused")
        (opened,) = [f for line in parked for f in line.get("facts", ()) if f["type"] == "interaction.opened"]
        answer = {"answers": [{"interactionId": opened["data"]["interactionId"], "optionId": "tpl_blue"}]}
        accepted = (await client.post(f"/session/{session_id}", json=answer)).json()
        assert accepted["startIndex"] == created["startIndex"] + len(parked)
        answered = await _read(client, session_id, accepted["startIndex"], "turn.settled")
        again = await _read(client, session_id, accepted["startIndex"], None)  # nothing kept from the last read
        whole = await _read(client, session_id, 0, None)
    assert again[: len(answered)] == answered
    assert whole[created["startIndex"] : accepted["startIndex"] + len(answered)] == parked + answered
    (settled,) = [f for line in answered for f in line.get("facts", ()) if f["type"] == "turn.settled"]
    assert settled["data"]["outcome"] == "completed"
    texts = [f["data"]["value"] for line in whole for f in line.get("facts", ()) if f["type"] == "content.completed"]
    assert texts[-1] == "Recorded your pick: tpl_blue."


async def test_two_readers_at_one_position_get_the_same_lines(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, _client(served.base) as client:
        created = (await client.post("/session", json={"message": "help me pick a template"})).json()
        session_id = created["sessionId"]
        parked = await _read(client, session_id, 0, "turn.paused")
        (opened,) = [f for line in parked for f in line.get("facts", ()) if f["type"] == "interaction.opened"]
        readers: list[list[dict[str, Any]]] = []

        async def read() -> None:
            readers.append(await _read(client, session_id, len(parked), "turn.settled"))

        async with anyio.create_task_group() as group:
            group.start_soon(read)
            group.start_soon(read)
            answer = {"answers": [{"interactionId": opened["data"]["interactionId"], "optionId": "tpl_blue"}]}
            assert (await client.post(f"/session/{session_id}", json=answer)).status_code == 202
        whole = await _read(client, session_id, 0, None)
    assert readers[0] == readers[1] == whole[len(parked) : len(parked) + len(readers[0])]
