"""The eval driver `t` on real in-process sessions of the fixture app: driving, checks, failure reports."""

from __future__ import annotations

import re

import pytest

from eve_py import Agent, define_tool
from eve_py.errors import EvalAssertionError, EvalConfigurationError
from eve_py.evals import EvalDriver, InProcessBackend, option_answer
from eve_py.protocol import InputResolved
from eve_py.protocol.requests import InputOption, InputRequest, InputResponse, ToolCallAction
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio

TOKEN = "guarded-echo-ok-T4Q9"


# -- driving -------------------------------------------------------------------------------------


async def test_send_parks_and_expect_input_requests_returns_the_matching_request(driver: EvalDriver) -> None:
    turn = await driver.send("help me pick a template")

    assert turn.status == "waiting"
    [request] = driver.expect_input_requests(
        tool_name="ask_question",
        display="select",
        kind="question",
        option_ids=["tpl_green", "tpl_red", "tpl_blue"],  # any order
        prompt="template",
        times=1,
    )
    assert request.action.input["ui"] == {"kind": "template"}
    assert driver.waiting() is turn
    assert driver.step == 3
    assert driver.label == "waiting()"


async def test_a_structured_answer_resumes_the_turn_into_note_and_every_check_passes(driver: EvalDriver) -> None:
    await driver.send("help me pick a template")
    [request] = driver.expect_input_requests(tool_name="ask_question")

    turn = await driver.respond(request, value={"pickedIds": ["tpl_blue"]})

    assert turn.expect_ok() is turn
    assert turn.status == "completed"
    assert turn.message == "Recorded your pick: tpl_blue."
    driver.completed()
    driver.did_not_fail()
    [question] = driver.called_tool("ask_question", output={"pickedIds": ["tpl_blue"]}, times=1)
    assert question.call_id == request.request_id
    assert question.request_kind == "question"
    driver.called_tool("note", input={"text": re.compile("tpl_blue")}, output={"recorded": True}, is_error=False)
    driver.single_result(request.request_id)
    driver.single_result()
    driver.not_called_tool("guarded_echo")
    assert driver.message_includes("tpl_blue") == "Recorded your pick: tpl_blue."
    matched = driver.event_order(
        "input.requested",
        {
            "type": "input.resolved",
            "resolutions": [{"outcome": "answered", "response": {"value": {"pickedIds": ["tpl_blue"]}}}],
        },
        {"type": "action.result", "result": {"toolName": "note"}},
        "turn.completed",
    )
    assert [event.type for event in matched] == [
        "input.requested",
        "input.resolved",
        "action.result",
        "turn.completed",
    ]


async def test_respond_all_answers_a_typed_picker_with_a_value_holding_the_option(driver: EvalDriver) -> None:
    await driver.send("help me pick a template")

    await driver.respond_all("tpl_red")

    [resolved] = [event for event in driver.events if isinstance(event, InputResolved)]
    [question] = driver.tool_calls("ask_question")
    # The driver sends the option id; the runtime turns it into the picker's value.
    [resolution] = resolved.data.resolutions
    assert (resolution.request_id, resolution.outcome) == (question.call_id, "answered")
    assert resolution.response == InputResponse(
        request_id=question.call_id, option_id="tpl_red", value={"pickedIds": ["tpl_red"]}
    )
    driver.message_includes("tpl_red")


async def test_respond_all_approve_runs_the_executor_and_its_token_is_the_result(driver: EvalDriver) -> None:
    await driver.send("run the guarded echo")
    [approval] = driver.expect_input_requests(tool_name="guarded_echo", display="confirmation", kind="tool-approval")

    await driver.respond_all("approve")

    driver.completed()
    [call] = driver.called_tool("guarded_echo", output={"token": TOKEN, "echo": "hello"}, is_error=False, times=1)
    assert call.call_id == approval.request_id
    driver.message_includes(TOKEN)


async def test_respond_all_deny_gives_the_call_one_error_result_and_runs_nothing(driver: EvalDriver) -> None:
    await driver.send("run the guarded echo")

    await driver.respond_all("deny", text="not now")

    driver.completed()
    [call] = driver.called_tool("guarded_echo", is_error=True, times=1)
    assert isinstance(call.output, dict) and call.output["code"] == "TOOL_EXECUTION_DENIED"
    driver.single_result(call.call_id)
    driver.message_includes("did not run")


