"""MockModel: scripted responses, what the responder sees, and call ids that survive restarts."""

from __future__ import annotations

import pytest

from eve_py import Agent, Runtime, define_tool
from eve_py.errors import ModelError
from eve_py.models import ModelRequest, UserMessage
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio


def note(text: str) -> dict[str, str]:
    return {"noted": text}


AGENT = Agent.from_definitions({"note": define_tool(description="Note.", execute=note)}, instructions="Be brief.")


async def test_the_responder_sees_the_conversation_tools_and_results_as_json() -> None:
    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(text="noting", tool_calls=[MockToolCall("note", {"text": request.last_user_message})])
        return "done"

    model = MockModel(respond)
    session = await Runtime(AGENT, model=model).create_session()

    await session.send("remember milk")

    first, second = model.requests
    assert first.instructions == "Be brief."
    assert [t.name for t in first.tools] == ["ask_question", "note"]
    assert first.tools[1].input_schema["required"] == ["text"]
    assert first.user_messages == ["remember milk"] and first.tool_results == []
    [result] = second.tool_results
    assert (result.name, result.output, result.is_error) == ("note", {"noted": "remember milk"}, False)
    assert [m.role for m in second.messages] == ["user", "assistant", "tool"]


async def test_an_async_responder_works() -> None:
    async def respond(request: MockModelRequest) -> str:
        return f"echo {request.last_user_message}"

    session = await Runtime(AGENT, model=MockModel(respond)).create_session()
    assert (await session.send("hi")).message == "echo hi"


async def test_derived_call_ids_come_from_the_conversation_so_a_new_model_never_reuses_one() -> None:
    def respond(request: MockModelRequest) -> MockResponse | str:
        if len(request.tool_results) < 2:
            return MockResponse(tool_calls=[MockToolCall("note", {"text": "x"}, id="fixed")])
        return "ok"

    model = MockModel(respond)
    session = await Runtime(AGENT, model=model).create_session()
    await session.send("go")

    ids = [r.id for r in model.requests[-1].tool_results]
    assert ids == ["fixed", "fixed#2"]
    fresh = MockModel(lambda request: MockResponse(tool_calls=[MockToolCall("note", {"text": "y"})]))
    response = await fresh.request(ModelRequest(instructions=None, messages=model.requests[-1].messages, tools=[]))
    assert response.tool_calls[0].id not in ids


async def test_a_response_with_neither_text_nor_tool_calls_is_a_model_error() -> None:
    model = MockModel(lambda request: MockResponse())
    with pytest.raises(ModelError, match="neither text nor tool calls"):
        await model.request(ModelRequest(instructions=None, messages=[UserMessage(content="hi")], tools=[]))
    assert len(model.requests) == 1
