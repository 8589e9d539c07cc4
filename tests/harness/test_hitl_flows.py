"""End-to-end HITL flows on the fixture app and on agents built in code."""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import pytest

from eve_py import (
    Agent,
    ApprovalContext,
    InputResponse,
    InputResponseError,
    InvalidMessageError,
    Runtime,
    ToolContext,
    check_pairing,
    define_client_tool,
    define_tool,
    load_agent,
)
from eve_py.agent import load_mock_model
from eve_py.approval import ApprovalStatus, once
from eve_py.harness import Committed
from eve_py.protocol import ActionResult
from eve_py.protocol.messages import AssistantMessage, Message, ToolMessage
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.conftest import HITL_APP

pytestmark = pytest.mark.anyio

GUARDED_ECHO_TOKEN = "guarded-echo-ok-T4Q9"


def results_for(messages: list[Message], call_id: str) -> list[Any]:
    """Every tool result part for `call_id` in a conversation."""
    return [
        part
        for message in messages
        if isinstance(message, ToolMessage)
        for part in message.content
        if part.tool_call_id == call_id
    ]


def assert_every_request_paired(model: MockModel) -> None:
    for request in model.requests:
        check_pairing(request.messages)


def fixture_runtime() -> tuple[Runtime, MockModel]:
    model = load_mock_model(HITL_APP)
    assert isinstance(model, MockModel)
    return Runtime(load_agent(HITL_APP), model=model), model


async def test_ask_question_override_parks_resumes_from_structured_answer_and_continues_into_note() -> None:
    runtime, model = fixture_runtime()
    session = await runtime.create_session()

    parked = await session.send("help me pick a template")

    assert parked.status == "waiting"
    [request] = parked.input_requests
    assert request.kind == "question"
    assert request.display == "select"
    assert request.action.tool_name == "ask_question"
    assert request.action.input["ui"] == {"kind": "template"}
    assert request.option_ids() == ["tpl_blue", "tpl_red", "tpl_green"]
    assert request.response_schema is not None and "pickedIds" in request.response_schema["properties"]
    assert [e.type for e in parked.events][-2:] == ["input.requested", "turn.waiting"]
    assert not any(e.type in ("actions.requested", "action.result") for e in parked.events)

    done = await session.respond([InputResponse(request_id=request.request_id, value={"pickedIds": ["tpl_blue"]})])

    assert done.status == "completed"
    assert done.message == "Recorded your pick: tpl_blue."
    [result] = results_for((await session.messages()), request.action.call_id)
    assert result.output == {"pickedIds": ["tpl_blue"]}
    assert not result.is_error
    note_results = [e for e in done.events if isinstance(e, ActionResult) and e.data.result.tool_name == "note"]
    note_output: Any = note_results[0].data.result.output
    assert len(note_results) == 1 and note_output["text"] == "picked tpl_blue"
    assert_every_request_paired(model)
    check_pairing(await session.messages())
    # The model saw the parked call's result exactly once, in every later request.
    later = model.requests[1:]
    assert later and all(len(results_for(list(r.messages), request.action.call_id)) == 1 for r in later)


async def test_a_client_tool_with_any_name_parks_and_its_answer_is_the_result() -> None:
    pick_colour = define_client_tool(
        description="Let the person pick a colour.",
        input_schema={"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
        output_schema={"type": "object", "properties": {"colour": {"type": "string"}}, "required": ["colour"]},
    )

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("pick_colour", {"prompt": "Colour?"})])
        return f"You chose {request.tool_results[0].output}"

    model = MockModel(respond)
    runtime = Runtime(Agent.from_definitions({"pick_colour": pick_colour}), model=model)
    session = await runtime.create_session()

    parked = await session.send("hi")
    [request] = parked.input_requests
    assert (request.kind, request.display, request.prompt) == ("client-tool", "form", "Colour?")
    done = await session.respond([{"requestId": request.request_id, "value": {"colour": "teal"}}])

    assert done.status == "completed"
    assert done.message == "You chose {'colour': 'teal'}"
    assert [r.output for r in model.requests[-1].tool_results] == [{"colour": "teal"}]


