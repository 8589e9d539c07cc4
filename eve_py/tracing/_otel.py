"""The OpenTelemetry API, imported on first use and only when installed.

`tracer()` is None unless spans would be recorded: without `opentelemetry-api`, or with it but no
tracer provider set (the API's proxy or no-op provider), eve-py makes no span, stores no trace
context and pays one function call per hook.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import TYPE_CHECKING

from eve_py._version import version

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer, TracerProvider

__all__ = ("INSTRUMENTATION_NAME", "tracer")

INSTRUMENTATION_NAME = "eve_py"
"""The instrumentation scope of eve-py's spans (`otel.scope.name`)."""

_available: bool | None = None
"""False once `opentelemetry` failed to import: a failed import is not retried on every hook."""

_api: ModuleType | None = None
"""`opentelemetry.trace` once imported (an import statement per hook costs microseconds)."""

_env_names_provider = False
"""Whether `OTEL_PYTHON_TRACER_PROVIDER` names a provider for the API to load (read with the first import)."""

_cached: tuple[TracerProvider, Tracer] | None = None
"""The provider last seen and its tracer: a tracer is made once per provider."""


def tracer() -> Tracer | None:
    """eve-py's tracer from the global tracer provider, or None when spans would go nowhere."""
    global _available, _api, _env_names_provider, _cached
    api = _api
    if api is None:
        if _available is False:
            return None
        try:
            from opentelemetry import trace
        except ImportError:
            _available = False
            return None
        api = _api = trace
        _env_names_provider = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
    # With no provider set, the API's `get_tracer_provider()` looks up that variable on every call:
    # a KeyError raised and caught inside `os.environ`, 2 to 5 µs a hook. The API's global says the
    # same in 50 ns; the API itself is asked only when the global is set, is missing (another API
    # version), or the variable names a provider for it to load.
    if getattr(api, "_TRACER_PROVIDER", api) is None and not _env_names_provider:
        return None
    provider = api.get_tracer_provider()
    if isinstance(provider, api.ProxyTracerProvider | api.NoOpTracerProvider):
        return None
    cached = _cached
    if cached is None or cached[0] is not provider:
        cached = (provider, provider.get_tracer(INSTRUMENTATION_NAME, version()))
        _cached = cached
    return cached[1]
