"""A sealed 2026-era `requestState` answers at most once: a replayed round is refused before any tool code runs.

In process (where the tool's runs are counted), over stdio and over HTTP (`eve-py mcp`), and
across two workers on one store: two `eve-py mcp --http --store FILE` processes, and two
servers on one PostgreSQL database. A replay, or a tampered state (cut, changed, extended,
sent with other arguments, or opened by a worker with another key), gets the SDK boundary's own
error, `-32602 Invalid or expired requestState` with `{"reason": "invalid_request_state"}`, and
spends nothing. On the legacy era a captured state answers nothing: the questions are asked again.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import anyio
import mcp.types as types
import pytest
from mcp import StdioServerParameters
from mcp.client import Client, ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types.version import LATEST_MODERN_VERSION
from pydantic import BaseModel

from eve_py import Elicit, Resolve, define_tool
from eve_py.agent import Agent
from eve_py.mcp import mcp_server
from eve_py.mcp.serve import request_state_security
from eve_py.sessions.postgres import PostgresSessionStore
from tests.mcp.conftest import REFUND_MCP_APP, serving_http

pytestmark = pytest.mark.anyio

MODERN = LATEST_MODERN_VERSION
ORDER = {"order_id": "ORD-7002", "reason": "damaged"}

runs: list[str] = []


class Target(BaseModel):
    env: str


class Go(BaseModel):
    go: bool


def ask_env(service: str) -> Target | Elicit[Target]:
    return Elicit(f"Deploy {service} where?", Target)


def ask_go(service: str, target: Annotated[Target, Resolve(ask_env)]) -> Go | Elicit[Go]:
    return Elicit(f"Deploy {service} to {target.env} now?", Go)


def deploy(service: str, target: Annotated[Target, Resolve(ask_env)], go: Annotated[Go, Resolve(ask_go)]) -> str:
    runs.append(f"{service}@{target.env}")
    return f"deployed {service}"


def agent() -> Agent:
    return Agent.from_definitions({"deploy": define_tool(description="Deploy after two questions.", execute=deploy)})


@pytest.fixture(autouse=True)
def _fresh_runs() -> None:
    runs.clear()


ANSWERS: dict[str, dict[str, Any]] = {
    "ask_env": {"env": "prod"},
    "ask_go": {"go": True},
    "refund_scope": {"full": True, "sku": ""},
    "ask_restock": {"restock": False},
}


async def call(
    client: Client, tool: str, arguments: dict[str, Any], state: str | None = None, responses: Any = None
) -> types.CallToolResult | types.InputRequiredResult:
    result = await client.session.call_tool(
        tool, arguments, input_responses=responses, request_state=state, allow_input_required=True
    )
    assert isinstance(result, types.CallToolResult | types.InputRequiredResult)
    return result


async def never_pushed(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    """Declares form elicitation; on the 2026 era questions come in rounds, never pushed."""
    raise AssertionError("no elicitation is pushed on the 2026 era")


def modern(server: Any) -> Client:
    return Client(server, mode=MODERN, elicitation_callback=never_pushed)


def answers(result: types.InputRequiredResult) -> dict[str, types.ElicitResult]:
    return {key: types.ElicitResult(action="accept", content=ANSWERS[key]) for key in result.input_requests or {}}


Round = tuple[str, dict[str, types.ElicitResult]]
"""One round's sealed state and the answers it was sent with."""


async def rounds_to_the_end(
    clients: Callable[[int], Client], tool: str, arguments: dict[str, Any]
) -> tuple[types.CallToolResult, list[Round]]:
    """Call `tool` round after round (round `i` on `clients(i)`) until it ends; its result and each round sent."""
    sent: list[Round] = []
    result = await call(clients(0), tool, arguments)
    while isinstance(result, types.InputRequiredResult):
        assert result.request_state is not None
        sent.append((result.request_state, answers(result)))
        result = await call(clients(len(sent)), tool, arguments, *sent[-1])
    return result, sent


async def assert_replays_refused(client: Client, tool: str, arguments: dict[str, Any], sent: list[Round]) -> None:
    for state, responses in sent:
        with pytest.raises(MCPError) as caught:
            await call(client, tool, arguments, state, responses)
        assert caught.value.error.code == types.INVALID_PARAMS
        assert caught.value.error.message == "Invalid or expired requestState"
        assert caught.value.error.data == {"reason": "invalid_request_state"}


async def test_every_round_answers_once_and_a_replayed_final_round_runs_nothing() -> None:
    async with modern(mcp_server(agent())) as client:
        done, sent = await rounds_to_the_end(lambda _: client, "deploy", {"service": "api"})
        assert isinstance(done, types.CallToolResult) and not done.is_error
        assert len(sent) == 2 and runs == ["api@prod"]
        await assert_replays_refused(client, "deploy", {"service": "api"}, sent)
        again, _ = await rounds_to_the_end(lambda _: client, "deploy", {"service": "api"})  # a new call runs
    assert not again.is_error and runs == ["api@prod", "api@prod"]


