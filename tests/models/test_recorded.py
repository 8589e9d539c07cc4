"""The adapters parse real provider responses, recorded from the providers' public docs."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from eve_py.models import AnthropicModel, ChatCompletionsModel, ModelDelta, ModelRequest, UserMessage

pytestmark = pytest.mark.anyio

RECORDED = Path(__file__).parent / "recorded"


def serve_file(name: str, content_type: str) -> httpx.AsyncClient:
    body = (RECORDED / name).read_bytes()
    return httpx.AsyncClient(
        transport=httpx.MockTransport(
            lambda _: httpx.Response(200, content=body, headers={"content-type": content_type})
        )
    )


def request(deltas: list[ModelDelta] | None = None) -> ModelRequest:
    async def collect(delta: ModelDelta) -> None:
        assert deltas is not None
        deltas.append(delta)

    return ModelRequest(
        instructions=None,
        messages=[UserMessage(content="What is the weather like in San Francisco?")],
        tools=[],
        on_delta=collect if deltas is not None else None,
    )


async def test_openai_reference_tool_call_response_becomes_one_tool_call() -> None:
    async with serve_file("openai_chat_completion_tool_call.json", "application/json") as client:
        model = ChatCompletionsModel("gpt-4o-mini", provider="openai", client=client, stream=False)
        response = await model.request(request())

    assert response.text is None
    [call] = response.tool_calls
    assert (call.id, call.name, call.input, call.input_error) == (
        "call_abc123",
        "get_current_weather",
        {"location": "Boston, MA"},
        None,
    )


async def test_openai_recorded_tool_call_stream_assembles_arguments_and_reports_each_piece() -> None:
    deltas: list[ModelDelta] = []
    async with serve_file("openai_chat_stream_tool_call.sse", "text/event-stream") as client:
        model = ChatCompletionsModel("gpt-4-turbo", provider="openai", client=client, stream=True)
        response = await model.request(request(deltas))

    [call] = response.tool_calls
    assert (call.id, call.name, call.input) == (
        "call_9ctHOJqO3bYrpm2A6S7nHd5k",
        "get_current_weather",
        {"location": "Boston, MA"},
    )
    assert deltas[0] == ModelDelta(
        kind="tool-call", text="", call_id="call_9ctHOJqO3bYrpm2A6S7nHd5k", tool_name="get_current_weather"
    )
    assert "".join(d.text for d in deltas) == '{"location":"Boston, MA"}'
    assert all(d.kind == "tool-call" and d.call_id == call.id for d in deltas)
    assert [d.tool_name for d in deltas[1:]] == [None] * (len(deltas) - 1)


async def test_openai_reference_text_stream_becomes_text() -> None:
    deltas: list[ModelDelta] = []
    async with serve_file("openai_chat_stream_text.sse", "text/event-stream") as client:
        response = await ChatCompletionsModel("gpt-4o-mini", client=client, stream=True).request(request(deltas))

    assert response.text == "Hello"
    assert response.tool_calls == []
    assert deltas == [ModelDelta(kind="text", text="Hello")]


async def test_anthropic_docs_tool_use_response_becomes_text_and_a_tool_call() -> None:
    async with serve_file("anthropic_message_tool_use.json", "application/json") as client:
        response = await AnthropicModel("claude-opus-4-6", client=client, stream=False).request(request())

    assert response.text == "I'll check the current weather in San Francisco for you."
    [call] = response.tool_calls
    assert (call.id, call.name, call.input) == (
        "toolu_01A09q90qw90lq917835lq9",
        "get_weather",
        {"location": "San Francisco, CA", "unit": "celsius"},
    )


async def test_anthropic_docs_tool_use_stream_gives_text_deltas_then_input_json_deltas() -> None:
    deltas: list[ModelDelta] = []
    async with serve_file("anthropic_stream_tool_use.sse", "text/event-stream") as client:
        response = await AnthropicModel("claude-opus-4-6", client=client, stream=True).request(request(deltas))

    assert response.text == "Okay, let's check the weather for San Francisco, CA:"
    [call] = response.tool_calls
    assert (call.id, call.name, call.input, call.input_error) == (
        "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        "get_weather",
        {"location": "San Francisco, CA", "unit": "fahrenheit"},
        None,
    )
    text = [d for d in deltas if d.kind == "text"]
    calls = [d for d in deltas if d.kind == "tool-call"]
    assert "".join(d.text for d in text) == response.text
    assert deltas.index(calls[0]) > deltas.index(text[-1])
    assert calls[0] == ModelDelta(kind="tool-call", call_id=call.id, tool_name="get_weather")
    assert json.loads("".join(d.text for d in calls)) == call.input
