"""In a plain agent run a tool's `ctx.report_progress` and `ctx.log` are events of its call
(`action.progress`, `action.log`), recorded in order before its `action.result`, and streamed over HTTP."""

from __future__ import annotations

import pytest

from eve_py import Runtime, ToolContext, define_tool
from eve_py.agent import Agent
from eve_py.protocol import ActionLog, ActionProgress, ActionResult
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.server.helpers import read_stream, serve

pytestmark = pytest.mark.anyio


async def index(folder: str, ctx: ToolContext) -> str:
    await ctx.report_progress(0, 2, "listing")
    await ctx.log("info", {"folder": folder}, logger="indexer")
    await ctx.report_progress(2)
    await ctx.log("warning", "one file skipped")
    return f"indexed {folder}"


def respond(request: MockModelRequest) -> str | MockResponse:
    if request.tool_results_since_last_user_message:
        return str(request.tool_results_since_last_user_message[-1].output)
    return MockResponse(tool_calls=[MockToolCall("index", {"folder": "docs"}, id="call_1")])


def runtime() -> Runtime:
    agent = Agent.from_definitions({"index": define_tool(description="Index a folder.", execute=index)})
    return Runtime(agent, model=MockModel(respond))


async def test_progress_and_log_entries_are_the_calls_events_before_its_result() -> None:
    session = await runtime().create_session()
    done = await session.send("index the docs")
    assert done.status == "completed" and done.message == "indexed docs"

    events = [e for e in await session.events() if isinstance(e, ActionProgress | ActionLog | ActionResult)]
    assert [e.type for e in events] == [
        "action.progress",
        "action.log",
        "action.progress",
        "action.log",
        "action.result",
    ]
    first, log, second, warning, result = events
    assert isinstance(first, ActionProgress) and isinstance(second, ActionProgress)
    assert (first.data.tool_call_id, first.data.tool_name) == ("call_1", "index")
    assert (first.data.progress, first.data.total, first.data.message) == (0, 2, "listing")
    assert (second.data.progress, second.data.total, second.data.message) == (2, None, None)
    assert isinstance(log, ActionLog) and isinstance(warning, ActionLog)
    assert (log.data.level, log.data.data, log.data.logger) == ("info", {"folder": "docs"}, "indexer")
    assert (warning.data.level, warning.data.data, warning.data.logger) == ("warning", "one file skipped", None)
    assert first.data.turn_id == result.data.turn_id and first.data.step_index == result.data.step_index


async def test_the_ndjson_stream_carries_them_in_camel_case() -> None:
    async with serve(runtime()) as served, served.client() as client:
        created = await client.post("/session", json={"message": "index the docs"})
        events = await read_stream(client, created.json()["sessionId"], created.json()["startIndex"])
    progress = [e["data"] for e in events if e["type"] == "action.progress"]
    logs = [e["data"] for e in events if e["type"] == "action.log"]
    assert [(p["toolCallId"], p["toolName"], p["progress"], p.get("total"), p.get("message")) for p in progress] == [
        ("call_1", "index", 0, 2, "listing"),
        ("call_1", "index", 2, None, None),
    ]
    assert [(entry["level"], entry["data"], entry.get("logger")) for entry in logs] == [
        ("info", {"folder": "docs"}, "indexer"),
        ("warning", "one file skipped", None),
    ]
    types = [e["type"] for e in events]
    assert types.index("action.log") < types.index("action.result")
