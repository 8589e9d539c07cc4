"""Each provider's token usage, finish reason, response id and model reach `ModelResponse`, from recorded responses."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from eve_py.models import AnthropicModel, ChatCompletionsModel, ModelRequest, ModelUsage, UserMessage

pytestmark = pytest.mark.anyio

RECORDED = Path(__file__).parent / "recorded"
REQUEST = ModelRequest(instructions=None, messages=[UserMessage(content="What is the weather?")], tools=[])


def serving(body: bytes, content_type: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.MockTransport(
            lambda _: httpx.Response(200, content=body, headers={"content-type": content_type})
        )
    )


async def test_a_chat_completion_reports_its_usage_finish_reason_id_and_model() -> None:
    body = (RECORDED / "openai_chat_completion_tool_call.json").read_bytes()
    async with serving(body, "application/json") as client:
        response = await ChatCompletionsModel("gpt-4o-mini", provider="openai", client=client, stream=False).request(
            REQUEST
        )

    assert response.usage == ModelUsage(input_tokens=82, output_tokens=17)
    assert (response.finish_reason, response.response_id, response.response_model) == (
        "tool_calls",
        "chatcmpl-abc123",
        "gpt-4o-mini",
    )


async def test_a_streamed_chat_completion_reports_the_usage_of_its_last_chunk() -> None:
    body = (RECORDED / "openai_chat_stream_tool_call.sse").read_bytes()
    async with serving(body, "text/event-stream") as client:
        response = await ChatCompletionsModel("gpt-4-turbo", provider="openai", client=client, stream=True).request(
            REQUEST
        )

    assert response.usage == ModelUsage(input_tokens=83, output_tokens=17)
    assert (response.finish_reason, response.response_id, response.response_model) == (
        "tool_calls",
        "chatcmpl-9blTCqGy0TGLdK4sOYlGrNxbGGknW",
        "gpt-4-turbo-2024-04-09",
    )


async def test_a_stream_without_a_usage_chunk_reports_none() -> None:
    body = (RECORDED / "openai_chat_stream_text.sse").read_bytes()
    async with serving(body, "text/event-stream") as client:
        response = await ChatCompletionsModel("gpt-4o-mini", client=client, stream=True).request(REQUEST)

    assert response.text == "Hello" and response.usage is None
    assert response.finish_reason == "stop"


async def test_an_anthropic_stream_reports_input_from_message_start_and_output_from_message_delta() -> None:
    body = (RECORDED / "anthropic_stream_tool_use.sse").read_bytes()
    async with serving(body, "text/event-stream") as client:
        response = await AnthropicModel("claude-opus-4-6", client=client, stream=True).request(REQUEST)

    assert response.usage == ModelUsage(input_tokens=472, output_tokens=89)
    assert (response.finish_reason, response.response_id, response.response_model) == (
        "tool_use",
        "msg_014p7gG3wDgGV9EUtLvnow3U",
        "claude-opus-4-6",
    )


async def test_an_anthropic_message_counts_cache_reads_and_writes_as_input() -> None:
    message = json.loads((RECORDED / "anthropic_message_tool_use.json").read_text(encoding="utf-8"))
    message["usage"] = {
        "input_tokens": 12,
        "cache_creation_input_tokens": 30,
        "cache_read_input_tokens": 2048,
        "output_tokens": 75,
    }
    async with serving(json.dumps(message).encode(), "application/json") as client:
        response = await AnthropicModel("claude-opus-4-6", client=client, stream=False).request(REQUEST)

    assert response.usage == ModelUsage(input_tokens=2090, output_tokens=75)
    assert (response.finish_reason, response.response_id) == ("tool_use", "msg_01Aq9w938a90dw8q")
