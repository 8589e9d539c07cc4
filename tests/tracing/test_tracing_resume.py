"""A park and a resume are span events, and the resumed run links to the span that parked it, across runtimes."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from eve_py import InputResponse, Runtime
from eve_py.sessions import SessionStore, SQLiteSessionStore
from tests.tracing.traced import attrs, named, traced_agent, traced_model

pytestmark = pytest.mark.anyio


def runtime_on(path: Path) -> Runtime:
    """A fresh runtime on the SQLite file `path`: another worker, as far as the session is concerned."""
    return Runtime(traced_agent(), model=traced_model(), store=SQLiteSessionStore(path))


async def test_a_resume_in_another_runtime_links_to_the_span_that_parked_the_batch(
    spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    first = runtime_on(tmp_path / "sessions.db")
    session = await first.create_session()
    parked = await session.send("delete")
    approval, pick = parked.input_requests

    [parking] = named(spans.get_finished_spans(), "invoke_agent")
    [park] = [e for e in parking.events if e.name == "eve.park"]
    assert attrs(park) == {
        "eve.turn.id": parked.turn_id,
        "eve.step.index": 0,
        "eve.request.ids": (approval.request_id, pick.request_id),
        "eve.request.kinds": ("tool-approval", "client-tool"),
        "eve.tool.call.ids": (approval.action.call_id, pick.action.call_id),
        "eve.tool.names": ("delete_file", "pick"),
    }
    assert attrs(parking)["eve.turn.status"] == "waiting"
    await first.aclose()
    spans.clear()

    second = runtime_on(tmp_path / "sessions.db")
    resumed = await (await second.get_session(session.id)).respond(
        [
            InputResponse(request_id=approval.request_id, option_id="approve"),
            InputResponse(request_id=pick.request_id, value={"colour": "teal"}),
        ],
        by="alice",
    )
    await second.aclose()

    assert resumed.status == "completed"
    finished = spans.get_finished_spans()
    [turn] = named(finished, "invoke_agent")
    [link] = turn.links
    assert link.context.trace_id == parking.context.trace_id
    assert link.context.span_id == parking.context.span_id
    assert attrs(link) == {"eve.link.type": "parked", "eve.turn.id": parked.turn_id, "eve.step.index": 0}
    [resume] = [e for e in turn.events if e.name == "eve.resume"]
    assert attrs(resume) == {
        "eve.turn.id": parked.turn_id,
        "eve.step.index": 0,
        "eve.request.ids": (approval.request_id, pick.request_id),
        "eve.request.outcomes": ("approved", "answered"),
        "eve.request.answered_by": ("alice", "alice"),
        "eve.resume.dismissed": False,
    }
    # The approved call runs in the resumed run's trace.
    [tool] = named(finished, "execute_tool")
    assert attrs(tool)["gen_ai.tool.call.id"] == approval.action.call_id
    assert tool.context.trace_id == turn.context.trace_id != parking.context.trace_id


async def test_the_parked_span_is_stored_as_a_w3c_traceparent_inside_the_record(
    spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    runtime = runtime_on(tmp_path / "sessions.db")
    session = await runtime.create_session()
    await session.send("delete")
    await runtime.aclose()

    [parking] = named(spans.get_finished_spans(), "invoke_agent")
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    stored = await store.load(session.id)
    await store.aclose()
    assert stored.pending is not None
    context = parking.context
    assert stored.pending.trace_context == {
        "traceparent": f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"
    }


async def test_a_batch_parked_without_tracing_resumes_traced_without_a_link(
    spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    """Records written before tracing (or by a process without a provider) have no trace context: they still resume."""
    runtime = runtime_on(tmp_path / "sessions.db")
    session = await runtime.create_session()
    spans.clear()
    from opentelemetry import trace

    switch = trace.get_tracer_provider()
    recording, switch.target = switch.target, trace.NoOpTracerProvider()  # type: ignore[attr-defined]
    try:
        [approval, pick] = (await session.send("delete")).input_requests
    finally:
        switch.target = recording  # type: ignore[attr-defined]
    assert (await session.refresh()).record.pending is not None
    assert session.record.pending.trace_context is None  # type: ignore[union-attr]

    done = await session.respond([InputResponse(request_id=approval.request_id, option_id="deny")])

    assert done.status == "completed"
    [turn] = named(spans.get_finished_spans(), "invoke_agent")
    assert turn.links == ()
    [resume] = [e for e in turn.events if e.name == "eve.resume"]
    assert attrs(resume)["eve.request.outcomes"] == ("denied", "ignored")
    assert attrs(resume)["eve.request.answered_by"] == ("local", "")


async def test_a_message_that_dismisses_a_batch_resumes_it_as_dismissed(spans: InMemorySpanExporter) -> None:
    session = await Runtime(traced_agent(), model=traced_model()).create_session()
    await session.send("delete")

    await session.send("weather")

    first, second = named(spans.get_finished_spans(), "invoke_agent")
    [resume] = [e for e in second.events if e.name == "eve.resume"]
    assert attrs(resume)["eve.resume.dismissed"] is True
    assert attrs(resume)["eve.request.outcomes"] == ("ignored", "ignored")
    [link] = second.links
    assert link.context.span_id == first.context.span_id


async def test_every_store_keeps_the_parking_span_for_the_resume(
    spans: InMemorySpanExporter, store: SessionStore
) -> None:
    session = await Runtime(traced_agent(), model=traced_model(), store=store).create_session()
    approval, pick = (await session.send("delete")).input_requests
    [parking] = named(spans.get_finished_spans(), "invoke_agent")
    spans.clear()

    other = await Runtime(traced_agent(), model=traced_model(), store=store).get_session(session.id)
    await other.respond([InputResponse(request_id=approval.request_id, option_id="approve")])

    [turn] = named(spans.get_finished_spans(), "invoke_agent")
    assert [link.context.span_id for link in turn.links] == [parking.context.span_id]