async def test_approval_runs_the_executor_and_its_output_is_the_result() -> None:
    runtime, model = fixture_runtime()
    session = await runtime.create_session()

    parked = await session.send("run the guarded echo")
    [request] = parked.input_requests
    assert (request.kind, request.display, request.option_ids()) == (
        "tool-approval",
        "confirmation",
        ["approve", "deny"],
    )
    assert not any(isinstance(e, ActionResult) for e in parked.events), "nothing runs before approval"

    done = await session.respond([InputResponse(request_id=request.request_id, option_id="approve")])

    assert done.status == "completed"
    assert GUARDED_ECHO_TOKEN in (done.message or "")
    [result] = results_for((await session.messages()), request.action.call_id)
    assert result.output == {"token": GUARDED_ECHO_TOKEN, "echo": "hello"}
    [event] = [e for e in done.events if isinstance(e, ActionResult)]
    output: Any = event.data.result.output
    assert output["token"] == GUARDED_ECHO_TOKEN
    assert_every_request_paired(model)


async def test_a_denied_approval_gets_one_error_result_with_the_reason_and_never_runs() -> None:
    runs: list[str] = []

    def delete_file(path: str) -> str:
        runs.append(path)
        return "deleted"

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("delete_file", {"path": "/etc/passwd"})])
        return f"outcome: {request.tool_results[0].output}"

    model = MockModel(respond)
    agent = Agent.from_definitions(
        {"delete_file": define_tool(description="Delete a file.", execute=delete_file, needs_approval=True)}
    )
    session = await Runtime(agent, model=model).create_session()
    [request] = (await session.send("clean up")).input_requests

    done = await session.respond([InputResponse(request_id=request.request_id, option_id="deny", text="too risky")])

    assert runs == []
    [result] = results_for((await session.messages()), request.action.call_id)
    assert result.is_error
    assert result.output == "Tool execution was denied. Reason: too risky"
    [event] = [e for e in done.events if isinstance(e, ActionResult)]
    output: Any = event.data.result.output
    assert output["code"] == "TOOL_EXECUTION_DENIED"
    assert output["tool"] == {"result": "not_run"}
    assert done.message == "outcome: Tool execution was denied. Reason: too risky"


async def test_approval_and_client_resolved_are_separate_paths() -> None:
    runtime, model = fixture_runtime()
    session = await runtime.create_session()

    approval = (await session.send("run the guarded echo")).input_requests[0]
    await session.respond([InputResponse(request_id=approval.request_id, option_id="approve")])
    question = (await session.send("compare two layouts")).input_requests

    assert all(r.display != "confirmation" and r.kind == "question" for r in question)
    done = await session.respond(
        [InputResponse(request_id=r.request_id, value={"pickedIds": [r.option_ids()[-1]]}) for r in question]
    )

    assert done.status == "completed"
    assert done.message == "First layout: tpl_green; second layout: blue."
    assert not any(isinstance(e, ActionResult) for e in done.events), "answering a question executes nothing"
    echo_results = [r for r in model.requests[-1].tool_results if r.name == "guarded_echo"]
    assert len(echo_results) == 1 and echo_results[0].output == {"token": GUARDED_ECHO_TOKEN, "echo": "hello"}


async def test_two_sequential_parks_in_one_turn_each_get_one_result() -> None:
    runtime, model = fixture_runtime()
    session = await runtime.create_session()

    first = await session.send("set up a palette")
    second = await session.respond(
        [InputResponse(request_id=first.input_requests[0].request_id, value={"pickedIds": ["tpl_red"]})]
    )
    assert second.status == "waiting"
    assert second.turn_id == first.turn_id
    assert second.message == "Good choice. One more thing:"
    [colour] = second.input_requests
    assert colour.prompt == "Which accent colour?"

    done = await session.respond([InputResponse(request_id=colour.request_id, value={"pickedIds": ["blue"]})])

    assert done.status == "completed"
    assert done.turn_id == first.turn_id
    for request in (first.input_requests[0], colour):
        assert len(results_for((await session.messages()), request.action.call_id)) == 1
    notes = [r for r in model.requests[-1].tool_results if r.name == "note"]
    assert notes[0].output["text"] == "template tpl_red, accent blue"  # type: ignore[index,call-overload]
    assert_every_request_paired(model)


