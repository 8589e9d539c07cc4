"""eve 1.0's `idempotencyKey` on `POST /session/{id}`: a repeat gets the first receipt and runs nothing.

Driven over real HTTP on eve 1.0's wire (`/eve/v1`) against the fixture app's mock model; the
session's log (its store) says how many turns and answers ran.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from eve_py.agent import Agent
from eve_py.protocol import InputResolved, TurnStarted
from eve_py.server._idempotency import IdempotencyKeys, KeyUse, delivery_id_for_key
from eve_py.sessions import SQLiteSessionStore
from tests.server.helpers import ALICE, hitl_runtime, serve

pytestmark = pytest.mark.anyio


def _client(base: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=base + "/eve/v1", headers={"authorization": f"Bearer {ALICE}"}, timeout=10.0)


async def _facts_until(client: httpx.AsyncClient, session_id: str, start: int, until: str) -> list[dict[str, Any]]:
    """The facts of the stream's commit lines from line `start` up to the first fact of type `until`."""
    facts: list[dict[str, Any]] = []
    with anyio.fail_after(10):
        async with client.stream("GET", f"/session/{session_id}/stream", params={"startIndex": start}) as response:
            assert response.status_code == 200, await response.aread()
            async for text in response.aiter_lines():
                facts += json.loads(text).get("facts", ())
                if any(fact["type"] == until for fact in facts):
                    return facts
    raise AssertionError(f"the stream ended before {until}")


async def _stored_facts(client: httpx.AsyncClient, session_id: str) -> list[dict[str, Any]]:
    """Every stored fact of the session."""
    response = await client.get(f"/session/{session_id}/stream", params={"follow": "false"})
    return [fact for text in response.text.splitlines() for fact in json.loads(text).get("facts", ())]


async def _settled_session(client: httpx.AsyncClient) -> str:
    """A new session whose first turn has settled: its id."""
    created = (await client.post("/session", json={"message": "hello"})).json()
    await _facts_until(client, created["sessionId"], 0, "turn.settled")
    return str(created["sessionId"])


async def _parked_picker(client: httpx.AsyncClient) -> tuple[str, str]:
    """A new session parked on the template picker: its id and the question's interaction id."""
    created = (await client.post("/session", json={"message": "help me pick a template"})).json()
    facts = await _facts_until(client, created["sessionId"], 0, "turn.paused")
    (opened,) = [f for f in facts if f["type"] == "interaction.opened"]
    return created["sessionId"], opened["data"]["interactionId"]


async def test_a_repeated_message_gets_the_first_receipt_and_runs_no_second_turn(hitl_agent: Agent) -> None:
    runtime = hitl_runtime(hitl_agent)
    async with serve(runtime) as served, _client(served.base) as client:
        session_id = await _settled_session(client)
        body = {"message": "tell me a story", "idempotencyKey": "webhook:evt_1"}
        first = await client.post(f"/session/{session_id}", json=body)
        assert first.status_code == 202, first.text
        assert first.json()["deliveryId"] == delivery_id_for_key("webhook:evt_1")
        assert "x-eve-idempotent-replay" not in first.headers
        await _facts_until(client, session_id, first.json()["startIndex"], "turn.settled")
        # the same key with another body: the first delivery's receipt, and nothing runs
        again = await client.post(f"/session/{session_id}", json=body | {"message": "help me pick a template"})
        assert again.status_code == 202, again.text
        assert again.headers["x-eve-idempotent-replay"] == "true"
        receipt = {k: first.json()[k] for k in ("sessionId", "deliveryId", "turnId")}
        assert {k: again.json()[k] for k in receipt} == receipt
        facts = await _stored_facts(client, session_id)
    assert len([e for e in await runtime.store.read_events(session_id) if isinstance(e, TurnStarted)]) == 2
    settled = [f["data"]["deliveryId"] for f in facts if f["type"] == "delivery.settled"]
    assert settled.count(first.json()["deliveryId"]) == 1
    assert not any(f["type"] == "interaction.opened" for f in facts)


async def test_a_repeated_answer_is_one_answer_and_its_delivery_settles_on_the_stream(hitl_agent: Agent) -> None:
    runtime = hitl_runtime(hitl_agent)
    async with serve(runtime) as served, _client(served.base) as client:
        session_id, interaction_id = await _parked_picker(client)
        answer = {"answers": [{"interactionId": interaction_id, "optionId": "tpl_red"}], "idempotencyKey": "a-1"}
        first = await client.post(f"/session/{session_id}", json=answer)
        assert first.status_code == 202, first.text
        delivery_id = first.json()["deliveryId"]
        assert delivery_id == delivery_id_for_key("a-1")
        facts = await _facts_until(client, session_id, first.json()["startIndex"], "turn.settled")
        again = await client.post(f"/session/{session_id}", json=answer)
        assert (again.status_code, again.json()["deliveryId"]) == (202, delivery_id)
    admitted = [f["data"]["deliveryId"] for f in facts if f["type"] == "delivery.admitted"]
    settled = [f["data"] for f in facts if f["type"] == "delivery.settled"]
    assert delivery_id in admitted
    assert [d["deliveryId"] for d in settled] == [delivery_id]
    resolved = [e for e in await runtime.store.read_events(session_id) if isinstance(e, InputResolved)]
    assert [e.data.delivery_id for e in resolved] == [delivery_id]
    texts = [f["data"]["value"] for f in facts if f["type"] == "content.completed"]
    assert texts[-1] == "Recorded your pick: tpl_red."


