"""Across processes: without OpenTelemetry (or without a provider) nothing is traced or stored; with one, a
batch parked in one process is linked from the run that resumes it in another."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from eve_py import InputResponse, Runtime
from eve_py.sessions import SQLiteSessionStore
from tests.conftest import REPO
from tests.tracing.traced import attrs, named, traced_agent, traced_model

pytestmark = pytest.mark.anyio


def park_in_child(mode: str, db: Path) -> dict[str, Any]:
    """Park a session on `db` in a new Python process (see `tests/tracing/park_child.py`)."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.tracing.park_child", mode, str(db)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


async def resume(db: Path, report: dict[str, Any]) -> str:
    runtime = Runtime(traced_agent(), model=traced_model(), store=SQLiteSessionStore(db))
    try:
        approval, pick = report["requestIds"]
        session = await runtime.get_session(report["sessionId"])
        answers = [
            InputResponse(request_id=approval, option_id="approve"),
            InputResponse(request_id=pick, value={"colour": "teal"}),
        ]
        return (await session.respond(answers)).status
    finally:
        await runtime.aclose()


@pytest.mark.parametrize("mode", ["blocked", "no-provider"])
async def test_without_opentelemetry_or_a_provider_a_session_parks_and_resumes_untraced(
    mode: str, tmp_path: Path
) -> None:
    report = park_in_child(mode, tmp_path / "sessions.db")

    assert report["status"] == "waiting"
    assert report["traceContext"] is None
    assert report["otelImported"] is (mode == "no-provider")
    assert await resume(tmp_path / "sessions.db", report) == "completed"


async def test_a_resume_links_to_the_span_that_parked_it_in_another_process(
    spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    report = park_in_child("sdk", tmp_path / "sessions.db")
    parking = report["parkingSpan"]
    assert report["traceContext"]["traceparent"].startswith(f"00-{parking['traceId']}-{parking['spanId']}-")

    assert await resume(tmp_path / "sessions.db", report) == "completed"

    [turn] = named(spans.get_finished_spans(), "invoke_agent")
    [link] = turn.links
    assert (f"{link.context.trace_id:032x}", f"{link.context.span_id:016x}") == (parking["traceId"], parking["spanId"])
    assert link.context.is_remote
    [resume_event] = [e for e in turn.events if e.name == "eve.resume"]
    assert attrs(resume_event)["eve.request.ids"] == tuple(report["requestIds"])
