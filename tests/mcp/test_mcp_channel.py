"""The agent itself as an MCP server (eve's MCP channel): `agent_start`, `agent_get`,
`agent_update` and `agent_cancel`, driven by the SDK's `Client` on both protocol eras.

The sessions are ordinary eve-py sessions in the runtime's store: what the channel starts, the
Python API (and so `eve-py serve`) sees, and an answer is accepted once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp.client import Client
from mcp.types.version import LATEST_MODERN_VERSION

from eve_py import Runtime, load_agent
from eve_py.agent import load_mock_model
from eve_py.mcp.channel import agent_channel
from eve_py.sessions._sqlite import SQLiteSessionStore
from tests.conftest import HITL_APP

pytestmark = pytest.mark.anyio

ERAS = ["legacy", LATEST_MODERN_VERSION]


def runtime(store: SQLiteSessionStore | None = None) -> Runtime:
    return Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)


async def call(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return dict(result.structured_content)


async def error(client: Client, name: str, **arguments: Any) -> str:
    result = await client.call_tool(name, arguments)
    assert result.is_error
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("mode", ERAS)
async def test_start_answer_complete_with_eves_tool_names_and_shapes(mode: str, tmp_path: Path) -> None:
    store = await SQLiteSessionStore.open(tmp_path / "sessions.db")
    served = runtime(store)
    async with Client(agent_channel(served), mode=mode) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names == ["agent_start", "agent_get", "agent_update", "agent_cancel"]
        started = await call(client, "agent_start", message="pick a template")
        assert started["status"] == "input_required"
        ((request_id, request),) = started["inputRequests"].items()
        assert request["requestId"] == request_id and request["prompt"] == "Which template should the page use?"
        assert await call(client, "agent_get", invocationId=started["invocationId"]) == started

        responses = [{"requestId": request_id, "optionId": "tpl_red"}]
        done = await call(client, "agent_update", invocationId=started["invocationId"], responses=responses)
        again = await call(client, "agent_update", invocationId=started["invocationId"], responses=responses)
    assert done["status"] == "completed" and done["result"] == "Recorded your pick: tpl_red."
    assert again == done, "an answer is accepted once; a retry changes nothing"
    same_store = await served.get_session(started["invocationId"])  # an ordinary session in the store
    assert same_store.status == "idle" and "Recorded your pick" in str(await same_store.messages())
    await served.aclose()
    await store.aclose()


async def test_cancel_withdraws_the_open_requests() -> None:
    async with Client(agent_channel(runtime())) as client:
        started = await call(client, "agent_start", message="pick a template")
        cancelled = await call(client, "agent_cancel", invocationId=started["invocationId"])
        ((request_id, _),) = started["inputRequests"].items()
        late = await call(
            client,
            "agent_update",
            invocationId=started["invocationId"],
            responses=[{"requestId": request_id, "optionId": "tpl_red"}],
        )
    assert cancelled["status"] == "cancelled" and "inputRequests" not in cancelled
    assert late["status"] == "cancelled", "an answer after the cancel is not applied"


async def test_an_idempotency_key_starts_one_session() -> None:
    async with Client(agent_channel(runtime())) as client:
        first = await call(client, "agent_start", message="pick a template", idempotencyKey="k-1")
        second = await call(client, "agent_start", message="pick a template", idempotencyKey="k-1")
        other = await call(client, "agent_start", message="pick a template", idempotencyKey="k-2")
    assert first == second and other["invocationId"] != first["invocationId"]


async def test_bad_requests_are_error_results() -> None:
    async with Client(agent_channel(runtime())) as client:
        missing = await error(client, "agent_get", invocationId="ses_nope")
        blank = await error(client, "agent_start", message="")
        extra = await error(client, "agent_get", invocationId="x", surprise=1)
        started = await call(client, "agent_start", message="pick a template")
        unknown = await error(
            client,
            "agent_update",
            invocationId=started["invocationId"],
            responses=[{"requestId": "req_nope", "optionId": "tpl_red"}],
        )
        ((request_id, _),) = started["inputRequests"].items()
        invalid = await error(
            client,
            "agent_update",
            invocationId=started["invocationId"],
            responses=[{"requestId": request_id, "optionId": "tpl_purple"}],
        )
        still = await call(client, "agent_get", invocationId=started["invocationId"])
    assert missing == "Invocation not found."
    assert blank.startswith("Invalid arguments for agent_start: message")
    assert "surprise" in extra
    assert "req_nope" in unknown
    assert "tpl_purple" in invalid
    assert still == started, "a rejected answer leaves the invocation parked as it was"
