"""How a turn's span ends when the turn is cancelled, and a resolver's question parks and resumes like any request."""

from __future__ import annotations

from typing import Annotated

import anyio
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from pydantic import BaseModel

from eve_py import (
    AcceptedElicitation,
    Agent,
    Elicit,
    ElicitationResult,
    InputResponse,
    Resolve,
    Runtime,
    define_tool,
)
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.tracing.traced import attrs, named, traced_agent, traced_model

pytestmark = pytest.mark.anyio


async def test_a_running_turn_that_is_cancelled_ends_its_span_as_cancelled_not_failed(
    spans: InMemorySpanExporter,
) -> None:
    started = anyio.Event()

    async def wait_forever() -> str:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results_since_last_user_message:
            return MockResponse(tool_calls=[MockToolCall("wait_forever")])
        return "done"

    agent = Agent.from_definitions(
        {"wait_forever": define_tool(description="Never returns.", execute=wait_forever)}, name="slow"
    )
    session = await Runtime(agent, model=MockModel(respond)).create_session()
    results = []

    async def send() -> None:
        results.append(await session.send("go"))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(send)
            await started.wait()
            assert await session.cancel()

    [result] = results
    assert result.status == "failed" and (await session.refresh()).record.status == "idle"
    finished = spans.get_finished_spans()
    [turn] = named(finished, "invoke_agent")
    [tool] = named(finished, "execute_tool")
    assert attrs(turn)["eve.turn.status"] == "cancelled"
    # A cancellation someone asked for is not the agent's failure: no ERROR status, no exception event.
    for span in (turn, tool):
        assert span.status.status_code == StatusCode.UNSET, span.name
        assert "error.type" not in attrs(span)
        assert [e.name for e in span.events if e.name == "exception"] == []


async def test_a_parked_turn_that_is_cancelled_ends_in_a_cancelled_span_linked_to_the_park(
    spans: InMemorySpanExporter,
) -> None:
    session = await Runtime(traced_agent(), model=traced_model()).create_session()
    approval, pick = (await session.send("delete")).input_requests
    await session.respond([InputResponse(request_id=pick.request_id, value={"colour": "teal"})], settle=False)

    assert await session.cancel()

    parking, cancelling = named(spans.get_finished_spans(), "invoke_agent")
    assert attrs(cancelling)["eve.turn.status"] == "cancelled"
    assert cancelling.status.status_code == StatusCode.UNSET
    [link] = cancelling.links
    assert link.context.span_id == parking.context.span_id
    [resume] = [e for e in cancelling.events if e.name == "eve.resume"]
    assert attrs(resume)["eve.request.ids"] == (approval.request_id, pick.request_id)
    assert attrs(resume)["eve.request.outcomes"] == ("cancelled", "answered")


class Confirm(BaseModel):
    go: bool


def confirm(service: str) -> Elicit[Confirm]:
    return Elicit(f"Deploy {service}?", Confirm)


def deploy(service: str, answer: Annotated[ElicitationResult[Confirm], Resolve(confirm)]) -> str:
    return f"deployed {service}" if isinstance(answer, AcceptedElicitation) and answer.data.go else "not deployed"


def deploy_model() -> MockModel:
    def respond(request: MockModelRequest) -> str | MockResponse:
        results = request.tool_results_since_last_user_message
        if not results:
            return MockResponse(tool_calls=[MockToolCall("deploy", {"service": "api"})])
        return str(results[-1].output)

    return MockModel(respond, name="mock")


async def test_a_resolvers_question_parks_and_resumes_with_the_same_events_and_link_as_a_client_tool(
    spans: InMemorySpanExporter,
) -> None:
    agent = Agent.from_definitions({"deploy": define_tool(description="Deploy.", execute=deploy)}, name="ops")
    session = await Runtime(agent, model=deploy_model()).create_session()
    parked = await session.send("deploy the api")
    [question] = parked.input_requests
    assert question.kind == "elicitation"

    [parking] = named(spans.get_finished_spans(), "invoke_agent")
    [park] = [e for e in parking.events if e.name == "eve.park"]
    assert attrs(park) == {
        "eve.turn.id": parked.turn_id,
        "eve.step.index": 0,
        "eve.request.ids": (question.request_id,),
        "eve.request.kinds": ("elicitation",),
        "eve.tool.call.ids": (question.action.call_id,),
        "eve.tool.names": ("deploy",),
    }
    assert attrs(parking)["eve.turn.status"] == "waiting"
    # The resolver ran, inside the call's span, in the parking trace; it asked, so nothing was executed yet.
    [asking] = named(spans.get_finished_spans(), "execute_tool")
    assert asking.context.trace_id == parking.context.trace_id
    assert attrs(asking)["gen_ai.tool.call.id"] == question.action.call_id
    spans.clear()

    done = await session.respond([InputResponse(request_id=question.request_id, value={"go": True})], by="alice")

    assert done.message == "deployed api"
    finished = spans.get_finished_spans()
    [resumed] = named(finished, "invoke_agent")
    [link] = resumed.links
    assert (link.context.trace_id, link.context.span_id) == (parking.context.trace_id, parking.context.span_id)
    assert attrs(link) == {"eve.link.type": "parked", "eve.turn.id": parked.turn_id, "eve.step.index": 0}
    [resume] = [e for e in resumed.events if e.name == "eve.resume"]
    assert attrs(resume) == {
        "eve.turn.id": parked.turn_id,
        "eve.step.index": 0,
        "eve.request.ids": (question.request_id,),
        "eve.request.outcomes": ("answered",),
        "eve.request.answered_by": ("alice",),
        "eve.resume.dismissed": False,
    }
    [executing] = named(finished, "execute_tool")
    assert attrs(executing)["gen_ai.tool.call.id"] == question.action.call_id
    assert executing.context.trace_id == resumed.context.trace_id
    assert attrs(resumed)["eve.turn.status"] == "completed"
