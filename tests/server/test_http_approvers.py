"""Who may answer, over HTTP: named tokens are the principals; approvers answer across sessions; quorum.

`pay` takes its approvals from finance (alice, bob) and needs both. The session belongs to
ops: ops cannot approve (403 not_an_approver); alice and bob list the approval waiting for them
(`GET /eve/v1/approvals`) and answer it (`POST /eve/v1/approvals`) without owning the session,
and see nothing else of it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from eve_py import Agent, Runtime, define_tool
from eve_py.sessions import SessionStore, SQLiteSessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.server.helpers import read_stream, serve

pytestmark = pytest.mark.anyio

TOKENS = ["ops=tok-ops-1", "alice=tok-alice-1", "bob=tok-bob-1", "carol=tok-carol-1"]


def runtime(store: SessionStore, ran: list[int]) -> Runtime:
    def pay(amount_cents: int) -> str:
        ran.append(amount_cents)
        return f"paid {amount_cents}"

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("pay", {"amount_cents": 90000})])
        return f"after: {request.tool_results[-1].output}"

    tool = define_tool(
        description="Pay.", execute=pay, needs_approval=True, approvers=["alice", "bob"], approvals_required=2
    )
    return Runtime(Agent.from_definitions({"pay": tool}), model=MockModel(respond), store=store)


async def test_approvers_answer_across_sessions_and_nobody_else_may(tmp_path: Path) -> None:
    ran: list[int] = []
    store = SQLiteSessionStore(tmp_path / "s.db")
    try:
        async with (
            serve(runtime(store, ran), tokens=TOKENS) as served,
            served.client("tok-ops-1") as ops,
            served.client("tok-alice-1") as alice,
            served.client("tok-bob-1") as bob,
            served.client("tok-carol-1") as carol,
        ):
            created = await ops.post("/session", json={"message": "pay the invoice"})
            session_id = created.json()["sessionId"]
            events = await read_stream(ops, session_id, created.json()["startIndex"])
            [requested] = [e for e in events if e["type"] == "input.requested"]
            request_id = requested["data"]["requests"][0]["requestId"]
            extension = requested["data"]["extensions"][request_id]
            approve = {"requestId": request_id, "optionId": "approve"}

            by_owner = await ops.post(f"/session/{session_id}", json={"inputResponses": [approve]})
            listed = (await alice.get("/approvals")).json()["approvals"]
            nothing_for_carol = (await carol.get("/approvals")).json()["approvals"]
            carol_tries = await carol.post("/approvals", json={"sessionId": session_id, "inputResponses": [approve]})
            alice_reads_state = await alice.get(f"/session/{session_id}")

            first = await alice.post("/approvals", json={"sessionId": session_id, "inputResponses": [approve]})
            again = await alice.post("/approvals", json={"sessionId": session_id, "inputResponses": [approve]})
            listed_for_bob = (await bob.get("/approvals")).json()["approvals"]
            second = await bob.post("/approvals", json={"sessionId": session_id, "inputResponses": [approve]})
            after_alice = await read_stream(ops, session_id, first.json()["startIndex"])
            after_bob = await read_stream(ops, session_id, second.json()["startIndex"])
            late = await alice.post("/approvals", json={"sessionId": session_id, "inputResponses": [approve]})
            carol_late = await carol.post("/approvals", json={"sessionId": session_id, "inputResponses": [approve]})
    finally:
        await store.aclose()

    assert extension["approvers"] == ["alice", "bob"] and extension["approvalsRequired"] == 2
    assert by_owner.status_code == 403 and by_owner.json()["code"] == "not_an_approver"
    assert [(e["sessionId"], e["requestId"], e["toolName"], e["approvals"]) for e in listed] == [
        (session_id, request_id, "pay", [])
    ]
    assert listed[0]["input"] == {"amount_cents": 90000} and listed[0]["approvalsRequired"] == 2
    assert nothing_for_carol == [] and carol_tries.status_code == 404
    assert alice_reads_state.status_code == 404, "an approver sees nothing else of the session"
    # Alice approved already, then the call ran: each time the session route's own refusal.
    assert first.status_code == 202
    assert (again.status_code, again.json()["code"]) == (409, "request_already_answered"), again.text
    assert (late.status_code, late.json()["code"]) == (409, "request_already_answered"), late.text
    assert carol_late.status_code == 404, "still nothing here for someone who is no approver"
    assert [e["approvals"] for e in listed_for_bob] == [["alice"]]
    assert second.status_code == 202 and ran == [90000]
    [approved] = [e for e in after_alice if e["type"] == "input.approved"]
    assert approved["data"]["approvedBy"] == "alice" and approved["data"]["required"] == 2
    [resolved] = [e for e in after_bob if e["type"] == "input.resolved"]
    resolution = resolved["data"]["resolutions"][0]
    assert (resolution["outcome"], resolution["answeredBy"], resolution["approvedBy"]) == (
        "approved",
        "bob",
        ["alice", "bob"],
    )


async def test_on_eve_1_0_s_wire_an_approval_short_of_its_quorum_is_a_delivery_that_settles(tmp_path: Path) -> None:
    ran: list[int] = []
    store = SQLiteSessionStore(tmp_path / "s.db")
    try:
        async with serve(runtime(store, ran), tokens=TOKENS) as served:
            headers = {"authorization": "Bearer tok-alice-1"}
            async with httpx.AsyncClient(base_url=served.base + "/eve/v1", headers=headers, timeout=10) as alice:
                created = (await alice.post("/session", json={"message": "pay the invoice"})).json()
                session_id = created["sessionId"]
                lines = await _v27_until(alice, session_id, 0, "turn.paused")
                [opened] = [f for line in lines for f in line.get("facts", ()) if f["type"] == "interaction.opened"]
                answer = {
                    "answers": [{"interactionId": opened["data"]["interactionId"], "optionId": "approve"}],
                    "idempotencyKey": "alice-approves",
                }
                first = await alice.post(f"/session/{session_id}", json=answer)
                assert first.status_code == 202, first.text
                delivery_id = first.json()["deliveryId"]
                after = await _v27_until(alice, session_id, len(lines), "delivery.settled")
                again = await alice.post(f"/session/{session_id}", json=answer)
    finally:
        await store.aclose()
    facts = [f for line in after for f in line.get("facts", ())]
    settled = [f["data"] for f in facts if f["type"] == "delivery.settled"]
    assert [(s["deliveryId"], s["outcome"]) for s in settled] == [(delivery_id, "awaiting-input")]
    assert not any(f["type"] == "interaction.settled" for f in facts), "it waits for bob"
    assert (again.status_code, again.json()["deliveryId"]) == (202, delivery_id)  # the first receipt
    assert ran == []


async def _v27_until(client: httpx.AsyncClient, session_id: str, start: int, until: str) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    with anyio.fail_after(10):
        async with client.stream("GET", f"/session/{session_id}/stream", params={"startIndex": start}) as response:
            async for text in response.aiter_lines():
                line = json.loads(text)
                lines.append(line)
                if any(f["type"] == until for f in line.get("facts", ())):
                    return lines
    raise AssertionError(f"the stream ended before {until}")
