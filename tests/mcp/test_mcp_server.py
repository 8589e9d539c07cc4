"""`mcp_server(agent)` driven by the SDK's own `Client`, in-process, on both protocol eras.

Covers what an MCP host sees beyond the refund-desk story: listed schemas, unknown tools,
wrong arguments, crashes, approvals, client-resolved tools, a client without elicitation,
`requestState` that was tampered with, rebound, replayed after a restart or expired, and
answers or arguments that are not JSON text (refused before anything runs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import mcp.types as types
import pytest
from mcp.client import Client, ClientRequestContext
from mcp.client.session import ElicitationFnT
from mcp.server.request_state import RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp.types.version import LATEST_MODERN_VERSION
from pydantic import BaseModel

from eve_py import Elicit, Resolve, define_client_tool, define_tool
from eve_py.agent import Agent, load_agent
from eve_py.errors import ToolError
from eve_py.mcp import mcp_server

pytestmark = pytest.mark.anyio

Answer = types.ElicitResult | types.ErrorData

ERAS = ["legacy", LATEST_MODERN_VERSION]


def answering(*answers: types.ElicitResult, asked: list[str] | None = None) -> ElicitationFnT:
    """An elicitation callback giving `answers` in order and noting each question's message."""
    queue = list(answers)

    async def on_elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> Answer:
        assert isinstance(params, types.ElicitRequestFormParams)
        if asked is not None:
            asked.append(params.message)
        return queue.pop(0)

    return on_elicit


def accept(**content: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=content)


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


class Target(BaseModel):
    env: str


runs: list[str] = []


def ask_env(service: str) -> Target | Elicit[Target]:
    return Elicit(f"Deploy {service} where?", Target)


def deploy(service: str, target: Annotated[Target, Resolve(ask_env)]) -> dict[str, str]:
    runs.append(f"{service}@{target.env}")
    return {"deployed": service, "env": target.env}


class Go(BaseModel):
    go: bool


def confirm_env(service: str, target: Annotated[Target, Resolve(ask_env)]) -> Go | Elicit[Go]:
    """Asked once `ask_env` is answered (it depends on it), in a later round."""
    return Elicit(f"Deploy {service} now?", Go)


def staged_deploy(
    service: str, target: Annotated[Target, Resolve(ask_env)], go: Annotated[Go, Resolve(confirm_env)]
) -> dict[str, str]:
    return deploy(service, target) if go.go else {"deployed": "nothing"}


def explode(code: int) -> int:
    raise RuntimeError(f"secret database password {code}")


def refuse(code: int) -> int:
    raise ToolError(f"code {code} is not allowed")


class Verdict(BaseModel):
    ok: bool
    note: str = ""


class Pick(BaseModel):
    prompt: str


def agent() -> Agent:
    return Agent.from_definitions(
        {
            "deploy": define_tool(description="Deploy a service.", execute=deploy),
            "guarded": define_tool(description="Deploy after approval.", execute=deploy, needs_approval=True),
            "staged": define_tool(description="Deploy after two questions.", execute=staged_deploy),
            "explode": define_tool(description="Crashes.", execute=explode),
            "refuse": define_tool(description="Refuses.", execute=refuse),
            "review": define_client_tool(description="A person reviews.", input_schema=Pick, output_schema=Verdict),
            "pick_many": define_client_tool(
                description="A person picks several.",
                input_schema=Pick,
                output_schema={"type": "array", "items": {"type": "string"}},
            ),
        }
    )


@pytest.fixture(autouse=True)
def _fresh_runs() -> None:
    runs.clear()


async def test_listed_input_schemas_are_the_models(refund_app: Path) -> None:
    loaded = load_agent(refund_app)
    async with Client(mcp_server(loaded)) as client:
        (tool,) = (await client.list_tools()).tools
    assert tool.name == "refund_order"
    assert tool.input_schema == loaded.tools["refund_order"].input_schema
    assert set(tool.input_schema["properties"]) == {"order_id", "reason"}
    assert tool.output_schema is not None and "refunded_cents" in tool.output_schema["properties"]


