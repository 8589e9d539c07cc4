"""`collect_tool_calls`: a session's tool calls from its events, with and without the conversation."""

from __future__ import annotations

import pytest

from eve_py import InputResponse, Runtime, define_client_tool
from eve_py.agent import Agent
from eve_py.evals._calls import collect_tool_calls
from eve_py.models._base import Model
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.clock import Clock

pytestmark = pytest.mark.anyio


async def test_events_alone_rebuild_the_client_resolved_result_exactly_as_the_conversation_holds_it(
    hitl_agent: Agent, hitl_model: Model
) -> None:
    session = await Runtime(hitl_agent, model=hitl_model).create_session()
    parked = await session.send("help me pick a template")
    [request] = parked.input_requests
    await session.respond([InputResponse(request_id=request.request_id, option_id="tpl_green")])
    events = await session.events()

    from_events = {call.call_id: call for call in collect_tool_calls(events)}
    from_both = {call.call_id: call for call in collect_tool_calls(events, await session.messages())}

    assert list(from_events) == list(from_both) == [request.request_id, "mock-call-1-0"]
    question = from_events[request.request_id]
    assert (question.tool_name, question.request_kind) == ("ask_question", "question")
    assert question.input["ui"] == {"kind": "template"}
    assert question.output == from_both[request.request_id].output == {"pickedIds": ["tpl_green"]}
    assert question.has_result and not question.is_error
    assert question.result_count == from_both[request.request_id].result_count == 1
    note = from_events["mock-call-1-0"]
    assert note.output == {"recorded": True, "text": "picked tpl_green", "callId": "mock-call-1-0"}


async def test_a_parked_call_has_no_result_and_counts_none_in_the_conversation(
    hitl_agent: Agent, hitl_model: Model
) -> None:
    session = await Runtime(hitl_agent, model=hitl_model).create_session()
    await session.send("review my page")  # approval + question park; note runs at once
    events = await session.events()

    calls = {call.tool_name: call for call in collect_tool_calls(events, await session.messages())}

    assert calls["guarded_echo"].request_kind == "tool-approval"
    assert not calls["guarded_echo"].has_result and calls["guarded_echo"].output is None
    assert not calls["ask_question"].has_result
    assert calls["note"].has_result  # it ran, its step is parked
    assert [call.result_count for call in calls.values()] == [0, 0, 0]
    from_events = {call.tool_name: call for call in collect_tool_calls(events)}
    assert from_events["note"].result_count == 1  # counted in the events: note's action.result


async def test_questions_dismissed_by_a_new_message_resolve_as_ignored(hitl_agent: Agent, hitl_model: Model) -> None:
    session = await Runtime(hitl_agent, model=hitl_model).create_session()
    await session.send("compare two layouts")
    await session.send("never mind")
    events = await session.events()

    calls = collect_tool_calls(events)
    with_conversation = collect_tool_calls(events, await session.messages())

    assert [call.output for call in calls] == [{"status": "ignored"}, {"status": "ignored"}]
    assert [call.output for call in with_conversation] == [{"status": "ignored"}, {"status": "ignored"}]
    assert [call.result_count for call in with_conversation] == [1, 1]


async def test_an_answered_question_in_a_batch_left_open_by_an_approval_keeps_its_answer(
    hitl_agent: Agent, hitl_model: Model
) -> None:
    session = await Runtime(hitl_agent, model=hitl_model).create_session()
    parked = await session.send("review my page")
    question = next(r for r in parked.input_requests if r.kind == "question")
    approval = next(r for r in parked.input_requests if r.kind == "tool-approval")
    await session.respond([InputResponse(request_id=question.request_id, option_id="blue")])
    await session.respond([InputResponse(request_id=approval.request_id, option_id="approve")])

    events = await session.events()
    calls = {call.tool_name: call for call in collect_tool_calls(events)}

    in_model_order = collect_tool_calls(events, await session.messages())
    assert [call.tool_name for call in in_model_order] == ["guarded_echo", "ask_question", "note"]
    assert list(calls) == ["guarded_echo", "note", "ask_question"]  # events alone: executable calls first
    assert calls["ask_question"].output == {"pickedIds": ["blue"]}
    assert calls["guarded_echo"].output == {"token": "guarded-echo-ok-T4Q9", "echo": "review"}
    assert all(call.result_count == 1 for call in calls.values())


async def test_an_expired_client_tool_call_has_its_one_error_result_with_and_without_the_conversation(
    clock: Clock,
) -> None:
    pick = define_client_tool(
        description="Pick a colour.",
        input_schema={"type": "object", "properties": {"prompt": {"type": "string"}}},
        expires_after=60,
    )

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("pick", {"prompt": "Which colour?"})])
        return "went on without it"

    runtime = Runtime(Agent.from_definitions({"pick": pick}), model=MockModel(respond))
    session = await runtime.create_session()
    [request] = (await session.send("pick one")).input_requests
    clock.set(61)
    assert await runtime.expire_due() == 1
    events = await session.events()

    [from_events] = collect_tool_calls(events)  # as behind --url: no conversation to read
    [from_both] = collect_tool_calls(events, await session.messages())

    assert from_events.call_id == from_both.call_id == request.request_id
    assert from_events.request_kind == "client-tool"
    assert from_events.result_count == from_both.result_count == 1
    assert from_events.is_error and from_both.is_error
    assert isinstance(from_events.output, dict) and from_events.output["code"] == "INPUT_EXPIRED"
    assert from_events.output == from_both.output
