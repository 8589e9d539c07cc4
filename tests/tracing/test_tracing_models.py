"""A `chat` span carries what the provider reported: token usage, finish reason, response id and model."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from eve_py import Agent, Runtime, define_tool
from eve_py.models import AnthropicModel, ModelUsage
from eve_py.testing import MockModel, MockModelRequest, MockResponse
from tests.tracing.traced import attrs, named

pytestmark = pytest.mark.anyio

RECORDED = Path(__file__).resolve().parent.parent / "models" / "recorded"


def get_weather(location: str, unit: str = "celsius") -> str:
    return f"18 degrees {unit} in {location}"


async def test_an_anthropic_turn_traces_its_token_usage_and_stop_reasons(spans: InMemorySpanExporter) -> None:
    tool_use = json.loads((RECORDED / "anthropic_message_tool_use.json").read_text(encoding="utf-8"))
    tool_use["usage"] = {"input_tokens": 410, "cache_read_input_tokens": 1000, "output_tokens": 52}
    answer = {
        "id": "msg_02",
        "model": "claude-opus-4-6",
        "stop_reason": "end_turn",
        "role": "assistant",
        "content": [{"type": "text", "text": "It is 18 degrees in San Francisco."}],
        "usage": {"input_tokens": 1500, "output_tokens": 12},
    }
    bodies = iter([tool_use, answer])
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda _: httpx.Response(200, json=next(bodies))))
    model = AnthropicModel("claude-opus-4-6", client=client, stream=False)
    agent = Agent.from_definitions({"get_weather": define_tool(description="Weather.", execute=get_weather)})
    session = await Runtime(agent, model=model).create_session()

    done = await session.send("What is the weather in San Francisco?")
    await client.aclose()

    assert done.status == "completed"
    finished = spans.get_finished_spans()
    first, second = named(finished, "chat")
    assert first.name == "chat claude-opus-4-6"
    assert {k: v for k, v in attrs(first).items() if k != "gen_ai.conversation.id"} == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "claude-opus-4-6",
        "gen_ai.response.finish_reasons": ("tool_use",),
        "gen_ai.response.id": "msg_01Aq9w938a90dw8q",
        "gen_ai.response.model": "claude-opus-4-6",
        "gen_ai.usage.input_tokens": 1410,
        "gen_ai.usage.output_tokens": 52,
    }
    assert attrs(second)["gen_ai.response.finish_reasons"] == ("end_turn",)
    assert (attrs(second)["gen_ai.usage.input_tokens"], attrs(second)["gen_ai.usage.output_tokens"]) == (1500, 12)
    [turn] = named(finished, "invoke_agent")
    assert (attrs(turn)["gen_ai.provider.name"], attrs(turn)["gen_ai.request.model"]) == (
        "anthropic",
        "claude-opus-4-6",
    )


async def test_a_mock_models_scripted_usage_is_traced(spans: InMemorySpanExporter) -> None:
    def respond(request: MockModelRequest) -> MockResponse:
        return MockResponse(text="Hi.", usage=ModelUsage(input_tokens=9, output_tokens=2))

    session = await Runtime(
        Agent.from_definitions({}), model=MockModel(respond, name="openai:gpt-test")
    ).create_session()
    await session.send("hello")

    [chat] = named(spans.get_finished_spans(), "chat")
    assert chat.name == "chat gpt-test"
    assert attrs(chat)["gen_ai.provider.name"] == "openai"
    assert (attrs(chat)["gen_ai.usage.input_tokens"], attrs(chat)["gen_ai.usage.output_tokens"]) == (9, 2)
    assert "gen_ai.response.id" not in attrs(chat)
