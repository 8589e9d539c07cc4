"""docs/tracing.md's OTLP route: the OTLP/HTTP exporter delivers a parked and resumed turn to a real HTTP receiver."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span as OtlpSpan
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from eve_py import InputResponse, Runtime
from tests.tracing.traced import traced_agent, traced_model

pytestmark = pytest.mark.anyio


class Collector(ThreadingHTTPServer):
    """A minimal OTLP/HTTP receiver: keeps every `POST /v1/traces` body it is sent, answers 200."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Receive)
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[str] = []

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1/traces"

    def spans(self) -> list[tuple[str, OtlpSpan]]:
        """Every span received, with its resource's `service.name`."""
        found = []
        for request in self.requests:
            for resource_spans in request.resource_spans:
                service = next(
                    a.value.string_value for a in resource_spans.resource.attributes if a.key == "service.name"
                )
                found += [(service, span) for scope in resource_spans.scope_spans for span in scope.spans]
        return found


class _Receive(BaseHTTPRequestHandler):
    server: Collector

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.paths.append(self.path)
        self.server.requests.append(ExportTraceServiceRequest.FromString(body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[Collector]:
    server = Collector()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


async def test_a_parked_and_resumed_turn_reaches_an_otlp_receiver_with_its_link(
    spans: InMemorySpanExporter, collector: Collector
) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "travel-agent"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=collector.endpoint)))
    switch = trace.get_tracer_provider()
    recording, switch.target = switch.target, provider  # type: ignore[attr-defined]
    try:
        session = await Runtime(traced_agent(), model=traced_model()).create_session()
        approval, pick = (await session.send("delete")).input_requests
        answers = [
            InputResponse(request_id=approval.request_id, option_id="approve"),
            InputResponse(request_id=pick.request_id, value={"colour": "teal"}),
        ]
        assert (await session.respond(answers)).status == "completed"
    finally:
        switch.target = recording  # type: ignore[attr-defined]
        provider.shutdown()  # flushes the batch to the receiver

    assert set(collector.paths) == {"/v1/traces"}
    received = collector.spans()
    assert {service for service, _ in received} == {"travel-agent"}
    names = [span.name for _, span in received]
    assert names.count("invoke_agent helper") == 2 and "execute_tool delete_file" in names
    parking, resumed = [span for _, span in received if span.name == "invoke_agent helper"]
    assert [event.name for event in parking.events] == ["eve.park"]
    [link] = resumed.links
    assert (link.trace_id, link.span_id) == (parking.trace_id, parking.span_id)
    conversation = {
        a.value.string_value for _, s in received for a in s.attributes if a.key == "gen_ai.conversation.id"
    }
    assert conversation == {session.id}
