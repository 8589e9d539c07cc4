"""The OpenTelemetry API, imported on first use and only when installed.

`tracer()` is None unless spans would be recorded: without `opentelemetry-api`, or with it but no
tracer provider set (the API's proxy or no-op provider), eve-py makes no span, stores no trace
context and pays one function call per hook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eve_py._version import version

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer, TracerProvider

__all__ = ("INSTRUMENTATION_NAME", "tracer")

INSTRUMENTATION_NAME = "eve_py"
"""The instrumentation scope of eve-py's spans (`otel.scope.name`)."""

_available: bool | None = None
"""False once `opentelemetry` failed to import: a failed import is not retried on every hook."""

_cached: tuple[TracerProvider, Tracer] | None = None
"""The provider last seen and its tracer: a tracer is made once per provider."""


def tracer() -> Tracer | None:
    """eve-py's tracer from the global tracer provider, or None when spans would go nowhere."""
    global _available, _cached
    if _available is False:
        return None
    try:
        from opentelemetry import trace
    except ImportError:
        _available = False
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None
    cached = _cached
    if cached is None or cached[0] is not provider:
        cached = (provider, provider.get_tracer(INSTRUMENTATION_NAME, version()))
        _cached = cached
    return cached[1]