async def test_a_refused_request_leaves_its_key_free_for_the_corrected_retry(hitl_agent: Agent) -> None:
    runtime = hitl_runtime(hitl_agent)
    async with serve(runtime) as served, _client(served.base) as client:
        session_id, interaction_id = await _parked_picker(client)
        wrong = {"answers": [{"interactionId": interaction_id, "optionId": "tpl_pink"}], "idempotencyKey": "k"}
        refused = await client.post(f"/session/{session_id}", json=wrong)
        assert (refused.status_code, refused.json()["code"]) == (422, "invalid_answer")
        right = {"answers": [{"interactionId": interaction_id, "optionId": "tpl_blue"}], "idempotencyKey": "k"}
        accepted = await client.post(f"/session/{session_id}", json=right)
        assert accepted.status_code == 202, accepted.text
        assert "x-eve-idempotent-replay" not in accepted.headers
        facts = await _facts_until(client, session_id, accepted.json()["startIndex"], "turn.settled")
    texts = [f["data"]["value"] for f in facts if f["type"] == "content.completed"]
    assert texts[-1] == "Recorded your pick: tpl_blue."


async def test_the_same_key_sent_twice_at_once_runs_once(hitl_agent: Agent) -> None:
    runtime = hitl_runtime(hitl_agent)
    async with serve(runtime) as served, _client(served.base) as client:
        session_id = await _settled_session(client)
        body = {"message": "tell me a story", "idempotencyKey": "twice"}
        responses: list[httpx.Response] = []

        async def send() -> None:
            responses.append(await client.post(f"/session/{session_id}", json=body))

        async with anyio.create_task_group() as group:
            group.start_soon(send)
            group.start_soon(send)
        ran = [r for r in responses if r.status_code == 202 and "x-eve-idempotent-replay" not in r.headers]
        assert len(ran) == 1, [(r.status_code, r.text) for r in responses]
        (other,) = [r for r in responses if r is not ran[0]]
        # the other saw the first still under way (409) or already delivered (the first receipt)
        assert (other.status_code, other.json().get("code", other.json().get("deliveryId"))) in (
            (409, "delivery_in_progress"),
            (202, ran[0].json()["deliveryId"]),
        )
        await _facts_until(client, session_id, ran[0].json()["startIndex"], "turn.settled")
    assert len([e for e in await runtime.store.read_events(session_id) if isinstance(e, TurnStarted)]) == 2


async def test_a_key_claimed_by_a_worker_that_died_runs_again_once_its_claim_lapses(
    hitl_agent: Agent, tmp_path: Path
) -> None:
    runtime = hitl_runtime(hitl_agent, store=SQLiteSessionStore(tmp_path / "s.db"))
    try:
        one, two, three = [(await runtime.create_session()).id for _ in range(3)]
        async with IdempotencyKeys(runtime.store, claim_s=60.0).use(one, "k") as (use, _):
            assert use is KeyUse.FIRST  # ... and its worker dies before it writes anything
        async with IdempotencyKeys(runtime.store, claim_s=60.0).use(one, "k") as (use, _):
            assert use is KeyUse.IN_FLIGHT
        async with IdempotencyKeys(runtime.store, claim_s=60.0).use(two, "k") as (use, _):
            assert use is KeyUse.FIRST  # a key is per session
        lapsing = IdempotencyKeys(runtime.store, claim_s=0.0)
        async with lapsing.use(three, "k") as (use, _):
            assert use is KeyUse.FIRST
        async with lapsing.use(three, "k") as (use, _):
            assert use is KeyUse.FIRST
    finally:
        await runtime.aclose()


async def test_a_repeated_stale_answer_is_the_same_ignored_delivery(hitl_agent: Agent) -> None:
    runtime = hitl_runtime(hitl_agent)
    async with serve(runtime) as served, _client(served.base) as client:
        session_id, interaction_id = await _parked_picker(client)
        answer = {"answers": [{"interactionId": interaction_id, "optionId": "tpl_red"}]}
        first = await client.post(f"/session/{session_id}", json=answer)
        await _facts_until(client, session_id, first.json()["startIndex"], "turn.settled")
        stale = answer | {"idempotencyKey": "second-click"}
        once = await client.post(f"/session/{session_id}", json=stale)
        again = await client.post(f"/session/{session_id}", json=stale)
    assert (once.status_code, again.status_code) == (202, 202)
    assert once.json()["deliveryId"] == again.json()["deliveryId"] == delivery_id_for_key("second-click")
    assert again.headers["x-eve-idempotent-replay"] == "true"
    ignored = [e for e in await runtime.store.read_events(session_id) if e.type == "delivery.ignored"]
    assert len(ignored) == 1
