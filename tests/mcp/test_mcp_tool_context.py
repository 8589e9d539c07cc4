"""A tool's `ctx.report_progress`, `ctx.log` and `ctx.sample` reach the MCP client, on both eras.

Progress goes only to a client that asked for it, logs only at a level the client listens to
(`logging/setLevel` on the legacy era, the call's `_meta` level on the 2026 era), and sampling
asks the client's model where the client offers it, else the call fails with a clear message.
"""

from __future__ import annotations

from typing import Annotated, Any

import mcp.types as types
import pytest
from mcp.client import Client, ClientRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types.version import LATEST_MODERN_VERSION
from pydantic import BaseModel

from eve_py import Resolve, ToolContext, define_tool
from eve_py.agent import Agent
from eve_py.mcp import mcp_server

pytestmark = pytest.mark.anyio

MODERN = LATEST_MODERN_VERSION
ERAS = ["legacy", MODERN]


class Plan(BaseModel):
    steps: int


async def plan(ctx: ToolContext) -> Plan:
    await ctx.log("debug", "planning", logger="planner")
    return Plan(steps=2)


async def work(job: str, plan: Annotated[Plan, Resolve(plan)], ctx: ToolContext) -> str:
    for step in range(1, plan.steps + 1):
        await ctx.report_progress(step, plan.steps, f"step {step} of {job}")
        await ctx.log("info", {"job": job, "step": step})
    await ctx.log("warning", "almost done")
    return f"{job} done"


async def summarize(text: str, ctx: ToolContext) -> str:
    return "summary: " + await ctx.sample(f"Summarize: {text}", system_prompt="Be brief.", max_tokens=50)


def agent() -> Agent:
    return Agent.from_definitions(
        {
            "work": define_tool(description="Works in steps.", execute=work),
            "summarize": define_tool(description="Asks the client's model.", execute=summarize),
        }
    )


Logged = list[tuple[str, Any, str | None]]


def logging_into(logged: Logged) -> Any:
    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append((params.level, params.data, params.logger))

    return on_log


@pytest.mark.parametrize("mode", ERAS)
async def test_progress_reaches_a_client_that_asked_for_it(mode: str) -> None:
    reported: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append((progress, total, message))

    async with Client(mcp_server(agent()), mode=mode) as client:
        result = await client.call_tool("work", {"job": "build"}, progress_callback=on_progress)
        quiet = await client.call_tool("work", {"job": "lint"})  # no token: nothing is sent, the call works
    assert not result.is_error and not quiet.is_error
    assert reported == [(1, 2, "step 1 of build"), (2, 2, "step 2 of build")]


async def test_on_the_legacy_era_logs_follow_set_level() -> None:
    logged: Logged = []
    async with Client(mcp_server(agent()), mode="legacy", logging_callback=logging_into(logged)) as client:
        await client.call_tool("work", {"job": "a"})
        assert [entry[0] for entry in logged] == ["debug", "info", "info", "warning"]  # every level until set
        assert logged[0] == ("debug", "planning", "planner") and logged[1][1] == {"job": "a", "step": 1}
        logged.clear()
        with pytest.warns(MCPDeprecationWarning):
            await client.set_logging_level("warning")
        await client.call_tool("work", {"job": "b"})
    assert logged == [("warning", "almost done", None)]


async def test_on_the_2026_era_logs_go_at_the_level_the_call_asks_for() -> None:
    logged: Logged = []
    async with Client(mcp_server(agent()), mode=MODERN, logging_callback=logging_into(logged)) as client:
        await client.call_tool("work", {"job": "a"})  # no level asked: nothing is sent
    assert logged == []
    on_log = logging_into(logged)
    async with Client(mcp_server(agent()), mode=MODERN, logging_callback=on_log, log_level="info") as client:
        await client.call_tool("work", {"job": "b"})
    assert [entry[0] for entry in logged] == ["info", "info", "warning"]


async def test_sampling_asks_the_clients_model() -> None:
    asked: list[types.CreateMessageRequestParams] = []

    async def on_sample(context: ClientRequestContext, params: types.CreateMessageRequestParams) -> Any:
        asked.append(params)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="short"), model="client-model"
        )

    async with Client(mcp_server(agent()), mode="legacy", sampling_callback=on_sample) as client:
        result = await client.call_tool("summarize", {"text": "a long story"})
    assert not result.is_error and result.content == [types.TextContent(type="text", text="summary: short")]
    (params,) = asked
    assert params.system_prompt == "Be brief." and params.max_tokens == 50
    assert params.messages[0].content == types.TextContent(type="text", text="Summarize: a long story")


@pytest.mark.parametrize("mode", ERAS)
async def test_sampling_without_a_client_that_offers_it_is_a_clear_error(mode: str) -> None:
    async with Client(mcp_server(agent()), mode=mode) as client:
        result = await client.call_tool("summarize", {"text": "x"})
    assert result.is_error
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    unavailable = "sampling is unavailable: the MCP client did not declare the sampling capability"
    assert block.text == f"Error executing tool summarize: {unavailable}"
