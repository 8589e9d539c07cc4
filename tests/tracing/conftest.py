"""A real OpenTelemetry SDK provider with an in-memory exporter, switched on only inside tests that ask for it.

The global tracer provider can be set once per process, so the one set here stays; outside the
`spans` fixture it hands out the API's no-op tracer, and eve-py behaves as with no provider
(no span recorded, no trace context stored): the rest of the suite is unaffected.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class _SwitchTracer(trace.Tracer):
    """Starts spans with the switch's current provider's tracer."""

    def __init__(self, switch: _Switch, name: str) -> None:
        self._switch, self._name = switch, name

    def start_span(self, *args: Any, **kwargs: Any) -> trace.Span:
        return self._switch.target.get_tracer(self._name).start_span(*args, **kwargs)

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Any:
        return self._switch.target.get_tracer(self._name).start_as_current_span(*args, **kwargs)


class _Switch(trace.TracerProvider):
    """A provider that is the SDK's while a test records spans, the API's no-op otherwise."""

    def __init__(self) -> None:
        self.target: trace.TracerProvider = trace.NoOpTracerProvider()

    def get_tracer(self, instrumenting_module_name: str, *args: Any, **kwargs: Any) -> trace.Tracer:
        return _SwitchTracer(self, instrumenting_module_name)


_SWITCH: _Switch | None = None


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The spans finished while the test runs, from an SDK `TracerProvider` set as the global provider."""
    global _SWITCH
    if _SWITCH is None:
        _SWITCH = _Switch()
        trace.set_tracer_provider(_SWITCH)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _SWITCH.target = provider
    try:
        yield exporter
    finally:
        _SWITCH.target = trace.NoOpTracerProvider()
        provider.shutdown()