async def test_respond_all_with_an_option_one_request_lacks_fails_and_sends_nothing(driver: EvalDriver) -> None:
    await driver.send("compare two layouts")  # two questions: templates and colours

    with pytest.raises(EvalAssertionError) as failure:
        await driver.respond_all("blue")

    message = str(failure.value)
    assert "respond_all('blue')" in message
    assert "cannot be answered with option 'blue'" in message
    assert "options=['tpl_blue', 'tpl_red', 'tpl_green']" in message
    assert "input.requested" in message
    driver.waiting()  # nothing was sent
    assert not [event for event in driver.events if event.type == "input.resolved"]


async def test_respond_many_answers_a_batch_in_one_call(driver: EvalDriver) -> None:
    await driver.send("compare two layouts")
    template, colour = driver.expect_input_requests(tool_name="ask_question", times=2)

    turn = await driver.respond_many(
        [
            {"requestId": template.request_id, "value": {"pickedIds": ["tpl_green"]}},
            {"requestId": colour.request_id, "value": {"pickedIds": ["red"]}},
        ]
    )

    assert turn.status == "completed"
    assert turn.message == "First layout: tpl_green; second layout: red."
    driver.single_result()


async def test_new_session_starts_over_and_all_events_keep_both_sessions(driver: EvalDriver) -> None:
    await driver.send("help me pick a template")
    await driver.respond_all("tpl_blue")
    first = driver.session_id
    first_count = len(driver.events)

    second = await driver.new_session()

    assert second != first
    assert driver.sessions == [first, second]
    assert [event.type for event in driver.events] == ["session.started"]
    assert driver.last_turn is None
    driver.not_called_tool("note")
    assert len(driver.all_events) == first_count + 1
    await driver.send("run the guarded echo")
    driver.waiting()


async def test_the_first_send_opens_a_session(driver: EvalDriver) -> None:
    before = driver.session_id

    await driver.send("hello")

    assert before is None
    assert driver.session_id is not None
    assert driver.events[0].type == "session.started"
    driver.completed()


# -- option_answer ---------------------------------------------------------------------------------


def _request(
    *,
    kind: str = "question",
    options: list[str] | None = None,
    schema: object = None,
    freeform: bool | None = None,
) -> InputRequest:
    return InputRequest.model_validate(
        {
            "requestId": "call_1",
            "kind": kind,
            "action": ToolCallAction(call_id="call_1", tool_name="ask_question", input={}).to_wire(),
            "prompt": "Pick one",
            "display": "select" if options else "text",
            "options": [InputOption(id=o, label=o.title()).to_wire() for o in options] if options else None,
            "allowFreeform": freeform,
            "schema": schema,
        }
    )


def test_option_answer_sends_the_option_id_to_a_picker_schema_whose_single_required_property_is_a_string_array() -> (
    None
):
    schema = {
        "type": "object",
        "properties": {"pickedIds": {"type": "array", "items": {"type": "string"}}},
        "required": ["pickedIds"],
    }
    answer = option_answer(_request(options=["red", "blue"], schema=schema), "blue")
    assert answer is not None and answer.option_id == "blue" and answer.value is None


def test_option_answer_sends_the_option_id_to_a_picker_schema_whose_single_required_property_is_a_string() -> None:
    schema = {"type": "object", "properties": {"choice": {"type": "string"}}, "required": ["choice"]}
    answer = option_answer(_request(options=["red", "blue"], schema=schema), "red")
    assert answer is not None and answer.option_id == "red" and answer.value is None


def test_option_answer_sends_option_id_to_a_plain_select_and_text_to_a_freeform_one() -> None:
    plain = option_answer(_request(options=["red", "blue"]), "red", text="because")
    assert plain is not None and (plain.option_id, plain.text, plain.value) == ("red", "because", None)
    freeform = option_answer(_request(options=["red"], freeform=True), "green")
    assert freeform is not None and (freeform.option_id, freeform.text) == (None, "green")


def test_option_answer_refuses_what_the_request_cannot_take() -> None:
    assert option_answer(_request(options=["red", "blue"]), "green") is None
    other_schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert option_answer(_request(options=["red"], schema=other_schema), "red") is None
    approval = _request(kind="tool-approval", options=["approve", "deny"])
    assert option_answer(approval, "blue") is None
    approved = option_answer(approval, "approve")
    assert approved is not None and approved.option_id == "approve"


