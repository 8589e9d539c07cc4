"""A separate process that parks a session on a SQLite file: `python -m tests.tracing.park_child MODE DB`.

MODE `blocked`: `opentelemetry` cannot be imported; `no-provider`: the API is there, no provider
is set; `sdk`: an SDK provider records spans. Prints one JSON line: the session id, its open
request ids, the stored trace context, whether `opentelemetry` was imported, and (MODE `sdk`)
the parking span's trace and span ids.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio


async def park(db: Path) -> dict[str, Any]:
    from eve_py import Runtime
    from eve_py.sessions import SQLiteSessionStore
    from tests.tracing.traced import traced_agent, traced_model

    runtime = Runtime(traced_agent(), model=traced_model(), store=SQLiteSessionStore(db))
    session = await runtime.create_session()
    parked = await session.send("delete")
    await session.refresh()
    await runtime.aclose()
    assert session.record.pending is not None
    return {
        "sessionId": session.id,
        "status": parked.status,
        "requestIds": [r.request_id for r in parked.input_requests],
        "traceContext": session.record.pending.trace_context,
    }


def main(mode: str, db: Path) -> None:
    exporter = None
    if mode == "blocked":
        sys.modules["opentelemetry"] = None  # type: ignore[assignment]  # `import opentelemetry` raises ImportError
    elif mode == "sdk":
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
    report = anyio.run(park, db)
    report["otelImported"] = sys.modules.get("opentelemetry.trace") is not None
    if exporter is not None:
        [turn] = [s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent")]
        report["parkingSpan"] = {"traceId": f"{turn.context.trace_id:032x}", "spanId": f"{turn.context.span_id:016x}"}
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
