"""In a plain agent run a tool's `ctx.report_progress` and `ctx.log` are events of its call
(`action.progress`, `action.log`), recorded in order before its `action.result`, and streamed over HTTP."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel

from eve_py import (
    AcceptedElicitation,
    Elicit,
    ElicitationResult,
    InputResponse,
    Resolve,
    Runtime,
    ToolContext,
    define_tool,
)
from eve_py.agent import Agent
from eve_py.protocol import ActionLog, ActionProgress, ActionResult, AnyEvent, Event
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


class Confirm(BaseModel):
    go: bool


async def confirm(service: str, ctx: ToolContext) -> Elicit[Confirm]:
    await ctx.report_progress(1, 3, "checking the service")
    await ctx.log("info", f"asking about {service}")
    return Elicit(f"Deploy {service}?", Confirm)


Answer = Annotated[ElicitationResult[Confirm], Resolve(confirm)]


async def deploy(service: str, answer: Answer, ctx: ToolContext) -> str:
    await ctx.report_progress(2, 3, "deploying")
    await ctx.report_progress(3, 3, "done")
    return f"deployed {service}" if isinstance(answer, AcceptedElicitation) and answer.data.go else "not deployed"


def deploy_model(request: MockModelRequest) -> str | MockResponse:
    if request.tool_results_since_last_user_message:
        return str(request.tool_results_since_last_user_message[-1].output)
    return MockResponse(tool_calls=[MockToolCall("deploy", {"service": "api"}, id="call_d")])


def reports(events: list[AnyEvent] | list[Event]) -> list[tuple[str, object]]:
    return [
        ("progress", e.data.message) if isinstance(e, ActionProgress) else ("log", e.data.data)
        for e in events
        if isinstance(e, ActionProgress | ActionLog)
    ]


async def test_a_call_that_parks_on_a_resolvers_question_records_each_report_once_and_live_sees_them_once() -> None:
    """The resolver's reports before the question are recorded with the park; the run after the answer
    repeats them (it runs the resolver again) and only its new reports are recorded, and shown live."""
    live: list[tuple[str, Event]] = []
    agent = Agent.from_definitions({"deploy": define_tool(description="Deploy.", execute=deploy)})
    runtime = Runtime(agent, model=MockModel(deploy_model), on_live=lambda sid, event: live.append((sid, event)))
    session = await runtime.create_session()

    parked = await session.send("deploy the api")
    [question] = parked.input_requests
    before = [("progress", "checking the service"), ("log", "asking about api")]
    assert reports(parked.events) == before
    assert [event for _, event in live] == [e for e in parked.events if isinstance(e, ActionProgress | ActionLog)]
    assert {sid for sid, _ in live} == {session.id}
    live.clear()

    done = await session.respond([InputResponse(request_id=question.request_id, value={"go": True})])

    assert done.message == "deployed api"
    after = [("progress", "deploying"), ("progress", "done")]
    assert reports(done.events) == after
    assert reports(await session.events()) == before + after
    assert [event for _, event in live] == [e for e in done.events if isinstance(e, ActionProgress | ActionLog)]


async def test_on_live_gets_each_report_as_it_happens_and_on_event_the_same_event_committed() -> None:
    """While the tool runs, `on_live` has its reports and nothing is committed yet; then the same events
    (same ids) are committed with the result."""
    committed: list[Event] = []
    live: list[Event] = []

    async def index_slowly(folder: str, ctx: ToolContext) -> str:
        await ctx.report_progress(1, 2, "listing")
        await ctx.log("info", "half way")
        assert [e.type for e in live] == ["action.progress", "action.log"]
        assert not any(e.type == "action.progress" for e in committed)
        return f"indexed {folder}"

    agent = Agent.from_definitions({"index": define_tool(description="Index a folder.", execute=index_slowly)})
    runtime = Runtime(
        agent,
        model=MockModel(respond),
        on_event=lambda write: committed.extend(write.events),
        on_live=lambda _, event: live.append(event),
    )
    done = await (await runtime.create_session()).send("index the docs")
    assert done.message == "indexed docs"
    assert [e.meta.id for e in live] == [e.meta.id for e in committed if isinstance(e, ActionProgress | ActionLog)]


class Scope(BaseModel):
    full: bool


async def scope(order: str, ctx: ToolContext) -> Elicit[Scope]:
    await ctx.report_progress(1, 4, "loading the order")
    return Elicit(f"Refund all of {order}?", Scope)


async def restock(
    order: str, chosen: Annotated[ElicitationResult[Scope], Resolve(scope)], ctx: ToolContext
) -> Elicit[Confirm]:
    await ctx.report_progress(2, 4, "checking the stock")
    return Elicit(f"Restock {order}?", Confirm)


async def refund(
    order: str,
    chosen: Annotated[ElicitationResult[Scope], Resolve(scope)],
    again: Annotated[ElicitationResult[Confirm], Resolve(restock)],
    ctx: ToolContext,
) -> str:
    await ctx.report_progress(4, 4, "refunded")
    return f"refunded {order}"


def refund_model(request: MockModelRequest) -> str | MockResponse:
    if request.tool_results_since_last_user_message:
        return str(request.tool_results_since_last_user_message[-1].output)
    return MockResponse(tool_calls=[MockToolCall("refund", {"order": "A1"}, id="call_r")])


async def test_a_call_that_parks_twice_on_dependent_questions_records_each_report_once() -> None:
    agent = Agent.from_definitions({"refund": define_tool(description="Refund.", execute=refund)})
    session = await Runtime(agent, model=MockModel(refund_model)).create_session()

    first = await session.send("refund A1")
    [asked] = first.input_requests
    second = await session.respond([InputResponse(request_id=asked.request_id, value={"full": True})])
    [asked_again] = second.input_requests
    done = await session.respond([InputResponse(request_id=asked_again.request_id, value={"go": True})])

    assert done.message == "refunded A1"
    assert reports(await session.events()) == [
        ("progress", "loading the order"),
        ("progress", "checking the stock"),
        ("progress", "refunded"),
    ]
