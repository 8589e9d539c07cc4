"""A running tool's progress and log entries reach HTTP readers while the call runs, each once.

The tool reports, then waits until the test has seen the report on the wire: a report that came
only with the call's result would leave it waiting (and the test times out). Eve's NDJSON stream
sends them live only to a reader that asks (`live=1`), as records outside its cursor; AG-UI and
the AI SDK's stream always do.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from eve_py import Runtime, ToolContext, define_tool
from eve_py.agent import Agent
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.server.helpers import ALICE, Served, serve

pytestmark = pytest.mark.anyio

Frame = dict[str, Any]


class Gated:
    """An `index` tool that waits for a reader (`ready`), reports progress and a log entry, waits for
    `gate`, then reports again."""

    def __init__(self) -> None:
        self.ready = anyio.Event()
        self.gate = anyio.Event()

    async def index(self, folder: str, ctx: ToolContext) -> str:
        await self.ready.wait()  # a reader that connects later gets the reports made before from the log
        await ctx.report_progress(1, 3, "listing")
        await ctx.log("info", {"folder": folder}, logger="indexer")
        await self.gate.wait()
        await ctx.report_progress(3, 3, "done")
        return f"indexed {folder}"

    def runtime(self) -> Runtime:
        def respond(request: MockModelRequest) -> str | MockResponse:
            if request.tool_results_since_last_user_message:
                return str(request.tool_results_since_last_user_message[-1].output)
            return MockResponse(tool_calls=[MockToolCall("index", {"folder": "docs"}, id="call_i")])

        tool = define_tool(description="Index a folder.", execute=self.index)
        return Runtime(Agent.from_definitions({"index": tool}), model=MockModel(respond))


def base_client(served: Served) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=served.base, headers={"authorization": f"Bearer {ALICE}"}, timeout=10.0)


async def sse(response: httpx.Response) -> AsyncIterator[Frame]:
    async for line in response.aiter_lines():
        if line.startswith("data: ") and line != "data: [DONE]":
            yield json.loads(line[6:])


async def test_an_ndjson_reader_that_asks_gets_reports_live_outside_its_cursor_then_their_stored_copies() -> None:
    gated = Gated()
    async with serve(gated.runtime()) as served, served.client() as http:
        created = (await http.post("/session", json={"message": "index the docs"})).json()
        session_id, start = created["sessionId"], created["startIndex"]
        live: list[Frame] = []
        stored: list[Frame] = []
        with anyio.fail_after(10):
            params = {"startIndex": start, "live": "1"}
            async with http.stream("GET", f"/session/{session_id}/stream", params=params) as response:
                gated.ready.set()
                async for line in response.aiter_lines():
                    record = json.loads(line)
                    if record.get("$evePy") == "live":
                        live.append(record["event"])
                        if len(live) == 2:  # the progress and the log entry, before the call ends
                            assert not any(e["type"] == "action.result" for e in stored)
                            gated.gate.set()
                        continue
                    stored.append(record)
                    if record["type"] == "session.waiting":
                        break
        plain = await http.get(f"/session/{session_id}/stream", params={"startIndex": start, "follow": "false"})
        count = (await http.get(f"/session/{session_id}")).json()["eventCount"]

    reports = [e for e in stored if e["type"] in ("action.progress", "action.log")]
    assert [(e["type"], e["meta"]["id"]) for e in live] == [(e["type"], e["meta"]["id"]) for e in reports]
    assert [e["data"].get("message") for e in live if e["type"] == "action.progress"] == ["listing", "done"]
    assert start + len(stored) == count  # the live records took no place in the cursor
    assert [json.loads(line) for line in plain.text.splitlines()] == stored  # without live=1: stored events only


async def test_ag_ui_shows_a_calls_reports_as_one_activity_message_live_each_once() -> None:
    gated = Gated()
    frames: list[Frame] = []
    body = {"threadId": "t-live", "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "index"}]}
    async with serve(gated.runtime()) as served, base_client(served) as http:
        with anyio.fail_after(10):
            async with http.stream("POST", "/ag-ui", json=body) as response:
                gated.ready.set()
                async for frame in sse(response):
                    frames.append(frame)
                    if frame["type"] == "ACTIVITY_DELTA":  # the log entry after the first progress
                        assert "TOOL_CALL_RESULT" not in [f["type"] for f in frames]
                        gated.gate.set()

    activity = [f for f in frames if f["type"].startswith("ACTIVITY_")]
    assert [f["type"] for f in activity] == ["ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "ACTIVITY_DELTA"]
    assert {(f["messageId"], f["activityType"]) for f in activity} == {("activity_call_i", "tool-progress")}
    snapshot, log, done = activity
    assert snapshot["content"] == {
        "toolCallId": "call_i",
        "toolName": "index",
        "progress": 1,
        "total": 3,
        "message": "listing",
        "logs": [],
    }
    assert log["patch"] == [
        {"op": "add", "path": "/logs/-", "value": {"level": "info", "data": {"folder": "docs"}, "logger": "indexer"}}
    ]
    assert done["patch"] == [
        {"op": "replace", "path": "/progress", "value": 3},
        {"op": "replace", "path": "/total", "value": 3},
        {"op": "replace", "path": "/message", "value": "done"},
    ]
    assert frames[-1]["type"] == "RUN_FINISHED"


async def test_the_ai_sdk_stream_carries_reports_as_data_parts_live_each_once() -> None:
    gated = Gated()
    chunks: list[Frame] = []
    message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "index"}]}
    body = {"id": "c-live", "messages": [message], "trigger": "submit-message"}
    async with serve(gated.runtime()) as served, base_client(served) as http:
        with anyio.fail_after(10):
            async with http.stream("POST", "/ai-sdk/chat", json=body) as response:
                gated.ready.set()
                async for chunk in sse(response):
                    chunks.append(chunk)
                    if chunk["type"] == "data-tool-log":
                        assert "tool-output-available" not in [c["type"] for c in chunks]
                        gated.gate.set()

    data = [c for c in chunks if c["type"].startswith("data-")]
    assert [(c["type"], c["data"].get("message")) for c in data] == [
        ("data-tool-progress", "listing"),
        ("data-tool-log", None),
        ("data-tool-progress", "done"),
    ]
    first, log, last = data
    assert first["id"] == last["id"] == "call_i"  # the client keeps one progress part per call, the latest
    call = {"toolCallId": "call_i", "toolName": "index"}
    assert first["data"] == call | {"progress": 1, "total": 3, "message": "listing"}
    assert log["data"] == call | {"level": "info", "data": {"folder": "docs"}, "logger": "indexer"}
    assert chunks[-1] == {"type": "finish", "finishReason": "stop"}


async def test_an_ag_ui_client_attaching_to_a_stored_thread_gets_each_call_s_activity_after_its_result() -> None:
    gated = Gated()
    gated.ready.set()
    gated.gate.set()
    body = {"threadId": "t-attach", "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "index"}]}
    async with serve(gated.runtime()) as served, base_client(served) as http:
        with anyio.fail_after(10):
            async with http.stream("POST", "/ag-ui", json=body) as response:
                ran = [frame async for frame in sse(response)]
            attach = {"threadId": "t-attach", "runId": "r2", "messages": []}
            async with http.stream("POST", "/ag-ui", json=attach) as response:
                attached = [frame async for frame in sse(response)]

    assert ran[-1]["type"] == "RUN_FINISHED"
    [snapshot] = [f for f in attached if f["type"] == "MESSAGES_SNAPSHOT"]
    roles = [(m["role"], m["id"]) for m in snapshot["messages"]]
    result_at = roles.index(("tool", "result_call_i"))
    assert roles[result_at + 1] == ("activity", "activity_call_i")  # right after the call's result
    activity = snapshot["messages"][result_at + 1]
    assert activity["activityType"] == "tool-progress"
    assert activity["content"] == {  # as the live snapshot and deltas left it
        "toolCallId": "call_i",
        "toolName": "index",
        "progress": 3,
        "total": 3,
        "message": "done",
        "logs": [{"level": "info", "data": {"folder": "docs"}, "logger": "indexer"}],
    }
