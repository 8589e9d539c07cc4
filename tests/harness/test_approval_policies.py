"""eve 1.0's approval policies on `define_tool(approval=...)`: never, always, once, and a policy's own status."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from eve_py import Agent, ApprovalContext, InputResponse, Runtime, ToolDefinitionError, check_pairing, define_tool
from eve_py.approval import ApprovalStatus, Denied, always, never, once
from eve_py.protocol import ActionResult
from eve_py.sessions import SQLiteSessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio


def _charge(cents: int) -> dict[str, int]:
    return {"charged": cents}


def _one_charge_per_message(request: MockModelRequest) -> str | MockResponse:
    """Charges what the latest message names ("charge 5", or "charge 5 and 6" in one step), then reports."""
    if request.tool_results_since_last_user_message:
        return "; ".join(str(r.output) for r in request.tool_results_since_last_user_message)
    amounts = [int(word) for word in (request.last_user_message or "").split() if word.isdigit()]
    return MockResponse(tool_calls=[MockToolCall("charge", {"cents": cents}) for cents in amounts])


def _runtime(policy: Any, store: SQLiteSessionStore | None = None) -> Runtime:
    agent = Agent.from_definitions({"charge": define_tool(description="Charge.", execute=_charge, approval=policy)})
    return Runtime(agent, model=MockModel(_one_charge_per_message), store=store)


def _approve(request_id: str) -> InputResponse:
    return InputResponse(request_id=request_id, option_id="approve")


def _deny(request_id: str) -> InputResponse:
    return InputResponse(request_id=request_id, option_id="deny")


async def test_once_asks_for_the_first_call_only_and_its_memory_outlives_a_restart(tmp_path: Path) -> None:
    runtime = _runtime(once(), SQLiteSessionStore(tmp_path / "s.db"))
    session = await runtime.create_session()
    [request] = (await session.send("charge 5")).input_requests
    assert request.kind == "tool-approval" and request.remember is True
    assert (await session.respond([_approve(request.request_id)])).status == "completed"
    await runtime.aclose()

    restarted = _runtime(once(), SQLiteSessionStore(tmp_path / "s.db"))
    try:
        again = await (await restarted.get_session(session.id)).send("charge 7")
    finally:
        await restarted.aclose()
    assert again.status == "completed" and again.input_requests == []
    assert [e.data.result.output for e in again.events if isinstance(e, ActionResult)] == [{"charged": 7}]


async def test_a_denial_among_one_message_s_answers_wins_and_the_next_call_asks_again() -> None:
    session = await _runtime(once()).create_session()
    first, second = (await session.send("charge 5 and 6")).input_requests
    answered = await session.respond([_approve(first.request_id), _deny(second.request_id)])
    assert answered.status == "completed"
    outputs = [e.data.result.output for e in answered.events if isinstance(e, ActionResult)]
    assert {"charged": 5} in outputs and {"charged": 6} not in outputs
    asked = await session.send("charge 8")
    assert [r.action.input for r in asked.input_requests] == [{"cents": 8}], "the denial replaced the approval"


async def test_always_asks_every_call_and_never_asks_none() -> None:
    asking = await _runtime(always()).create_session()
    [request] = (await asking.send("charge 5")).input_requests
    assert request.remember is None
    await asking.respond([_approve(request.request_id)])
    assert len((await asking.send("charge 6")).input_requests) == 1, "always() remembers nothing"

    running = await _runtime(never()).create_session()
    done = await running.send("charge 5")
    assert done.status == "completed" and done.input_requests == []


async def test_a_policy_that_denies_stops_the_call_without_a_person_and_tells_the_model_why() -> None:
    def policy(ctx: ApprovalContext) -> ApprovalStatus:
        cents = ctx.tool_input["cents"]
        assert isinstance(cents, int)
        if cents > 1000:
            return Denied("charges over $10 need a manager")
        return "approved" if cents < 100 else "user-approval"

    session = await _runtime(policy).create_session()
    denied = await session.send("charge 5000")
    assert denied.status == "completed" and denied.input_requests == []
    [result] = [e.data for e in denied.events if isinstance(e, ActionResult)]
    assert (result.status, result.error and result.error.code) == ("rejected", "TOOL_EXECUTION_DENIED")
    assert denied.message == "Tool execution was denied. Reason: charges over $10 need a manager"
    approved = await session.send("charge 5")
    assert approved.input_requests == [] and approved.message == "{'charged': 5}"
    assert len((await session.send("charge 500")).input_requests) == 1
    check_pairing(await session.messages())


async def test_a_policy_returning_no_status_fails_its_call_with_a_clear_error() -> None:
    session = await _runtime(lambda ctx: "maybe").create_session()
    done = await session.send("charge 5")
    assert done.status == "completed" and done.input_requests == []
    assert done.message is not None and "returned 'maybe'" in done.message
    check_pairing(await session.messages())


def test_define_tool_takes_one_policy_and_checks_what_needs_one() -> None:
    with pytest.raises(ToolDefinitionError, match="not both"):
        define_tool(description="Charge.", execute=_charge, approval=once(), needs_approval=True)
    with pytest.raises(ToolDefinitionError, match="editable=True"):
        define_tool(description="Charge.", execute=_charge, approval=never(), editable=True)
    with pytest.raises(ToolDefinitionError, match="approval must be"):
        define_tool(description="Charge.", execute=_charge, approval="always")  # type: ignore[arg-type]
    assert define_tool(description="Charge.", execute=_charge, approval=always(), editable=True).editable


async def test_an_eve_0_80_1_policy_returning_any_truthy_value_still_asks() -> None:
    agent = Agent.from_definitions(
        {"charge": define_tool(description="Charge.", execute=_charge, needs_approval=lambda ctx: 1)}  # type: ignore[arg-type, return-value]
    )
    session = await Runtime(agent, model=MockModel(_one_charge_per_message)).create_session()
    assert len((await session.send("charge 5")).input_requests) == 1