@pytest.mark.parametrize("mode", ERAS)
async def test_unknown_tool_and_wrong_arguments_are_error_results(mode: str) -> None:
    async with Client(mcp_server(agent()), mode=mode, elicitation_callback=answering()) as client:
        unknown = await client.call_tool("nope", {})
        wrong = await client.call_tool("deploy", {"service": ["not", "a", "string"]})
        missing = await client.call_tool("deploy", {})
    assert unknown.is_error and text(unknown) == "Unknown tool: nope"
    assert wrong.is_error and text(wrong).startswith("Error executing tool deploy: ")
    assert "service" in text(wrong) and "string" in text(wrong)
    assert missing.is_error and "Field required" in text(missing)
    assert runs == []


@pytest.mark.parametrize("mode", ERAS)
async def test_tool_errors_keep_their_text_and_crashes_do_not(mode: str) -> None:
    async with Client(mcp_server(agent()), mode=mode) as client:
        refused = await client.call_tool("refuse", {"code": 7})
        crashed = await client.call_tool("explode", {"code": 7})
    assert refused.is_error and text(refused) == "Error executing tool refuse: code 7 is not allowed"
    assert crashed.is_error and text(crashed) == "Error executing tool explode"


@pytest.mark.parametrize("mode", ERAS)
async def test_resolver_question_then_result(mode: str) -> None:
    asked: list[str] = []
    callback = answering(accept(env="prod"), asked=asked)
    async with Client(mcp_server(agent()), mode=mode, elicitation_callback=callback) as client:
        result = await client.call_tool("deploy", {"service": "api"})
    assert not result.is_error, text(result)
    assert result.structured_content == {"deployed": "api", "env": "prod"}
    assert asked == ["Deploy api where?"] and runs == ["api@prod"]


@pytest.mark.parametrize("mode", ERAS)
async def test_an_answer_that_does_not_fit_the_schema_fails_the_call(mode: str) -> None:
    callback = answering(accept(region="eu"))
    async with Client(mcp_server(agent()), mode=mode, elicitation_callback=callback) as client:
        result = await client.call_tool("deploy", {"service": "api"})
    assert result.is_error and "does not match the requested schema" in text(result)
    assert runs == []


