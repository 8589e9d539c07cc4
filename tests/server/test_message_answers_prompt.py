"""eve 1.0's rule for a message sent while prompts are open: it answers the first one where it fits,
else it withdraws them and starts a turn of its own (eve-py's 0.80.1 wire keeps dismissing)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from eve_py import Runtime, define_tool
from eve_py.agent import Agent
from eve_py.approval import always
from eve_py.protocol import InputResolved
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.server.helpers import ALICE, hitl_runtime, read_stream, serve

pytestmark = pytest.mark.anyio


def _client(base: str, api: str = "/eve/v1") -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=base + api, headers={"authorization": f"Bearer {ALICE}"}, timeout=10.0)


async def _facts_until(client: httpx.AsyncClient, session_id: str, start: int, until: str) -> list[dict[str, Any]]:
    facts: list[dict[str, Any]] = []
    with anyio.fail_after(10):
        async with client.stream("GET", f"/session/{session_id}/stream", params={"startIndex": start}) as response:
            async for text in response.aiter_lines():
                facts += json.loads(text).get("facts", ())
                if any(fact["type"] == until for fact in facts):
                    return facts
    raise AssertionError(f"the stream ended before {until}")


async def _parked(client: httpx.AsyncClient, message: str) -> tuple[str, str]:
    created = (await client.post("/session", json={"message": message})).json()
    facts = await _facts_until(client, created["sessionId"], 0, "turn.paused")
    (opened,) = [f for f in facts if f["type"] == "interaction.opened"]
    return created["sessionId"], opened["data"]["interactionId"]


def _replies(facts: list[dict[str, Any]]) -> list[str]:
    return [f["data"]["value"] for f in facts if f["type"] == "content.completed"]


@pytest.mark.parametrize(
    ("message", "text", "reply"),
    [
        ("help me pick a template", "Red", "Recorded your pick: tpl_red."),
        ("run the guarded echo", "yes", "The guarded echo ran and returned the token guarded-echo-ok-T4Q9."),
        ("run the guarded echo", "deny", "The guarded echo did not run: Tool execution was denied."),
    ],
)
async def test_a_message_that_fits_the_open_prompt_answers_it(
    hitl_agent: Agent, message: str, text: str, reply: str
) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, _client(served.base) as client:
        session_id, interaction_id = await _parked(client, message)
        sent = await client.post(f"/session/{session_id}", json={"message": text})
        assert sent.status_code == 202, sent.text
        facts = await _facts_until(client, session_id, sent.json()["startIndex"], "turn.settled")
    (settled,) = [f["data"] for f in facts if f["type"] == "interaction.settled"]
    assert (settled["interactionId"], settled["outcome"]) != (interaction_id, "withdrawn")
    assert _replies(facts)[-1] == reply
    deliveries = [f["data"]["deliveryId"] for f in facts if f["type"] == "delivery.settled"]
    assert sent.json()["deliveryId"] in deliveries
    assert not any(f["type"] == "turn.started" for f in facts), "the message continued the parked turn"


async def test_a_message_that_does_not_fit_withdraws_the_prompt_and_starts_its_own_turn(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, _client(served.base) as client:
        session_id, interaction_id = await _parked(client, "run the guarded echo")
        sent = await client.post(f"/session/{session_id}", json={"message": "tell me a story instead"})
        assert sent.status_code == 202, sent.text
        facts = await _facts_until(client, session_id, sent.json()["startIndex"], "content.completed")
    settled = [f["data"] for f in facts if f["type"] == "interaction.settled"]
    assert [(s["interactionId"], s["outcome"]) for s in settled] == [(interaction_id, "withdrawn")]
    assert "turn.started" in [f["type"] for f in facts]
    assert _replies(facts)[-1].startswith("Once upon a time")


async def test_eve_0_80_1_s_wire_keeps_dismissing_the_batch(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, _client(served.base, "/v26/eve/v1") as client:
        created = (await client.post("/session", json={"message": "help me pick a template"})).json()
        session_id = created["sessionId"]
        await read_stream(client, session_id)  # up to turn.waiting
        sent = await client.post(f"/session/{session_id}", json={"message": "Red"})
        assert sent.status_code == 202, sent.text
    events = await served.runtime.store.read_events(session_id)
    resolved = [e for e in events if isinstance(e, InputResolved)]
    assert [r.outcome for e in resolved for r in e.data.resolutions] == ["ignored"]


async def test_a_yes_to_an_approval_the_sender_may_not_give_withdraws_it_instead() -> None:
    def pay(cents: int) -> str:
        return f"paid {cents}"

    def respond(request: MockModelRequest) -> str | MockResponse:
        if "pay" in (request.last_user_message or "") and not request.tool_results_since_last_user_message:
            return MockResponse(tool_calls=[MockToolCall("pay", {"cents": 5})])
        return f"done: {[r.output for r in request.tool_results_since_last_user_message]}"

    tool = define_tool(description="Pay.", execute=pay, approval=always(), approvers=["finance"])
    runtime = Runtime(Agent.from_definitions({"pay": tool}), model=MockModel(respond))
    async with serve(runtime) as served, _client(served.base) as client:
        session_id, interaction_id = await _parked(client, "pay the bill")
        sent = await client.post(f"/session/{session_id}", json={"message": "yes"})
        assert sent.status_code == 202, sent.text
        facts = await _facts_until(client, session_id, sent.json()["startIndex"], "content.completed")
    settled = [f["data"] for f in facts if f["type"] == "interaction.settled"]
    assert [(s["interactionId"], s["outcome"]) for s in settled] == [(interaction_id, "withdrawn")]
    assert "paid 5" not in " ".join(_replies(facts)), "the approval was not given by someone who may not give it"


async def test_a_body_mixing_a_stale_answer_with_an_open_one_is_refused_whole(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, _client(served.base) as client:
        session_id, template = await _parked(client, "set up a palette")
        first = await client.post(
            f"/session/{session_id}", json={"answers": [{"interactionId": template, "optionId": "tpl_blue"}]}
        )
        facts = await _facts_until(client, session_id, first.json()["startIndex"], "turn.paused")
        (colour,) = [f["data"]["interactionId"] for f in facts if f["type"] == "interaction.opened"]
        mixed = {
            "answers": [
                {"interactionId": template, "optionId": "tpl_red"},
                {"interactionId": colour, "optionId": "red"},
            ]
        }
        refused = await client.post(f"/session/{session_id}", json=mixed)
        assert (refused.status_code, refused.json()["code"]) == (409, "request_already_answered")
        fresh = await client.post(
            f"/session/{session_id}", json={"answers": [{"interactionId": colour, "optionId": "red"}]}
        )
        assert fresh.status_code == 202, fresh.text  # the open question was not lost
        done = await _facts_until(client, session_id, fresh.json()["startIndex"], "turn.settled")
    assert _replies(done)[-1] == "Your palette is set: template tpl_blue, accent red."
