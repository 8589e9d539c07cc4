"""The built-in ask_question tool: a strict, client-resolved question every agent gets by default."""

from __future__ import annotations

from typing import Any

import pytest

from eve_py import Agent, InputResponse, Runtime, define_tool, disable_tool
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall, MockToolResult


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


OPTIONS = [
    {"id": "blue", "label": "Blue", "description": "Calm"},
    {"id": "red", "label": "Red", "style": "danger"},
]


def asks(tool_input: dict[str, Any]) -> MockModel:
    """A model that calls ask_question once with `tool_input`, then reports what it got back."""

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("ask_question", tool_input)])
        return "thanks"

    return MockModel(respond)


def only_result(model: MockModel) -> MockToolResult:
    [result] = model.requests[-1].tool_results
    return result


def builtin_agent() -> Agent:
    def note(text: str) -> str:
        return text

    return Agent.from_definitions({"note": define_tool(description="Note.", execute=note)})


@pytest.mark.anyio
async def test_a_question_with_options_parks_as_a_select_request() -> None:
    session = await Runtime(
        builtin_agent(), model=asks({"prompt": "Which colour?", "options": OPTIONS})
    ).create_session()

    result = await session.send("pick a colour")

    assert result.status == "waiting"
    [request] = result.input_requests
    assert request.kind == "question"
    assert request.display == "select"
    assert request.prompt == "Which colour?"
    assert request.option_ids() == ["blue", "red"]
    assert request.action.tool_name == "ask_question"


@pytest.mark.anyio
async def test_picking_an_option_resolves_the_call_as_answered_with_the_option_id() -> None:
    model = asks({"prompt": "Which colour?", "options": OPTIONS})
    session = await Runtime(builtin_agent(), model=model).create_session()
    [request] = (await session.send("pick a colour")).input_requests

    result = await session.respond([InputResponse(request_id=request.request_id, option_id="red")])

    assert result.status == "completed"
    assert result.message == "thanks"
    assert only_result(model).output == {"status": "answered", "optionId": "red"}


@pytest.mark.anyio
async def test_a_free_text_answer_resolves_as_answered_with_the_text() -> None:
    model = asks({"prompt": "What is your name?"})
    session = await Runtime(builtin_agent(), model=model).create_session()
    [request] = (await session.send("hi")).input_requests
    assert request.display == "text"

    await session.respond([InputResponse(request_id=request.request_id, text="Ada")])

    assert only_result(model).output == {"status": "answered", "text": "Ada"}


@pytest.mark.anyio
async def test_declining_the_question_resolves_it_as_ignored() -> None:
    model = asks({"prompt": "Which colour?", "options": OPTIONS})
    session = await Runtime(builtin_agent(), model=model).create_session()
    [request] = (await session.send("pick a colour")).input_requests

    await session.respond([InputResponse(request_id=request.request_id, action="decline")])

    assert only_result(model).output == {"status": "ignored"}


@pytest.mark.anyio
async def test_an_option_that_was_not_offered_is_rejected_and_the_question_stays_open() -> None:
    from eve_py import InvalidAnswerError

    model = asks({"prompt": "Which colour?", "options": OPTIONS})
    session = await Runtime(builtin_agent(), model=model).create_session()
    [request] = (await session.send("pick a colour")).input_requests

    with pytest.raises(InvalidAnswerError, match="option 'green' is not offered"):
        await session.respond([InputResponse(request_id=request.request_id, option_id="green")])

    await session.refresh()
    assert session.status == "waiting"
    assert [r.request_id for r in session.input_requests] == [request.request_id]


@pytest.mark.anyio
async def test_the_built_in_input_is_strict_so_unknown_keys_give_the_model_an_error() -> None:
    model = asks({"prompt": "Which colour?", "ui": {"kind": "colour"}})
    session = await Runtime(builtin_agent(), model=model).create_session()

    result = await session.send("pick a colour")

    assert result.status == "completed"
    assert only_result(model).is_error is True


@pytest.mark.anyio
async def test_the_model_is_offered_the_built_in_ask_question_unless_it_is_disabled() -> None:
    offered = asks({"prompt": "x"})
    await (await Runtime(builtin_agent(), model=offered).create_session()).send("hi")
    disabled_model = MockModel(lambda request: "no tools to call")
    agent = Agent.from_definitions({"ask_question": disable_tool()})
    await (await Runtime(agent, model=disabled_model).create_session()).send("hi")

    assert "ask_question" in [tool.name for tool in offered.requests[0].tools]
    assert "ask_question" not in [tool.name for tool in disabled_model.requests[0].tools]