async def test_a_replay_racing_the_first_use_runs_the_tool_once() -> None:
    async with modern(mcp_server(agent())) as client:
        first = await call(client, "deploy", {"service": "api"})
        assert isinstance(first, types.InputRequiredResult) and first.request_state
        second = await call(client, "deploy", {"service": "api"}, first.request_state, answers(first))
        assert isinstance(second, types.InputRequiredResult) and second.request_state
        outcomes: list[str] = []

        async def final() -> None:
            try:
                await call(client, "deploy", {"service": "api"}, second.request_state, answers(second))
                outcomes.append("ran")
            except MCPError as exc:
                outcomes.append(exc.error.message)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                for _ in range(4):
                    group.start_soon(final)
    assert sorted(outcomes) == ["Invalid or expired requestState"] * 3 + ["ran"]
    assert runs == ["api@prod"]


async def test_a_refused_answer_leaves_the_state_unused() -> None:
    """An answer refused before any tool code runs spends nothing: the round can be answered properly."""
    async with modern(mcp_server(agent())) as client:
        first = await call(client, "deploy", {"service": "api"})
        assert isinstance(first, types.InputRequiredResult) and first.request_state
        bad = {"ask_env": types.ElicitResult(action="accept", content={"env": "eu\ud800"})}
        with pytest.raises(MCPError, match="is not JSON text"):
            await call(client, "deploy", {"service": "api"}, first.request_state, bad)
        second = await call(client, "deploy", {"service": "api"}, first.request_state, answers(first))
    assert isinstance(second, types.InputRequiredResult)


async def test_over_stdio_a_replayed_round_is_refused() -> None:
    server = StdioServerParameters(command=sys.executable, args=["-m", "eve_py", "mcp", str(REFUND_MCP_APP)])
    with anyio.fail_after(60):
        async with modern(server) as client:
            done, sent = await rounds_to_the_end(lambda _: client, "refund_order", ORDER)
            assert done.structured_content is not None and done.structured_content["refunded_cents"] == 4800
            await assert_replays_refused(client, "refund_order", ORDER, sent)


async def test_over_http_a_replayed_round_is_refused(desk_url: str) -> None:
    with anyio.fail_after(60):
        async with modern(desk_url) as client:
            done, sent = await rounds_to_the_end(lambda _: client, "refund_order", ORDER)
            assert done.structured_content is not None and not done.is_error
            await assert_replays_refused(client, "refund_order", ORDER, sent)


async def test_two_workers_on_one_sqlite_store_take_each_others_rounds_once(tmp_path: Path) -> None:
    store = str(tmp_path / "shared.db")
    with serving_http(REFUND_MCP_APP, "--store", store) as one, serving_http(REFUND_MCP_APP, "--store", store) as two:
        with anyio.fail_after(60):
            async with modern(one) as first, modern(two) as second:
                done, sent = await rounds_to_the_end(lambda i: (first, second)[i % 2], "refund_order", ORDER)
                assert done.structured_content is not None and done.structured_content["refunded_cents"] == 4800
                assert len(sent) == 2  # round 1 on `second`, round 2 (the refund) on `first`
                await assert_replays_refused(first, "refund_order", ORDER, sent)
                await assert_replays_refused(second, "refund_order", ORDER, sent)


async def test_two_workers_on_one_postgres_database_take_each_others_rounds_once(postgres_url: str) -> None:
    stores = [await PostgresSessionStore.open(postgres_url, max_size=2) for _ in range(2)]
    try:
        servers = [
            mcp_server(agent(), request_state_security=await request_state_security(store), store=store)
            for store in stores
        ]
        async with modern(servers[0]) as first, modern(servers[1]) as second:
            done, sent = await rounds_to_the_end(lambda i: (first, second)[i % 2], "deploy", {"service": "db"})
            assert not done.is_error and runs == ["db@prod"]
            await assert_replays_refused(first, "deploy", {"service": "db"}, sent)
            await assert_replays_refused(second, "deploy", {"service": "db"}, sent)
        assert runs == ["db@prod"]
    finally:
        for store in stores:
            await store.aclose()


def tampered(state: str) -> list[str]:
    """`state` cut short, with one character changed, and with a tail added: none is a state the server minted."""
    flipped = state[:-5] + ("A" if state[-5] != "A" else "B") + state[-4:]
    return [state[:-8], flipped, state + "-TAMPERED"]


async def assert_tampering_refused(client: Client, tool: str, arguments: dict[str, Any], sent: list[Round]) -> None:
    for state, responses in sent:
        for bad in tampered(state):
            with pytest.raises(MCPError) as caught:
                await call(client, tool, arguments, bad, responses)
            assert caught.value.error.code == types.INVALID_PARAMS
            assert caught.value.error.message == "Invalid or expired requestState"


