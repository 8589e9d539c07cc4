"""Over HTTP with OpenTelemetry's ASGI middleware (what `opentelemetry-instrument eve-py serve` installs), a turn
joins the trace of the request that started it, and the request that answers it links back to the park."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
import uvicorn
from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from eve_py import Runtime
from eve_py.server import create_app
from tests.server.helpers import ALICE, read_stream
from tests.tracing.traced import named, traced_agent, traced_model

pytestmark = pytest.mark.anyio

PARK_TRACE, PARK_PARENT = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
ANSWER_TRACE, ANSWER_PARENT = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


@asynccontextmanager
async def traced_server(runtime: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    """`create_app(runtime)` inside the ASGI middleware, on a real uvicorn; a client on its API root."""
    app = OpenTelemetryMiddleware(create_app(runtime, tokens=[ALICE]))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, lifespan="on", timeout_graceful_shutdown=5))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}/v26/eve/v1"
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            try:
                async with httpx.AsyncClient(base_url=base, headers={"authorization": f"Bearer {ALICE}"}) as client:
                    yield client
            finally:
                server.should_exit = True
    finally:
        sock.close()


async def test_a_turn_joins_the_requests_trace_and_the_answering_request_links_to_the_park(
    spans: InMemorySpanExporter,
) -> None:
    async with traced_server(Runtime(traced_agent(), model=traced_model())) as client:
        created = await client.post(
            "/session", json={"message": "delete"}, headers={"traceparent": f"00-{PARK_TRACE}-{PARK_PARENT}-01"}
        )
        session_id = created.json()["sessionId"]
        await read_stream(client, session_id)
        requests = (await client.get(f"/session/{session_id}")).json()["inputRequests"]
        answers = [
            {"requestId": requests[0]["requestId"], "optionId": "approve"},
            {"requestId": requests[1]["requestId"], "value": {"colour": "teal"}},
        ]
        parked_events = len(await read_stream(client, session_id, follow=False))
        answered = await client.post(
            f"/session/{session_id}",
            json={"inputResponses": answers},
            headers={"traceparent": f"00-{ANSWER_TRACE}-{ANSWER_PARENT}-01"},
        )
        assert answered.status_code == 202
        events = await read_stream(client, session_id, start=parked_events)  # until the turn ends
        assert "turn.completed" in [event["type"] for event in events]

    finished = spans.get_finished_spans()
    by_id = {span.context.span_id: span for span in finished}
    parking, resumed = named(finished, "invoke_agent")
    for turn, trace_id, caller in ((parking, PARK_TRACE, PARK_PARENT), (resumed, ANSWER_TRACE, ANSWER_PARENT)):
        assert f"{turn.context.trace_id:032x}" == trace_id
        assert turn.parent is not None
        request_span = by_id[turn.parent.span_id]  # the middleware's span of the POST
        assert request_span.kind == SpanKind.SERVER and request_span.name.startswith("POST")
        assert request_span.parent is not None and f"{request_span.parent.span_id:016x}" == caller
    [link] = resumed.links
    assert link.context.span_id == parking.context.span_id