@pytest.mark.parametrize("mode", ERAS)
async def test_a_client_without_elicitation_gets_the_sdk_capability_error(mode: str) -> None:
    async with Client(mcp_server(agent()), mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("deploy", {"service": "api"})
    assert caught.value.error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert "form elicitation capability" in caught.value.error.message
    assert runs == []


@pytest.mark.parametrize("mode", ERAS)
async def test_approval_is_asked_before_the_executor_runs(mode: str) -> None:
    asked: list[str] = []
    callback = answering(accept(approve=True), accept(env="prod"), accept(approve=False), asked=asked)
    async with Client(mcp_server(agent()), mode=mode, elicitation_callback=callback) as client:
        approved = await client.call_tool("guarded", {"service": "api"})
        denied = await client.call_tool("guarded", {"service": "db"})
    assert approved.structured_content == {"deployed": "api", "env": "prod"}
    assert asked[0] == 'Allow the tool \'guarded\' to run with {"service":"api"}?'
    assert denied.is_error and text(denied) == "Error executing tool guarded: Tool execution was denied."
    assert runs == ["api@prod"]


@pytest.mark.parametrize("mode", ERAS)
async def test_declining_an_approval_denies_the_call(mode: str) -> None:
    callback = answering(types.ElicitResult(action="decline"))
    async with Client(mcp_server(agent()), mode=mode, elicitation_callback=callback) as client:
        denied = await client.call_tool("guarded", {"service": "api"})
    assert denied.is_error and "denied" in text(denied)
    assert runs == []


@pytest.mark.parametrize("mode", ERAS)
async def test_client_resolved_tools_are_offered_as_an_elicitation_of_their_output(mode: str) -> None:
    schemas: list[dict[str, Any]] = []

    async def on_elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> Answer:
        assert isinstance(params, types.ElicitRequestFormParams)
        schemas.append(params.requested_schema)
        if "ok" in params.requested_schema["properties"]:
            return accept(ok=True, note="ship it")
        return accept(value='["a", "b"]')

    async with Client(mcp_server(agent()), mode=mode, elicitation_callback=on_elicit) as client:
        reviewed = await client.call_tool("review", {"prompt": "Ship?"})
        picked = await client.call_tool("pick_many", {"prompt": "Which?"})
        bad = await client.call_tool("review", {"wrong": 1})
    assert reviewed.structured_content == {"ok": True, "note": "ship it"}
    assert set(schemas[0]["properties"]) == {"ok", "note"}
    assert not picked.is_error and text(picked) == '["a", "b"]'
    assert bad.is_error and "invalid arguments" in text(bad)


async def _first_round(client: Client) -> types.InputRequiredResult:
    first = await client.session.call_tool("deploy", {"service": "api"}, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult) and first.request_state
    return first


async def _resume(
    client: Client,
    first: types.InputRequiredResult,
    arguments: dict[str, Any],
    state: str,
    answer: types.ElicitResult | None = None,
    tool: str = "deploy",
) -> Any:
    (key,) = (first.input_requests or {}).keys()
    return await client.session.call_tool(
        tool,
        arguments,
        input_responses={key: answer or accept(env="prod")},
        request_state=state,
        allow_input_required=True,
    )


async def test_tampered_rebound_and_replayed_state_is_refused_and_nothing_runs() -> None:
    server = mcp_server(agent())
    async with Client(server, mode=LATEST_MODERN_VERSION, elicitation_callback=answering()) as client:
        first = await _first_round(client)
        state = first.request_state
        assert state is not None and "prod" not in state and "Deploy" not in state  # sealed, not readable
        tampered = state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")
        for arguments, sent in (({"service": "api"}, tampered), ({"service": "db"}, state)):
            with pytest.raises(MCPError) as caught:
                await _resume(client, first, arguments, sent)
            assert caught.value.error.code == types.INVALID_PARAMS
            assert caught.value.error.message == "Invalid or expired requestState"
        assert runs == []
        done = await _resume(client, first, {"service": "api"}, state)
        assert isinstance(done, types.CallToolResult) and done.structured_content == {"deployed": "api", "env": "prod"}
    async with Client(mcp_server(agent()), mode=LATEST_MODERN_VERSION, elicitation_callback=answering()) as restarted:
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await _resume(restarted, first, {"service": "api"}, state)
    assert runs == ["api@prod"]


async def test_expired_state_is_refused() -> None:
    server = mcp_server(agent(), request_state_security=RequestStateSecurity.ephemeral(ttl=1e-9))
    async with Client(server, mode=LATEST_MODERN_VERSION, elicitation_callback=answering()) as client:
        first = await _first_round(client)
        assert first.request_state is not None
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await _resume(client, first, {"service": "api"}, first.request_state)
    assert runs == []


NOT_TEXT = "eu\ud800"
"""What `"eu\\ud800"` in a client's JSON decodes to: a lone UTF-16 surrogate, not text."""


def refused_as_invalid_params(caught: pytest.ExceptionInfo[MCPError], what: str) -> None:
    assert caught.value.error.code == types.INVALID_PARAMS
    assert caught.value.error.message.startswith(f"{what} is not JSON text: ")
    assert "lone UTF-16 surrogate" in caught.value.error.message
    caught.value.error.message.encode("utf-8")  # the message itself is text


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("tool", "arguments", "bad", "good", "result", "key"),
    [
        (
            "deploy",
            {"service": "api"},
            accept(env=NOT_TEXT),
            accept(env="eu"),
            {"deployed": "api", "env": "eu"},
            "ask_env",
        ),
        (
            "review",
            {"prompt": "Ship?"},
            accept(ok=True, note=NOT_TEXT),
            accept(ok=True, note="fine"),
            {"ok": True, "note": "fine"},
            "eve:result",
        ),
    ],
    ids=["resolver", "client-result"],
)
async def test_an_answer_that_is_not_text_is_refused_before_the_executor_runs_and_a_retry_runs_it_once(
    mode: str,
    tool: str,
    arguments: dict[str, Any],
    bad: types.ElicitResult,
    good: types.ElicitResult,
    result: dict[str, Any],
    key: str,
) -> None:
    callback = answering(bad, good)
    async with Client(mcp_server(agent()), mode=mode, elicitation_callback=callback) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool(tool, arguments)
        refused_as_invalid_params(caught, f"The answer to {key!r}")
        assert runs == [], "nothing ran: a retry cannot run it twice"
        retried = await client.call_tool(tool, arguments)
    assert not retried.is_error, text(retried)
    assert retried.structured_content == result
    assert runs == (["api@eu"] if tool == "deploy" else [])