async def test_two_parked_calls_in_one_step_form_one_batch_answered_in_one_respond() -> None:
    runtime, model = fixture_runtime()
    session = await runtime.create_session()

    parked = await session.send("compare two layouts")

    assert len(parked.input_requests) == 2
    assert sum(e.type == "input.requested" for e in parked.events) == 1
    first, second = parked.input_requests
    done = await session.respond(
        [
            InputResponse(request_id=first.request_id, value={"pickedIds": ["tpl_red"]}),
            InputResponse(request_id=second.request_id, value={"pickedIds": ["red"]}),
        ]
    )
    assert done.message == "First layout: tpl_red; second layout: red."
    assert_every_request_paired(model)


async def test_a_question_left_unanswered_in_a_settled_batch_resolves_as_ignored() -> None:
    runtime, model = fixture_runtime()
    session = await runtime.create_session()
    first, second = (await session.send("compare two layouts")).input_requests

    done = await session.respond([InputResponse(request_id=first.request_id, value={"pickedIds": ["tpl_blue"]})])

    assert done.status == "completed"
    [ignored] = results_for((await session.messages()), second.action.call_id)
    assert ignored.output == {"status": "ignored"}
    assert done.message == "First layout: tpl_blue; second layout: nothing (the question was skipped)."


async def test_executable_siblings_run_while_the_others_park() -> None:
    runtime, model = fixture_runtime()
    session = await runtime.create_session()

    parked = await session.send("review my page")

    kinds = sorted(r.kind for r in parked.input_requests)
    assert kinds == ["question", "tool-approval"]
    [note] = [e for e in parked.events if isinstance(e, ActionResult)]
    note_output: Any = note.data.result.output
    assert note.data.result.tool_name == "note" and note_output["text"] == "review started"
    approval = next(r for r in parked.input_requests if r.kind == "tool-approval")
    question = next(r for r in parked.input_requests if r.kind == "question")

    done = await session.respond(
        [
            InputResponse(request_id=approval.request_id, option_id="approve"),
            InputResponse(request_id=question.request_id, value={"pickedIds": ["red"]}),
        ]
    )
    assert done.message == f"The guarded echo ran and returned the token {GUARDED_ECHO_TOKEN}. Colour: red."
    tool_message = next(m for m in reversed(await session.messages()) if isinstance(m, ToolMessage))
    assert Counter(p.tool_name for p in tool_message.content) == {"guarded_echo": 1, "ask_question": 1, "note": 1}
    assert_every_request_paired(model)


async def test_a_batch_with_approvals_keeps_waiting_until_every_approval_is_answered() -> None:
    calls: list[str] = []

    def act(name: str) -> str:
        calls.append(name)
        return f"did {name}"

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("act", {"name": "a"}), MockToolCall("act", {"name": "b"})])
        return " / ".join(str(r.output) for r in request.tool_results)

    agent = Agent.from_definitions({"act": define_tool(description="Act.", execute=act, needs_approval=True)})
    session = await Runtime(agent, model=MockModel(respond)).create_session()
    first, second = (await session.send("go")).input_requests

    partial = await session.respond([InputResponse(request_id=first.request_id, option_id="approve")])

    assert partial.status == "waiting"
    assert [r.request_id for r in partial.input_requests] == [second.request_id]
    assert calls == []
    assert (await session.refresh()).input_requests == partial.input_requests

    done = await session.respond([InputResponse(request_id=second.request_id, option_id="deny")])

    assert calls == ["a"]
    assert done.message == "did a / Tool execution was denied."