async def test_a_tampered_state_is_refused_before_any_tool_code_runs() -> None:
    async with modern(mcp_server(agent())) as client:
        first = await call(client, "deploy", {"service": "api"})
        assert isinstance(first, types.InputRequiredResult) and first.request_state
        second = await call(client, "deploy", {"service": "api"}, first.request_state, answers(first))
        assert isinstance(second, types.InputRequiredResult) and second.request_state
        await assert_tampering_refused(client, "deploy", {"service": "api"}, [(second.request_state, answers(second))])
        assert runs == []
        with pytest.raises(MCPError, match="Invalid or expired requestState"):  # bound to its arguments
            await call(client, "deploy", {"service": "web"}, second.request_state, answers(second))
        done = await call(client, "deploy", {"service": "api"}, second.request_state, answers(second))
    assert isinstance(done, types.CallToolResult) and runs == ["api@prod"]  # tampering spent nothing


async def test_over_stdio_and_http_a_tampered_state_is_refused(desk_url: str) -> None:
    stdio = StdioServerParameters(command=sys.executable, args=["-m", "eve_py", "mcp", str(REFUND_MCP_APP)])
    for server in (stdio, desk_url):
        with anyio.fail_after(60):
            async with modern(server) as client:
                first = await call(client, "refund_order", ORDER)
                assert isinstance(first, types.InputRequiredResult) and first.request_state
                await assert_tampering_refused(client, "refund_order", ORDER, [(first.request_state, answers(first))])
                second = await call(client, "refund_order", ORDER, first.request_state, answers(first))
                assert isinstance(second, types.InputRequiredResult)  # the untampered state still answers


async def test_a_worker_with_another_key_refuses_the_state() -> None:
    """Workers that do not share a key (no `request_state_security(store)`) cannot open each other's states."""
    async with modern(mcp_server(agent())) as one, modern(mcp_server(agent())) as two:
        first = await call(one, "deploy", {"service": "api"})
        assert isinstance(first, types.InputRequiredResult) and first.request_state
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await call(two, "deploy", {"service": "api"}, first.request_state, answers(first))
    assert runs == []


@pytest.mark.parametrize("server", ["in-process", "stdio", "http"])
async def test_on_the_legacy_era_a_captured_state_answers_nothing(server: str, request: pytest.FixtureRequest) -> None:
    """A legacy-era call carrying a 2026 round's state and answers gets its questions pushed again, or is refused."""
    target: Any = mcp_server(agent())
    if server == "stdio":
        target = StdioServerParameters(command=sys.executable, args=["-m", "eve_py", "mcp", str(REFUND_MCP_APP)])
    elif server == "http":
        target = request.getfixturevalue("desk_url")
    tool, arguments = ("deploy", {"service": "api"}) if server == "in-process" else ("refund_order", ORDER)
    pushed: list[str] = []

    async def decline(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        pushed.append(params.message)
        return types.ElicitResult(action="decline")

    with anyio.fail_after(60):
        async with modern(target) as client:
            first = await call(client, tool, arguments)
            assert isinstance(first, types.InputRequiredResult) and first.request_state
        async with Client(target, mode="legacy", elicitation_callback=decline) as legacy:
            for state in [first.request_state, *tampered(first.request_state)]:
                pushed.clear()
                try:
                    result = await call(legacy, tool, arguments, state, answers(first))
                except MCPError as refused:
                    assert refused.error.code == types.INVALID_PARAMS
                    continue
                assert isinstance(result, types.CallToolResult) and result.is_error  # declined when asked again
                assert len(pushed) == 1
    assert runs == []


def _up_front(keys: list[str]) -> dict[str, types.ElicitResult]:
    return {key: types.ElicitResult(action="accept", content=ANSWERS[key]) for key in keys}


async def test_answers_sent_without_a_state_are_not_taken_and_the_question_is_asked() -> None:
    """The MCP SDK's rule: an answer counts only for the question shown in the previous round."""
    async with modern(mcp_server(agent())) as client:
        unasked = await call(client, "deploy", {"service": "api"}, None, _up_front(["ask_env", "ask_go"]))
        assert isinstance(unasked, types.InputRequiredResult)
        assert list(unasked.input_requests or {}) == ["ask_env"]
        # A state lists only the question it asked: an answer to a later one rides along unread.
        assert unasked.request_state is not None
        both = _up_front(["ask_env", "ask_go"])
        second = await call(client, "deploy", {"service": "api"}, unasked.request_state, both)
        assert isinstance(second, types.InputRequiredResult)
        assert list(second.input_requests or {}) == ["ask_go"]
    assert runs == []


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_refund_with_its_answers_up_front_still_asks_each_question(
    transport: str, request: pytest.FixtureRequest
) -> None:
    server: Any = (
        StdioServerParameters(command=sys.executable, args=["-m", "eve_py", "mcp", str(REFUND_MCP_APP)])
        if transport == "stdio"
        else request.getfixturevalue("desk_url")
    )
    with anyio.fail_after(60):
        async with modern(server) as client:
            asked = await call(client, "refund_order", ORDER, None, _up_front(["refund_scope", "ask_restock"]))
            assert isinstance(asked, types.InputRequiredResult)
            assert set(asked.input_requests or {}) <= {"refund_scope", "ask_restock"} and asked.input_requests
            done, sent = await rounds_to_the_end(lambda _: client, "refund_order", ORDER)
    assert done.structured_content is not None and done.structured_content["refunded_cents"] == 4800