async def test_a_refused_round_stays_open_and_its_state_takes_a_proper_answer() -> None:
    async with Client(mcp_server(agent()), mode=LATEST_MODERN_VERSION, elicitation_callback=answering()) as client:
        first = await _first_round(client)
        assert first.request_state is not None
        with pytest.raises(MCPError) as caught:
            await _resume(client, first, {"service": "api"}, first.request_state, accept(env=NOT_TEXT))
        refused_as_invalid_params(caught, "The answer to 'ask_env'")
        assert runs == []
        done = await _resume(client, first, {"service": "api"}, first.request_state, accept(env="eu"))
    assert isinstance(done, types.CallToolResult) and done.structured_content == {"deployed": "api", "env": "eu"}
    assert runs == ["api@eu"]


async def test_an_answer_that_is_not_text_before_a_further_question_is_invalid_params_not_an_internal_error() -> None:
    """The next round's `requestState` would hold the answer: it was a `-32603` with a traceback."""
    arguments = {"service": "api"}
    async with Client(mcp_server(agent()), mode=LATEST_MODERN_VERSION, elicitation_callback=answering()) as client:
        first = await client.session.call_tool("staged", arguments, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult) and first.request_state is not None
        with pytest.raises(MCPError) as caught:
            await _resume(client, first, arguments, first.request_state, accept(env=NOT_TEXT), tool="staged")
        refused_as_invalid_params(caught, "The answer to 'ask_env'")
        second = await _resume(client, first, arguments, first.request_state, accept(env="eu"), tool="staged")
        assert isinstance(second, types.InputRequiredResult) and second.request_state is not None
        [question] = (second.input_requests or {}).values()
        assert isinstance(question.params, types.ElicitRequestFormParams)
        assert question.params.message == "Deploy api now?"
        done = await _resume(client, second, arguments, second.request_state, accept(go=True), tool="staged")
    assert isinstance(done, types.CallToolResult) and done.structured_content == {"deployed": "api", "env": "eu"}
    assert runs == ["api@eu"]


@pytest.mark.parametrize("mode", ERAS)
async def test_arguments_that_are_not_text_are_refused_before_anything_runs(mode: str) -> None:
    async with Client(mcp_server(agent()), mode=mode, elicitation_callback=answering(accept(env="eu"))) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("deploy", {"service": NOT_TEXT})
        refused_as_invalid_params(caught, "The arguments of tool 'deploy'")
        done = await client.call_tool("deploy", {"service": "api"})
    assert done.structured_content == {"deployed": "api", "env": "eu"}
    assert runs == ["api@eu"]
