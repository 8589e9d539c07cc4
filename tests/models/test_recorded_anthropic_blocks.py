"""Anthropic's blocks that are not eve-py's to run (extended thinking, server-run and MCP connector
tools, citations), from real recorded traffic (`recorded/README.md` names each file's source):
they never become tool calls, and every later request sends them back as they came."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from eve_py import Agent, InputResponse, Runtime, define_tool
from eve_py.approval import always
from eve_py.models import AnthropicModel, ModelRequest, ModelResponse, UserMessage
from eve_py.sessions import SQLiteSessionStore
from tests.models.replayed import replaying

pytestmark = pytest.mark.anyio

RECORDED = Path(__file__).parent / "recorded"
FINAL = {
    "id": "msg_final",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "Mexico City."}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 10, "output_tokens": 3},
}


def _recorded(name: str) -> Any:
    return json.loads((RECORDED / name).read_text())


def _kept_blocks(response: ModelResponse) -> list[dict[str, Any]]:
    """The content blocks a response keeps for later requests."""
    assert response.provider_data is not None
    kept: list[dict[str, Any]] = json.loads(json.dumps(response.provider_data))["anthropic"]["content"]
    return kept


def _json(payload: Any) -> tuple[bytes, str]:
    return json.dumps(payload).encode(), "application/json"


def _sse(name: str) -> tuple[bytes, str]:
    return (RECORDED / name).read_bytes(), "text/event-stream"


def _country() -> str:
    """The user's country."""
    return "Mexico"


def _agent(policy: Callable[..., Any] | bool = False) -> Agent:
    tool = define_tool(description="The user's country.", execute=_country, approval=policy)
    return Agent.from_definitions({"get_user_country": tool}, instructions="Help.")


async def test_thinking_before_a_tool_call_goes_back_verbatim_with_the_tool_result() -> None:
    seen: list[dict[str, Any]] = []
    replies = [_json(_recorded("anthropic_message_thinking_tool_use.json")), _json(FINAL)]
    async with replaying(replies, seen) as client:
        model = AnthropicModel("claude-sonnet-4-5", client=client, stream=False)
        session = await Runtime(_agent(), model=model).create_session()
        done = await session.send("What is the largest city in the user country?")

    assert done.status == "completed" and done.message == "Mexico City."
    [assistant] = [m for m in seen[1]["messages"] if m["role"] == "assistant"]
    assert assistant == _recorded("anthropic_message_thinking_tool_use.replayed.json")
    assert [b["type"] for b in seen[1]["messages"][-1]["content"]] == ["tool_result"]


async def test_thinking_survives_a_park_and_a_restart(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    replies = [_json(_recorded("anthropic_message_thinking_tool_use.json")), _json(FINAL)]
    async with replaying(replies, seen) as client:
        model = AnthropicModel("claude-sonnet-4-5", client=client, stream=False)
        first = Runtime(_agent(always()), model=model, store=SQLiteSessionStore(tmp_path / "s.db"))
        session = await first.create_session()
        [request] = (await session.send("What is the largest city in the user country?")).input_requests
        await first.aclose()

        restarted = Runtime(_agent(always()), model=model, store=SQLiteSessionStore(tmp_path / "s.db"))
        try:
            parked = await restarted.get_session(session.id)
            done = await parked.respond([InputResponse(request_id=request.request_id, option_id="approve")])
        finally:
            await restarted.aclose()

    assert done.message == "Mexico City."
    [assistant] = [m for m in seen[1]["messages"] if m["role"] == "assistant"]
    assert assistant == _recorded("anthropic_message_thinking_tool_use.replayed.json")


async def test_an_mcp_connector_stream_is_not_a_tool_call_and_its_blocks_are_kept() -> None:
    seen: list[dict[str, Any]] = []
    replies = [_sse("anthropic_stream_thinking_mcp.sse"), _json(FINAL)]
    async with replaying(replies, seen) as client:
        model = AnthropicModel("claude-sonnet-4-5", client=client, stream=True)
        session = await Runtime(_agent(), model=model).create_session()
        done = await session.send("Can you tell me more about pydantic-ai repo? Keep your answer short")
        assert done.status == "completed"
        assert done.message is not None and done.message.startswith("**Pydantic-AI** is a framework")
        await session.send("And who maintains it?")

    [assistant] = [m for m in seen[1]["messages"] if m["role"] == "assistant"]
    blocks = assistant["content"]
    assert [b["type"] for b in blocks] == ["thinking", "mcp_tool_use", "mcp_tool_result", "text"]
    thinking, use, result, text = blocks
    assert thinking["thinking"].startswith("The user is asking about the pydantic/pydantic-ai repository.")
    assert thinking["signature"].startswith("EuoCCkYICBgCKkDPqznn")
    assert (use["name"], use["input"]) == (
        "ask_question",
        {
            "repoName": "pydantic/pydantic-ai",
            "question": "What is this repository about? What are its main features and purpose?",
        },
    )
    assert result["tool_use_id"] == use["id"] and result["is_error"] is False
    assert text["text"] == done.message


async def test_a_redacted_thinking_stream_keeps_both_encrypted_blocks() -> None:
    async with replaying([_sse("anthropic_stream_redacted_thinking.sse")], []) as client:
        model = AnthropicModel("claude-3-7-sonnet", client=client, stream=True)
        response = await model.request(ModelRequest(instructions=None, messages=[UserMessage(content="hi")], tools=[]))

    assert response.tool_calls == [] and response.text
    blocks = _kept_blocks(response)
    assert [b["type"] for b in blocks] == ["redacted_thinking", "redacted_thinking", "text"]
    assert all(len(b["data"]) > 100 for b in blocks[:2])


async def test_a_web_search_stream_keeps_its_server_calls_results_and_citations() -> None:
    async with replaying([_sse("anthropic_stream_web_search.sse")], []) as client:
        model = AnthropicModel("claude-sonnet-4", client=client, stream=True)
        response = await model.request(
            ModelRequest(instructions=None, messages=[UserMessage(content="news?")], tools=[])
        )

    assert response.tool_calls == []
    blocks = _kept_blocks(response)
    searches = [b for b in blocks if b["type"] == "server_tool_use"]
    assert len(searches) == 2 and all(isinstance(b["input"].get("query"), str) for b in searches)
    assert [b["type"] for b in blocks].count("web_search_tool_result") == 2
    cited = [b for b in blocks if b["type"] == "text" and b.get("citations")]
    assert sum(len(b["citations"]) for b in cited) == 9
    assert response.text == "".join(b["text"] for b in blocks if b["type"] == "text")


async def test_an_mcp_connector_response_goes_back_as_it_came_with_the_next_message() -> None:
    seen: list[dict[str, Any]] = []
    recorded = _recorded("anthropic_message_thinking_mcp.json")
    async with replaying([_json(recorded), _json(FINAL)], seen) as client:
        model = AnthropicModel("claude-sonnet-4-5", client=client, stream=False)
        session = await Runtime(_agent(), model=model).create_session()
        done = await session.send("Can you tell me more about pydantic-ai repo? Keep your answer short")
        await session.send("Thanks!")

    assert done.status == "completed"
    assert done.message == "".join(b["text"] for b in recorded["content"] if b["type"] == "text")
    [assistant] = [m for m in seen[1]["messages"] if m["role"] == "assistant"]
    assert assistant == {"role": "assistant", "content": recorded["content"]}
