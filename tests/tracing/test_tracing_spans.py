"""With a tracer provider, a turn is a trace: the turn, each model call and each tool call are spans."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from eve_py import Runtime
from eve_py.testing import MockModel, MockModelRequest
from tests.tracing.traced import attrs, named, traced_agent, traced_model

pytestmark = pytest.mark.anyio


async def test_a_turn_is_an_invoke_agent_span_with_its_chat_and_execute_tool_spans_inside(
    spans: InMemorySpanExporter,
) -> None:
    session = await Runtime(traced_agent(), model=traced_model()).create_session()

    done = await session.send("weather")

    assert done.status == "completed"
    finished = spans.get_finished_spans()
    [turn] = named(finished, "invoke_agent")
    chats = named(finished, "chat")
    [tool] = named(finished, "execute_tool")
    assert turn.name == "invoke_agent helper" and turn.kind == SpanKind.INTERNAL
    assert attrs(turn) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "mock",
        "gen_ai.agent.name": "helper",
        "gen_ai.conversation.id": session.id,
        "gen_ai.request.model": "mock",
        "eve.turn.id": done.turn_id,
        "eve.turn.status": "completed",
    }
    assert turn.status.status_code == StatusCode.UNSET
    assert [c.name for c in chats] == ["chat mock", "chat mock"]
    assert all(c.kind == SpanKind.CLIENT and c.parent is not None for c in chats)
    assert [attrs(c)["gen_ai.response.finish_reasons"] for c in chats] == [("tool_calls",), ("stop",)]
    assert {attrs(c)["gen_ai.operation.name"] for c in chats} == {"chat"}
    assert {attrs(c)["gen_ai.conversation.id"] for c in chats} == {session.id}
    assert tool.name == "execute_tool lookup"
    call_id = (await session.messages())[1].content[0].tool_call_id  # type: ignore[union-attr]
    assert attrs(tool) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup",
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Look up the weather.",
        "gen_ai.conversation.id": session.id,
    }
    # One trace: the model calls and the tool call are children of the turn.
    assert {s.context.trace_id for s in finished} == {turn.context.trace_id}
    assert all(s.parent is not None and s.parent.span_id == turn.context.span_id for s in [*chats, tool])


async def test_a_failing_tool_is_an_error_span_with_its_exception_and_the_turn_goes_on(
    spans: InMemorySpanExporter,
) -> None:
    session = await Runtime(traced_agent(), model=traced_model()).create_session()

    done = await session.send("fail")

    assert done.status == "completed"
    [tool] = named(spans.get_finished_spans(), "execute_tool")
    assert tool.status.status_code == StatusCode.ERROR
    assert attrs(tool)["error.type"] == "ToolError"
    [exception] = [e for e in tool.events if e.name == "exception"]
    assert attrs(exception)["exception.message"] == "the disk is full"
    [turn] = named(spans.get_finished_spans(), "invoke_agent")
    assert turn.status.status_code == StatusCode.UNSET  # the model saw the error result and answered


async def test_a_failing_model_call_fails_its_chat_span_and_the_turn_span(spans: InMemorySpanExporter) -> None:
    def broken(request: MockModelRequest) -> str:
        raise ConnectionError("provider unreachable")

    session = await Runtime(traced_agent(), model=MockModel(broken)).create_session()

    failed = await session.send("weather")

    assert failed.status == "failed"
    finished = spans.get_finished_spans()
    [chat] = named(finished, "chat")
    assert chat.status.status_code == StatusCode.ERROR
    assert attrs(chat)["error.type"] == "ConnectionError"
    assert [attrs(e)["exception.type"] for e in chat.events if e.name == "exception"] == ["ConnectionError"]
    [turn] = named(finished, "invoke_agent")
    assert turn.status.status_code == StatusCode.ERROR
    assert turn.status.description == failed.error
    assert attrs(turn)["error.type"] == "MODEL_ERROR"
    assert attrs(turn)["eve.turn.status"] == "failed"


async def test_spans_join_the_callers_trace(spans: InMemorySpanExporter) -> None:
    from opentelemetry import trace

    session = await Runtime(traced_agent(), model=traced_model()).create_session()

    with trace.get_tracer("the-app").start_as_current_span("handle request") as outer:
        await session.send("weather")

    [turn] = named(spans.get_finished_spans(), "invoke_agent")
    assert turn.parent is not None and turn.parent.span_id == outer.get_span_context().span_id