# -- failure reports -------------------------------------------------------------------------------


async def test_completed_on_a_parked_turn_names_the_eval_the_step_and_shows_the_turns_events(
    driver: EvalDriver,
) -> None:
    await driver.send("help me pick a template")

    with pytest.raises(EvalAssertionError) as failure:
        driver.completed()

    error = failure.value
    assert isinstance(error, AssertionError)
    assert (error.eval_id, error.step, error.label) == ("demo/driver", 2, "completed()")
    message = str(error)
    assert message.startswith(
        "eval 'demo/driver' failed at step 2 `completed()`: expected the last turn to be completed"
    )
    assert "but it is waiting on 1 request(s): ask_question [question, select]" in message
    assert f"events of session {driver.session_id}:" in message
    assert re.search(r"#\d+ +input\.requested +\{", message)
    assert re.search(r"#\d+ +turn\.waiting", message)


async def test_waiting_on_a_completed_turn_fails(driver: EvalDriver) -> None:
    await driver.send("hello")

    with pytest.raises(EvalAssertionError, match="expected the last turn to be waiting, but it is completed"):
        driver.waiting()


async def test_checks_before_any_turn_fail_clearly(driver: EvalDriver) -> None:
    with pytest.raises(EvalAssertionError, match="no turn ran yet"):
        driver.completed()
    with pytest.raises(EvalAssertionError, match="no session to answer in; call send"):
        await driver.respond("call_1", option_id="red")
    with pytest.raises(EvalAssertionError, match="no open input requests"):
        await driver.respond_all("red")


async def test_expect_input_requests_fails_on_a_completed_turn_and_on_a_count_mismatch(driver: EvalDriver) -> None:
    await driver.send("hello")
    with pytest.raises(EvalAssertionError, match="expected the last turn to wait for input, but it is completed"):
        driver.expect_input_requests()

    await driver.send("compare two layouts")
    with pytest.raises(EvalAssertionError) as failure:
        driver.expect_input_requests(tool_name="ask_question", times=1)
    message = str(failure.value)
    assert "step 4 `expect_input_requests(tool_name='ask_question', times=1)`" in message
    assert "expected exactly 1 matching input request(s), found 2" in message
    assert "options=['red', 'blue']" in message

    with pytest.raises(EvalAssertionError, match="expected at least 1 matching input request"):
        driver.expect_input_requests(display="confirmation")


async def test_called_tool_failure_lists_the_calls_and_the_tool_events(driver: EvalDriver) -> None:
    await driver.send("help me pick a template")
    await driver.respond_all("tpl_blue")

    with pytest.raises(EvalAssertionError) as failure:
        driver.called_tool("note", input={"text": "picked tpl_red"})

    message = str(failure.value)
    assert "expected at least 1 call(s) of 'note' with input={'text': \"picked tpl_red\", ...}, found 0" in message
    assert "tool calls in this session:" in message
    assert 'note mock-call-1-0 input={"text": "picked tpl_blue"}' in message
    assert "(1 result(s))" in message
    assert re.search(r"#\d+ +action\.result +\{.*\"toolName\": \"note\"", message)

    with pytest.raises(EvalAssertionError, match=r"expected exactly 2 call\(s\) of 'note', found 1"):
        driver.called_tool("note", times=2)
    with pytest.raises(EvalAssertionError, match="with is_error=True"):
        driver.called_tool("note", is_error=True)


async def test_not_called_tool_fails_when_the_tool_was_called(driver: EvalDriver) -> None:
    await driver.send("run the guarded echo")

    with pytest.raises(EvalAssertionError) as failure:
        driver.not_called_tool("guarded_echo")

    assert "expected no call of 'guarded_echo'" in str(failure.value)
    assert "guarded_echo mock-call-0-0 [tool-approval]" in str(failure.value)
    assert "(no result)" in str(failure.value)


async def test_message_includes_shows_the_text_it_searched(driver: EvalDriver) -> None:
    await driver.send("hello")

    with pytest.raises(EvalAssertionError) as failure:
        driver.message_includes(re.compile(r"token \w+", re.I))

    assert "does not contain /token \\w+/i" in str(failure.value)
    assert 'Try "help me pick a template"' in str(failure.value)


