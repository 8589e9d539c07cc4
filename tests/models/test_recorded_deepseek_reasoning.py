"""DeepSeek's thinking mode (`reasoning_content`), from real recorded traffic (`recorded/README.md`
names each file's source): a tool-calling turn's reasoning goes back in every later request, as
DeepSeek requires (its API refuses the conversation with 400 otherwise); a turn without calls
sends none back (DeepSeek ignores it there)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eve_py import Agent, Runtime, define_tool
from eve_py.models import ChatCompletionsModel
from eve_py.models._openai import to_chat_messages
from eve_py.protocol.messages import AssistantMessage, ToolCallPart
from tests.models.replayed import replaying

pytestmark = pytest.mark.anyio

RECORDED = Path(__file__).parent / "recorded"
FINAL = {
    "id": "final",
    "object": "chat.completion",
    "model": "deepseek-reasoner",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Rolled a 4."}}],
}


def _load_capability(id: str) -> str:  # noqa: A002 - the recorded call's argument name
    """Load a capability."""
    return f"loaded {id}"


async def test_a_tool_calling_turn_s_reasoning_goes_back_as_deepseek_requires() -> None:
    seen: list[dict[str, Any]] = []
    first = (RECORDED / "deepseek_reasoner_tool_call.json").read_bytes()
    replies = [(first, "application/json"), (json.dumps(FINAL).encode(), "application/json")]
    agent = Agent.from_definitions(
        {"load_capability": define_tool(description="Load a capability.", execute=_load_capability)}
    )
    async with replaying(replies, seen) as client:
        model = ChatCompletionsModel("deepseek-reasoner", provider="deepseek", client=client, stream=False)
        done = await (await Runtime(agent, model=model).create_session()).send("Let's play dice: I guess 4.")

    assert done.message == "Rolled a 4."
    [sent] = [m for m in seen[1]["messages"] if m["role"] == "assistant"]
    recorded = json.loads((RECORDED / "deepseek_reasoner_tool_call.replayed.json").read_text())
    assert sent["reasoning_content"] == recorded["reasoning_content"]
    assert sent["content"] == recorded["content"]
    [call] = sent["tool_calls"]
    [expected] = recorded["tool_calls"]
    assert (call["id"], call["function"]["name"]) == (expected["id"], expected["function"]["name"])
    assert json.loads(call["function"]["arguments"]) == json.loads(expected["function"]["arguments"])


async def test_a_streamed_reasoning_turn_without_calls_sends_no_reasoning_back() -> None:
    seen: list[dict[str, Any]] = []
    replies = [
        ((RECORDED / "deepseek_reasoner_stream.sse").read_bytes(), "text/event-stream"),
        (json.dumps(FINAL).encode(), "application/json"),
    ]
    async with replaying(replies, seen) as client:
        model = ChatCompletionsModel("deepseek-reasoner", provider="deepseek", client=client, stream=True)
        session = await Runtime(Agent.from_definitions({}), model=model).create_session()
        first = await session.send("Hello")
        await session.send("And again")

    assert first.message
    [sent] = [m for m in seen[1]["messages"] if m["role"] == "assistant"]
    assert sent == {"role": "assistant", "content": first.message}
    stored = [m for m in await session.messages() if m.role == "assistant"][0]
    assert stored.provider_data is not None  # kept with the step, only not sent for a turn without calls


def test_reasoning_goes_back_only_to_the_server_that_wrote_it() -> None:
    kept = {"openai": {"reasoning_content": "think", "url": "https://api.deepseek.com/chat/completions"}}
    step = AssistantMessage(content=[ToolCallPart(tool_call_id="c1", tool_name="t", input={})], provider_data=kept)
    [same] = to_chat_messages(None, [step], url="https://api.deepseek.com/chat/completions")
    [other] = to_chat_messages(None, [step], url="https://api.cerebras.ai/v1/chat/completions")
    assert isinstance(same, dict) and same["reasoning_content"] == "think"
    assert isinstance(other, dict) and "reasoning_content" not in other  # some servers refuse the field
