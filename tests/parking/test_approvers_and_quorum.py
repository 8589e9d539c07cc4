"""Who may answer an approval (`approvers=`), and M-of-N approvals (`approvals_required=`).

An answer from a principal the tool does not name is refused before anything is written; a
call that needs two approvals runs only after two distinct approvers approved (each approval
recorded as it arrives, `input.approved`), one denial denies it, and nobody approves twice.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from eve_py import (
    Agent,
    ApprovalContext,
    NotAnApproverError,
    RequestAlreadyAnsweredError,
    Runtime,
    Session,
    SessionConflictError,
    ToolDefinitionError,
    define_tool,
)
from eve_py.protocol.events import InputApproved, InputResolved
from eve_py.sessions import SessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio

APPROVE = "approve"


def make_agent(ran: list[int], **approval: Any) -> tuple[Agent, MockModel]:
    def pay(amount_cents: int) -> str:
        ran.append(amount_cents)
        return f"paid {amount_cents}"

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("pay", {"amount_cents": 5000})])
        return f"after: {request.tool_results[-1].output}"

    tool = define_tool(description="Pay an invoice.", execute=pay, needs_approval=True, **approval)
    return Agent.from_definitions({"pay": tool}), MockModel(respond)


async def parked(store: SessionStore, ran: list[int], **approval: Any) -> tuple[Runtime, Session, str]:
    agent, model = make_agent(ran, **approval)
    runtime = Runtime(agent, model=model, store=store)
    session = await runtime.create_session()
    result = await session.send("pay it")
    [request] = result.input_requests
    return runtime, session, request.request_id


def answer(request_id: str, option: str = APPROVE) -> dict[str, str]:
    return {"requestId": request_id, "optionId": option}


async def test_only_a_named_approver_may_answer(store: SessionStore) -> None:
    ran: list[int] = []
    _, session, request_id = await parked(store, ran, approvers=["alice", "bob"])
    [request] = session.input_requests
    assert request.approvers == ["alice", "bob"] and request.approvals_required is None
    before = len(await session.events())

    with pytest.raises(NotAnApproverError, match="'carol' may not answer") as refused:
        await session.respond([answer(request_id)], by="carol")
    assert refused.value.request_id == request_id
    assert len(await session.events()) == before and (await session.refresh()).status == "waiting"

    result = await session.respond([answer(request_id)], by="bob")
    assert result.status == "completed" and ran == [5000]


async def test_a_callable_decides_who_may_answer(store: SessionStore) -> None:
    seen: list[tuple[str, str]] = []

    def finance(ctx: ApprovalContext, principal: str) -> bool:
        seen.append((ctx.tool_name, principal))
        amount = ctx.tool_input.get("amount_cents")
        return principal.startswith("fin-") and isinstance(amount, int) and amount < 10_000

    ran: list[int] = []
    _, session, request_id = await parked(store, ran, approvers=finance)

    with pytest.raises(NotAnApproverError):
        await session.respond([answer(request_id)], by="local")
    assert (await session.respond([answer(request_id)], by="fin-dana")).status == "completed"
    assert seen == [("pay", "local"), ("pay", "fin-dana")] and ran == [5000]


async def test_two_of_three_approvals_run_the_call_each_recorded_as_it_arrives(store: SessionStore) -> None:
    ran: list[int] = []
    agent, model = make_agent(ran, approvers=["alice", "bob", "carol"], approvals_required=2)
    runtime = Runtime(agent, model=model, store=store)
    session = await runtime.create_session()
    [request] = (await session.send("pay it")).input_requests
    assert request.approvals_required == 2

    first = await session.respond([answer(request.request_id)], by="alice")
    assert first.status == "waiting" and ran == []
    [approved] = [e for e in first.events if isinstance(e, InputApproved)]
    assert (approved.data.approved_by, approved.data.approvals, approved.data.required) == ("alice", ["alice"], 2)
    assert not any(isinstance(e, InputResolved) for e in first.events)
    with pytest.raises(RequestAlreadyAnsweredError, match="'alice' already approved"):
        await session.respond([answer(request.request_id)], by="alice")

    # Another process on the same store takes the second approval.
    agent2, model2 = make_agent(ran, approvers=["alice", "bob", "carol"], approvals_required=2)
    other = await Runtime(agent2, model=model2, store=store).get_session(session.id)
    second = await other.respond([answer(request.request_id)], by="carol")

    assert second.status == "completed" and ran == [5000]
    [resolved] = [e for e in second.events if isinstance(e, InputResolved)]
    [resolution] = resolved.data.resolutions
    assert (resolution.outcome, resolution.answered_by, resolution.approved_by) == (
        "approved",
        "carol",
        ["alice", "carol"],
    )


async def test_one_denial_denies_a_call_that_needs_several_approvals(store: SessionStore) -> None:
    ran: list[int] = []
    _, session, request_id = await parked(store, ran, approvers=["alice", "bob"], approvals_required=2)
    await session.respond([answer(request_id)], by="alice")

    result = await session.respond([{"requestId": request_id, "optionId": "deny", "text": "wrong vendor"}], by="bob")

    assert result.status == "completed" and ran == []
    resolutions = [r for e in result.events if isinstance(e, InputResolved) for r in e.data.resolutions]
    assert [(r.outcome, r.answered_by) for r in resolutions] == [("denied", "bob")]
    assert result.message is not None and "wrong vendor" in result.message


async def test_racing_approvals_lose_nothing_and_run_the_call_once(store: SessionStore) -> None:
    ran: list[int] = []
    runtime, session, request_id = await parked(store, ran, approvers=["alice", "bob"], approvals_required=2)
    handles = {name: await runtime.get_session(session.id) for name in ("alice", "bob")}
    won: list[str] = []

    async def approve(name: str) -> None:
        try:
            await handles[name].respond([answer(request_id)], by=name)
            won.append(name)
        except SessionConflictError:
            pass

    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            for name in handles:
                group.start_soon(approve, name)
    for name in {"alice", "bob"} - set(won):  # the loser of a race sends again, as a client would
        await (await runtime.get_session(session.id)).respond([answer(request_id)], by=name)

    await session.refresh()
    assert session.status == "idle" and ran == [5000]
    events = await session.events()
    assert len([e for e in events if isinstance(e, InputApproved)]) == 1
    [resolved] = [e for e in events if isinstance(e, InputResolved)]
    assert sorted(resolved.data.resolutions[0].approved_by or []) == ["alice", "bob"]


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"approvers": ["alice"]}, "needs_approval"),
        ({"needs_approval": True, "approvals_required": 0}, ">= 1"),
        ({"needs_approval": True, "approvals_required": 3, "approvers": ["a", "b"]}, "only 2 approvers"),
        ({"needs_approval": True, "approvers": "alice"}, "non-empty list"),
        ({"needs_approval": True, "approvers": ["alice", ""]}, "non-empty strings"),
        ({"needs_approval": True, "approvals_required": 2, "editable": True}, "same input"),
    ],
)
def test_a_bad_approver_setting_is_refused_where_it_is_written(options: dict[str, Any], problem: str) -> None:
    def pay(amount_cents: int) -> str:
        return str(amount_cents)

    with pytest.raises(ToolDefinitionError, match=problem):
        define_tool(description="Pay.", execute=pay, **options)