async def test_sending_a_message_to_a_waiting_session_dismisses_its_requests() -> None:
    runtime, model = fixture_runtime()
    session = await runtime.create_session()
    parked = await session.send("review my page")

    done = await session.send("run the guarded echo")

    assert done.status == "waiting", "the new message starts a turn of its own, which parks again"
    by_call = {r.action.call_id: r for r in parked.input_requests}
    for call_id, request in by_call.items():
        [result] = results_for((await session.messages()), call_id)
        if request.kind == "tool-approval":
            assert result.is_error and "Ignored because the user continued without responding." in result.output
        else:
            assert result.output == {"status": "ignored"}
    check_pairing(await session.messages())


async def test_a_tool_that_raises_becomes_an_error_result_the_model_sees() -> None:
    def explode(reason: str) -> str:
        raise RuntimeError(reason)

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("explode", {"reason": "disk full"})])
        result = request.tool_results[0]
        return f"error={result.is_error} output={result.output}"

    agent = Agent.from_definitions({"explode": define_tool(description="Fails.", execute=explode)})
    session = await Runtime(agent, model=MockModel(respond)).create_session()

    done = await session.send("go")

    assert done.status == "completed"
    assert done.message == "error=True output=Tool 'explode' failed: RuntimeError: disk full"


async def test_unknown_tools_and_invalid_input_get_error_results_instead_of_parking() -> None:
    ask = define_client_tool(
        description="Ask.", input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    )

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("nope", {}), MockToolCall("ask", {"n": "three"})])
        return "\n".join(f"{r.name}: {r.output}" for r in request.tool_results)

    session = await Runtime(Agent.from_definitions({"ask": ask}), model=MockModel(respond)).create_session()

    done = await session.send("go")

    assert done.status == "completed"
    unknown, invalid = (done.message or "").splitlines()
    assert unknown.startswith("nope: Unknown tool 'nope'. Available tools: ask, ask_question")
    assert invalid.startswith("ask: Invalid input for tool 'ask' at n: 'three' is not of type 'integer'")
    rejected = [(e.data.result.tool_name, e.data.result.is_error) for e in done.events if isinstance(e, ActionResult)]
    assert rejected == [("nope", True), ("ask", True)]
    assert not any(e.type == "input.requested" for e in done.events)


async def test_a_failing_model_fails_the_turn_and_the_session_can_send_again() -> None:
    attempts: list[str] = []

    def respond(request: MockModelRequest) -> str:
        attempts.append(request.last_user_message or "")
        if len(attempts) == 1:
            raise ConnectionError("provider unreachable")
        return "back again"

    session = await Runtime(Agent.from_definitions({}), model=MockModel(respond)).create_session()

    failed = await session.send("first")
    assert failed.status == "failed"
    assert failed.error == "ConnectionError: provider unreachable"
    assert [e.type for e in failed.events][-3:] == ["step.failed", "turn.failed", "session.waiting"]
    assert session.status == "idle"

    done = await session.send("second")
    assert done.status == "completed" and done.message == "back again"


async def test_a_turn_stops_at_the_step_limit() -> None:
    def note(text: str) -> str:
        return text

    def respond(request: MockModelRequest) -> MockResponse:
        return MockResponse(tool_calls=[MockToolCall("note", {"text": "again"})])

    runtime = Runtime(
        Agent.from_definitions({"note": define_tool(description="Note.", execute=note)}),
        model=MockModel(respond),
        max_steps=3,
    )
    session = await runtime.create_session()

    result = await session.send("loop")

    assert result.status == "failed"
    assert result.error == "The turn reached its limit of 3 model steps without a person's input."
    check_pairing(await session.messages())


async def test_an_approval_policy_sees_the_call_and_whether_once_remembers_its_tool() -> None:
    seen: list[ApprovalContext] = []

    async def policy(ctx: ApprovalContext) -> ApprovalStatus:
        seen.append(ctx)
        return once()(ctx)

    def pay(cents: int, ctx: ToolContext) -> dict[str, Any]:
        return {"paid": cents, "approved": ctx.approved}

    def respond(request: MockModelRequest) -> str | MockResponse:
        if len(request.tool_results) < 2:
            return MockResponse(tool_calls=[MockToolCall("pay", {"cents": 100 + len(request.tool_results)})])
        return "paid twice"

    agent = Agent.from_definitions({"pay": define_tool(description="Pay.", execute=pay, approval=policy)})
    session = await Runtime(agent, model=MockModel(respond)).create_session()
    [request] = (await session.send("pay")).input_requests
    assert request.remember is True

    done = await session.respond([InputResponse(request_id=request.request_id, option_id="approve")])

    assert done.status == "completed", "the second call was not parked: once() remembered pay's approval"
    assert [(c.tool_input, c.remembered) for c in seen] == [({"cents": 100}, False), ({"cents": 101}, True)]
    outputs = [e.data.result.output for e in done.events if isinstance(e, ActionResult)]
    assert outputs == [{"paid": 100, "approved": True}, {"paid": 101, "approved": False}]