async def test_event_order_reports_the_pattern_it_could_not_find_after_the_previous_match(driver: EvalDriver) -> None:
    await driver.send("help me pick a template")
    await driver.respond_all("tpl_blue")

    with pytest.raises(EvalAssertionError) as failure:
        driver.event_order({"type": "action.result", "result": {"toolName": "note"}}, "input.requested")

    message = str(failure.value)
    assert re.search(r"no input\.requested after event #\d+ \(matched 1 of 2 pattern\(s\)\)", message)
    assert "event types: #0:session.started #1:turn.started" in message

    with pytest.raises(EvalConfigurationError, match="'tool.called' is not an event type"):
        driver.event_order("tool.called")


async def test_a_failed_turn_fails_did_not_fail_and_expect_ok_with_the_turn_failed_event(
    hitl_agent: Agent,
) -> None:
    def broken(request: MockModelRequest) -> str:
        raise RuntimeError("provider exploded")

    driver = EvalDriver(InProcessBackend(hitl_agent, MockModel(broken)), eval_id="demo/failing")

    turn = await driver.send("hello")

    assert turn.status == "failed"
    with pytest.raises(EvalAssertionError) as failure:
        turn.expect_ok()
    assert "failed at step 2 `expect_ok()`: the turn failed: RuntimeError: provider exploded" in str(failure.value)
    with pytest.raises(EvalAssertionError) as failure:
        driver.did_not_fail()
    assert "1 failure event(s) in the session" in str(failure.value)
    assert re.search(r"#\d+ +turn\.failed +\{.*MODEL_ERROR", str(failure.value))


async def test_single_result_fails_for_a_call_with_no_result_yet_and_for_an_unknown_call(driver: EvalDriver) -> None:
    await driver.send("help me pick a template")
    [request] = driver.expect_input_requests()

    with pytest.raises(EvalAssertionError) as failure:
        driver.single_result(request.request_id)
    assert f"expected exactly one result per call in the conversation; found ask_question {request.request_id}: 0" in (
        str(failure.value)
    )
    with pytest.raises(EvalAssertionError, match="no tool call with id 'nope'"):
        driver.single_result("nope")


async def test_check_fails_with_its_message(driver: EvalDriver) -> None:
    await driver.send("hello")
    driver.check(True, "fine")

    with pytest.raises(EvalAssertionError, match=r"failed at step 3 `check\('the answer is 42'\)`: the answer is 42"):
        driver.check(0, "the answer is 42")


async def test_respond_needs_something_to_answer_with(driver: EvalDriver) -> None:
    await driver.send("help me pick a template")
    [request] = driver.expect_input_requests()

    with pytest.raises(EvalAssertionError, match="needs option_id, text, value or action"):
        await driver.respond(request)
    with pytest.raises(EvalAssertionError, match="takes 'accept', 'decline' or 'cancel'"):
        await driver.respond(request, action="maybe")


def _note(text: str) -> dict[str, bool]:
    return {"recorded": True}


async def test_tool_calls_include_calls_rejected_before_they_ran() -> None:
    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results_since_last_user_message:
            return MockResponse(tool_calls=[MockToolCall("no_such_tool", {"x": 1})])
        return "done"

    agent = Agent.from_definitions({"note": define_tool(description="Record a note.", execute=_note)})
    driver = EvalDriver(InProcessBackend(agent, MockModel(respond)), eval_id="demo/rejected")

    await driver.send("go")

    [call] = driver.called_tool("no_such_tool", is_error=True, times=1)
    assert isinstance(call.output, str) and call.output.startswith("Unknown tool 'no_such_tool'")
    assert call.input == {"x": 1}
    driver.single_result()


def test_option_answer_gives_a_freeform_picker_an_unoffered_id_as_its_value() -> None:
    schema = {
        "type": "object",
        "properties": {"pickedIds": {"type": "array", "items": {"type": "string"}}},
        "required": ["pickedIds"],
    }
    answer = option_answer(_request(options=["red"], schema=schema, freeform=True), "teal")
    assert answer is not None and answer.value == {"pickedIds": ["teal"]} and answer.option_id is None
