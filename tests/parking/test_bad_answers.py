"""Bad answers are rejected with a clear error and leave the parked session exactly as it was."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from eve_py import (
    Agent,
    InputResponse,
    InvalidAnswerError,
    RequestAlreadyAnsweredError,
    Runtime,
    Session,
    SessionNotWaitingError,
    UnknownRequestError,
    define_tool,
    load_agent,
)
from eve_py.agent import load_mock_model
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.conftest import HITL_APP

pytestmark = pytest.mark.anyio


async def snapshot(session: Session) -> tuple[str, int]:
    """The stored record and the number of events: what must not change."""
    await session.refresh()
    return session.record.model_dump_json(), len(await session.events())


@pytest.fixture
async def parked() -> AsyncIterator[Session]:
    runtime = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP))
    session = await runtime.create_session()
    result = await session.send("help me pick a template")
    assert result.status == "waiting"
    yield session


def request_id(session: Session) -> str:
    return session.input_requests[0].request_id


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (
            {"value": {"pickedIds": "tpl_blue"}},
            "value fails the schema at pickedIds: 'tpl_blue' is not of type 'array'",
        ),
        ({"value": {"picked": ["tpl_blue"]}}, "value fails the schema at (root)"),
        ({"value": {"pickedIds": ["tpl_blue", "tpl_blue"]}}, "value fails the schema at pickedIds: "),
        ({"value": {"pickedIds": []}}, "value fails the schema at pickedIds: [] should be non-empty"),
        (
            {"text": "blue please"},
            "it needs a value matching the request's schema; text matches no option and is not JSON",
        ),
        ({"optionId": "tpl_purple", "value": {"pickedIds": []}}, "option 'tpl_purple' is not offered"),
        ({}, "it is empty"),
    ],
)
async def test_an_answer_that_does_not_fit_is_rejected_and_changes_nothing(
    parked: Session, answer: dict[str, Any], message: str
) -> None:
    before = await snapshot(parked)
    rid = request_id(parked)

    with pytest.raises(InvalidAnswerError) as caught:
        await parked.respond([{"requestId": rid, **answer}])

    assert message in str(caught.value)
    assert caught.value.request_id == rid
    assert await snapshot(parked) == before
    assert parked.status == "waiting"


async def test_text_holding_json_is_accepted_as_the_value(parked: Session) -> None:
    result = await parked.respond([InputResponse(request_id=request_id(parked), text='{"pickedIds": ["tpl_red"]}')])
    assert result.message == "Recorded your pick: tpl_red."


@pytest.mark.parametrize("text", ["Green", "tpl_GREEN", "3"])
async def test_a_typed_picker_takes_text_naming_an_option_as_eve_1_0_s_client_sends_it(
    parked: Session, text: str
) -> None:
    result = await parked.respond([InputResponse(request_id=request_id(parked), text=text)])
    assert result.message == "Recorded your pick: tpl_green."


async def test_an_unknown_request_id_is_rejected_and_changes_nothing(parked: Session) -> None:
    before = await snapshot(parked)

    with pytest.raises(UnknownRequestError) as caught:
        await parked.respond([InputResponse(request_id="call_nope", value={"pickedIds": ["tpl_blue"]})])

    assert "Unknown request id 'call_nope'; the open requests are ['mock-call-0-0']" in str(caught.value)
    assert await snapshot(parked) == before


async def test_one_bad_answer_rejects_the_whole_call(parked: Session) -> None:
    before = await snapshot(parked)
    rid = request_id(parked)

    with pytest.raises(UnknownRequestError):
        await parked.respond(
            [InputResponse(request_id=rid, value={"pickedIds": ["tpl_blue"]}), InputResponse(request_id="x")]
        )

    assert await snapshot(parked) == before


async def test_answering_the_same_request_twice_in_one_call_is_rejected(parked: Session) -> None:
    before = await snapshot(parked)
    rid = request_id(parked)
    answer = InputResponse(request_id=rid, value={"pickedIds": ["tpl_blue"]})

    with pytest.raises(RequestAlreadyAnsweredError, match="is answered twice in these answers"):
        await parked.respond([answer, answer])

    assert await snapshot(parked) == before


async def test_an_already_answered_request_is_rejected_later(parked: Session) -> None:
    rid = request_id(parked)
    await parked.respond([InputResponse(request_id=rid, value={"pickedIds": ["tpl_blue"]})])
    before = await snapshot(parked)

    with pytest.raises(RequestAlreadyAnsweredError) as caught:
        await parked.respond([InputResponse(request_id=rid, value={"pickedIds": ["tpl_red"]})])

    assert caught.value.request_id == rid
    assert await snapshot(parked) == before


async def test_an_already_answered_request_is_rejected_while_a_later_batch_waits() -> None:
    runtime = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP))
    session = await runtime.create_session()
    first = (await session.send("set up a palette")).input_requests[0]
    await session.respond([InputResponse(request_id=first.request_id, value={"pickedIds": ["tpl_red"]})])
    before = await snapshot(session)

    with pytest.raises(RequestAlreadyAnsweredError):
        await session.respond([InputResponse(request_id=first.request_id, value={"pickedIds": ["tpl_blue"]})])

    assert await snapshot(session) == before
    assert session.status == "waiting"


async def test_respond_on_a_session_that_is_not_waiting_is_rejected() -> None:
    session = await Runtime(Agent.from_definitions({}), model=MockModel(lambda r: "hello")).create_session()
    await session.send("hi")
    before = await snapshot(session)

    with pytest.raises(SessionNotWaitingError) as caught:
        await session.respond([InputResponse(request_id="anything", text="x")])

    assert "is not waiting for input (status 'idle')" in str(caught.value)
    assert await snapshot(session) == before


def question_agent(options: list[dict[str, str]], allow_freeform: bool | None = None) -> tuple[Agent, MockModel]:
    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            payload: dict[str, Any] = {"prompt": "Pick", "options": options}
            if allow_freeform is not None:
                payload["allowFreeform"] = allow_freeform
            return MockResponse(tool_calls=[MockToolCall("ask_question", payload)])
        return str(request.tool_results[0].output)

    return Agent.from_definitions({}), MockModel(respond)


OPTIONS = [{"id": "red", "label": "Red"}, {"id": "blue", "label": "Deep blue"}]


@pytest.mark.parametrize(
    ("answer", "result"),
    [
        ({"optionId": "blue"}, "{'status': 'answered', 'optionId': 'blue'}"),
        ({"text": "BLUE"}, "{'status': 'answered', 'optionId': 'blue'}"),
        ({"text": "deep blue"}, "{'status': 'answered', 'optionId': 'blue'}"),
        ({"text": "2"}, "{'status': 'answered', 'optionId': 'blue'}"),
        ({"action": "decline"}, "{'status': 'ignored'}"),
    ],
)
async def test_the_built_in_question_accepts_an_option_by_id_label_or_number(
    answer: dict[str, Any], result: str
) -> None:
    agent, model = question_agent(OPTIONS)
    session = await Runtime(agent, model=model).create_session()
    [request] = (await session.send("go")).input_requests
    assert request.kind == "question" and request.display == "select"

    done = await session.respond([{"requestId": request.request_id, **answer}])

    assert done.message == result


async def test_free_text_is_rejected_unless_the_question_allows_it() -> None:
    agent, model = question_agent(OPTIONS)
    session = await Runtime(agent, model=model).create_session()
    [request] = (await session.send("go")).input_requests

    with pytest.raises(InvalidAnswerError) as caught:
        await session.respond([InputResponse(request_id=request.request_id, text="green")])
    assert "'green' matches no option and free text is not allowed" in str(caught.value)

    agent, model = question_agent(OPTIONS, allow_freeform=True)
    session = await Runtime(agent, model=model).create_session()
    [request] = (await session.send("go")).input_requests
    done = await session.respond([InputResponse(request_id=request.request_id, text="green")])
    assert done.message == "{'status': 'answered', 'text': 'green'}"


async def test_the_built_in_question_takes_no_value() -> None:
    agent, model = question_agent(OPTIONS)
    session = await Runtime(agent, model=model).create_session()
    [request] = (await session.send("go")).input_requests

    with pytest.raises(InvalidAnswerError, match="not value"):
        await session.respond([InputResponse(request_id=request.request_id, value={"x": 1})])


async def test_an_approval_accepts_only_approve_or_deny() -> None:
    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("act", {})])
        return str(request.tool_results[0].output)

    agent = Agent.from_definitions(
        {"act": define_tool(description="Act.", execute=lambda: "done", needs_approval=True)}
    )
    session = await Runtime(agent, model=MockModel(respond)).create_session()
    [request] = (await session.send("go")).input_requests
    before = await snapshot(session)

    for bad in ({"optionId": "maybe"}, {"value": True}, {"text": "perhaps"}):
        with pytest.raises(InvalidAnswerError):
            await session.respond([{"requestId": request.request_id, **bad}])
    assert await snapshot(session) == before

    done = await session.respond([{"requestId": request.request_id, "action": "accept"}])
    assert done.message == "done"


async def test_a_malformed_response_is_an_invalid_answer_and_changes_nothing(parked: Session) -> None:
    before = await snapshot(parked)

    with pytest.raises(InvalidAnswerError) as caught:
        await parked.respond([{"requestId": request_id(parked), "bogus": 1}])

    assert "Malformed input response (bogus: Extra inputs are not permitted)" in str(caught.value)
    assert caught.value.request_id == request_id(parked)
    assert await snapshot(parked) == before


async def test_a_typed_picker_accepts_a_bare_option_id_as_its_value(parked: Session) -> None:
    done = await parked.respond([InputResponse(request_id=request_id(parked), option_id="tpl_red")])

    assert done.message == "Recorded your pick: tpl_red."


async def test_a_typed_picker_refuses_picked_ids_that_were_not_offered(parked: Session) -> None:
    before = await snapshot(parked)

    with pytest.raises(InvalidAnswerError) as caught:
        await parked.respond([InputResponse(request_id=request_id(parked), value={"pickedIds": ["tpl_blue", "x"]})])

    assert "pickedIds names options that are not offered: ['x']" in str(caught.value)
    assert await snapshot(parked) == before