async def test_a_tool_call_id_the_model_repeats_gets_a_suffix_so_every_request_stays_paired() -> None:
    from eve_py.models import ModelRequest, ModelResponse, ModelToolCall

    class RepeatingModel:
        """Like compatible servers that number calls per response: `call_0` every step."""

        name = "repeating"
        requests: list[ModelRequest] = []

        async def request(self, request: ModelRequest) -> ModelResponse:
            self.requests.append(request)
            if request.messages[-1].role == "tool":
                return ModelResponse(text="done")
            return ModelResponse(
                tool_calls=[
                    ModelToolCall(id="call_0", name="note", input={"text": "x"}),
                    ModelToolCall(id="call_0", name="note", input={"text": "y"}),
                ]
            )

    def note(text: str) -> str:
        return text

    model = RepeatingModel()
    agent = Agent.from_definitions({"note": define_tool(description="Note.", execute=note)})
    session = await Runtime(agent, model=model).create_session()
    assert (await session.send("one")).status == "completed"

    done = await session.send("two")

    assert done.status == "completed"
    ids = [c.tool_call_id for m in (await session.messages()) if isinstance(m, AssistantMessage) for c in m.tool_calls]
    assert ids == ["call_0", "call_0#2", "call_0#3", "call_0#4"]
    for request in model.requests:
        check_pairing(request.messages)


async def test_a_blank_message_is_refused_before_anything_is_stored() -> None:
    session = await Runtime(Agent.from_definitions({}), model=MockModel(lambda r: "hi")).create_session()

    with pytest.raises(InvalidMessageError):
        await session.send("  \n ")

    assert [e.type for e in await session.events()] == ["session.started"]


async def test_a_blank_model_reply_adds_no_message() -> None:
    replies = iter(["\n\n", "fine"])
    session = await Runtime(Agent.from_definitions({}), model=MockModel(lambda r: next(replies))).create_session()

    blank = await session.send("one")
    await session.send("two")

    assert blank.status == "completed" and blank.message is None
    assert [m.role for m in (await session.messages())] == ["user", "user", "assistant"]


async def test_resume_after_a_failed_turn_reports_the_failure() -> None:
    def respond(request: MockModelRequest) -> str:
        raise TimeoutError("model timed out")

    session = await Runtime(Agent.from_definitions({}), model=MockModel(respond)).create_session()
    await session.send("hello")

    result = await session.resume()

    assert (result.status, result.error) == ("failed", "TimeoutError: model timed out")


async def test_a_response_that_is_not_json_data_fails_the_turn_and_leaves_the_session_usable() -> None:
    def respond(request: MockModelRequest) -> str | MockResponse:
        if len(request.user_messages) == 1:
            return MockResponse(tool_calls=[MockToolCall("note", {"text": object()})])  # type: ignore[dict-item]
        return "fine"

    def note(text: str) -> str:
        return text

    session = await Runtime(
        Agent.from_definitions({"note": define_tool(description="Note.", execute=note)}), model=MockModel(respond)
    ).create_session()

    failed = await session.send("one")

    assert failed.status == "failed"
    assert failed.error is not None and failed.error.startswith("The model returned a response that is not valid JSON")
    assert (await session.send("two")).message == "fine"


