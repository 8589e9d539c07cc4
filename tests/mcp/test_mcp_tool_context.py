"""A tool's `ctx.report_progress`, `ctx.log`, `ctx.sample` and `ctx.list_roots` reach the MCP client, on both eras.

Progress goes only to a client that asked for it, logs only at a level the client listens to
(`logging/setLevel` on the legacy era, the call's `_meta` level on the 2026 era). Sampling asks
the client's model and roots the client's roots where the client offers them: mid-call on the
legacy era, in `input_required` rounds on the 2026 era (several resolvers' asks in one round);
else the legacy call fails with a clear message and the 2026 request is refused with `-32021`.
"""

from __future__ import annotations

from typing import Annotated, Any

import mcp.types as types
import pytest
from mcp.client import Client, ClientRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.types.version import LATEST_MODERN_VERSION
from pydantic import BaseModel

from eve_py import Elicit, Resolve, ToolContext, define_tool
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


async def where(ctx: ToolContext) -> str:
    return ", ".join(f"{root.name}={root.uri}" for root in await ctx.list_roots())


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("Who is it for?", Name)


async def greeting(ctx: ToolContext) -> str:
    return await ctx.sample("Write a greeting", max_tokens=20)


async def first_root(ctx: ToolContext) -> str:
    roots = await ctx.list_roots()
    return roots[0].uri


runs: list[str] = []


async def card(
    name: Annotated[Name, Resolve(ask_name)],
    text: Annotated[str, Resolve(greeting)],
    root: Annotated[str, Resolve(first_root)],
) -> str:
    runs.append(name.name)
    return f"{text}, {name.name} (from {root})"


def agent() -> Agent:
    return Agent.from_definitions(
        {
            "work": define_tool(description="Works in steps.", execute=work),
            "summarize": define_tool(description="Asks the client's model.", execute=summarize),
            "where": define_tool(description="Lists the client's roots.", execute=where),
            "card": define_tool(description="Asks a person, the model and the roots at once.", execute=card),
        }
    )


async def on_sample(context: ClientRequestContext, params: types.CreateMessageRequestParams) -> Any:
    asked.append(params)
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="short"), model="client-model"
    )


async def on_roots(context: ClientRequestContext) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv/app", name="app")])


asked: list[types.CreateMessageRequestParams] = []


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


@pytest.mark.parametrize("mode", ERAS)
async def test_sampling_asks_the_clients_model(mode: str) -> None:
    asked.clear()
    async with Client(mcp_server(agent()), mode=mode, sampling_callback=on_sample) as client:
        result = await client.call_tool("summarize", {"text": "a long story"})
    assert not result.is_error and result.content == [types.TextContent(type="text", text="summary: short")]
    (params,) = asked
    assert params.system_prompt == "Be brief." and params.max_tokens == 50
    assert params.messages[0].content == types.TextContent(type="text", text="Summarize: a long story")


@pytest.mark.parametrize("mode", ERAS)
async def test_roots_come_from_the_client(mode: str) -> None:
    async with Client(mcp_server(agent()), mode=mode, list_roots_callback=on_roots) as client:
        result = await client.call_tool("where", {})
    assert not result.is_error and result.content == [types.TextContent(type="text", text="app=file:///srv/app")]


async def test_on_the_2026_era_a_person_the_model_and_the_roots_are_asked_in_one_round() -> None:
    server = mcp_server(agent())
    asked.clear()
    runs.clear()
    async with Client(
        server, mode=MODERN, sampling_callback=on_sample, list_roots_callback=on_roots, elicitation_callback=answer_ann
    ) as client:
        first = await client.session.call_tool("card", {}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult) and first.request_state and first.input_requests
        methods = sorted(request.method for request in first.input_requests.values())
        assert methods == ["elicitation/create", "roots/list", "sampling/createMessage"]
        result = await client.call_tool("card", {})
    assert not result.is_error and result.content == [
        types.TextContent(type="text", text="short, Ann (from file:///srv/app)")
    ]
    assert runs == ["Ann"] and len(asked) == 1  # the executor ran once, after the one round


async def answer_ann(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ann"})


async def test_a_tool_can_ask_whether_the_client_offers_sampling() -> None:
    offered: list[bool] = []

    async def probe(ctx: ToolContext) -> str:
        offered.append(ctx.offers("sampling"))
        return "ok"

    probing = Agent.from_definitions({"probe": define_tool(description="Probes.", execute=probe)})
    for mode in ERAS:
        async with Client(mcp_server(probing), mode=mode) as client:
            await client.call_tool("probe", {})
        async with Client(mcp_server(probing), mode=mode, sampling_callback=on_sample) as client:
            await client.call_tool("probe", {})
    assert offered == [False, True, False, True]


async def test_on_the_legacy_era_a_client_without_sampling_gets_a_clear_error_result() -> None:
    async with Client(mcp_server(agent()), mode="legacy") as client:
        result = await client.call_tool("summarize", {"text": "x"})
        roots = await client.call_tool("where", {})
    assert result.is_error and roots.is_error
    block, roots_block = result.content[0], roots.content[0]
    assert isinstance(block, types.TextContent) and isinstance(roots_block, types.TextContent)
    unavailable = "sampling is unavailable: the MCP client did not declare the sampling capability"
    assert block.text == f"Error executing tool summarize: {unavailable}"
    assert "roots are unavailable: the MCP client did not declare the roots capability" in roots_block.text


async def test_on_the_2026_era_a_client_without_sampling_is_refused_with_missing_capability() -> None:
    async with Client(mcp_server(agent()), mode=MODERN) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("summarize", {"text": "x"})
    assert refused.value.error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert refused.value.error.data == {"requiredCapabilities": {"sampling": {}}}
