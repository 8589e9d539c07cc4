"""In a plain agent run a tool's `ctx.sample(...)` is answered by the agent's own model (one step, no tools)."""

from __future__ import annotations

import pytest

from eve_py import Runtime, ToolContext, define_tool
from eve_py.agent import Agent
from eve_py.protocol.messages import ToolMessage
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio


async def summarize(text: str, ctx: ToolContext) -> str:
    assert ctx.offers("sampling") and ctx.offers("elicitation") and not ctx.offers("roots")
    return await ctx.sample(f"Summarize: {text}", system_prompt="Be brief.")


def respond(request: MockModelRequest) -> str | MockResponse:
    if not request.tools:  # the tool's sampling request
        return f"[{request.instructions}] {request.last_user_message} -> short"
    if request.tool_results_since_last_user_message:
        return str(request.tool_results_since_last_user_message[-1].output)
    return MockResponse(tool_calls=[MockToolCall("summarize", {"text": "a long story"})])


async def test_a_tools_sampling_request_is_one_step_of_the_agents_model() -> None:
    agent = Agent.from_definitions({"summarize": define_tool(description="Summarize.", execute=summarize)})
    session = await Runtime(agent, model=MockModel(respond)).create_session()
    done = await session.send("summarize it")
    assert done.status == "completed"
    [result] = [part for m in await session.messages() if isinstance(m, ToolMessage) for part in m.content]
    assert not result.is_error and result.output == "[Be brief.] Summarize: a long story -> short"