async def test_output_that_to_model_output_cannot_serialize_becomes_an_error_result() -> None:
    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("clock", {})])
        return f"{request.tool_results[0].is_error}"

    tool = define_tool(description="Clock.", execute=lambda: "now", to_model_output=lambda output: {"at": object()})  # type: ignore[dict-item]
    session = await Runtime(Agent.from_definitions({"clock": tool}), model=MockModel(respond)).create_session()

    assert (await session.send("go")).message == "True"
    assert session.status == "idle"


async def test_a_failing_event_listener_does_not_break_the_turn() -> None:
    seen: list[str] = []

    def listener(committed: Committed) -> None:
        seen.extend(e.type for e in committed.events)
        raise RuntimeError("renderer crashed")

    runtime = Runtime(Agent.from_definitions({}), model=MockModel(lambda r: "hi"), on_event=listener)
    session = await runtime.create_session()

    assert (await session.send("hello")).message == "hi"
    assert seen[-2:] == ["turn.completed", "session.waiting"]


async def test_action_results_are_logged_in_call_order_whatever_order_the_calls_finish_in() -> None:
    fast_done = anyio.Event()

    async def slow() -> str:
        with anyio.fail_after(5):
            await fast_done.wait()
        return "slow"

    async def fast() -> str:
        fast_done.set()
        return "fast"

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("slow", {}), MockToolCall("fast", {})])
        return "done"

    agent = Agent.from_definitions(
        {"slow": define_tool(description="Slow.", execute=slow), "fast": define_tool(description="Fast.", execute=fast)}
    )
    session = await Runtime(agent, model=MockModel(respond)).create_session()

    done = await session.send("go")

    assert [e.data.result.tool_name for e in done.events if isinstance(e, ActionResult)] == ["slow", "fast"]


async def test_an_answer_given_on_the_last_allowed_step_still_reaches_the_model() -> None:
    def respond(request: MockModelRequest) -> str | MockResponse:
        asked = len(request.results_for("ask_question"))
        if asked < 2:
            return MockResponse(tool_calls=[MockToolCall("ask_question", {"prompt": f"Question {asked + 1}?"})])
        return f"Thanks: {[r.output for r in request.results_for('ask_question')]}"

    runtime = Runtime(Agent.from_definitions({}), model=MockModel(respond), max_steps=1)
    session = await runtime.create_session()

    first = await session.send("go")
    second = await session.respond([InputResponse(request_id=first.input_requests[0].request_id, text="a")])
    done = await session.respond([InputResponse(request_id=second.input_requests[0].request_id, text="b")])

    assert done.status == "completed", "each answer starts the step count again"
    assert done.message == "Thanks: [{'status': 'answered', 'text': 'a'}, {'status': 'answered', 'text': 'b'}]"


def two_question_agent() -> tuple[Agent, MockModel]:
    ask = define_client_tool(description="Ask the user.", input_schema={"type": "object", "properties": {}})

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("ask", {}, id="q1"), MockToolCall("ask", {}, id="q2")])
        return f"answers: {[result.output for result in request.tool_results]}"

    return Agent.from_definitions({"ask": ask}), MockModel(respond)


async def test_answers_kept_without_settling_stay_with_the_open_batch_until_a_later_respond_settles_it() -> None:
    agent, model = two_question_agent()
    session = await Runtime(agent, model=model).create_session()
    await session.send("ask me twice")

    kept = await session.respond([{"requestId": "q1", "text": "first"}], settle=False)
    assert kept.status == "waiting" and [r.request_id for r in kept.input_requests] == ["q2"]
    assert len(model.requests) == 1, "nothing ran: the batch is still open"
    before = len(await session.events())
    with pytest.raises(InputResponseError, match="leave none open"):
        await session.respond([{"requestId": "q2", "text": "second"}], settle=False)
    assert len(await session.events()) == before and session.status == "waiting", "a refused call writes nothing"

    done = await session.respond([{"requestId": "q2", "text": "second"}])
    assert done.status == "completed"
    outputs = [part.output for call in ("q1", "q2") for part in results_for(await session.messages(), call)]
    assert outputs == [{"status": "answered", "text": "first"}, {"status": "answered", "text": "second"}]
    assert_every_request_paired(model)
