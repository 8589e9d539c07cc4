"""OpenTelemetry traces of eve-py's turns, after the GenAI semantic conventions (`pip install 'eve-py[otel]'`).

Every run of a turn is an `invoke_agent {agent}` span, with a `chat {model}` span per model call and
an `execute_tool {tool}` span per tool call; a park is an `eve.park` span event, and the run that
resumes the batch, in any process on the same store, adds an `eve.resume` event and links to the
span that parked it. Spans go to the global tracer provider: configure one with the OpenTelemetry
SDK. Without `opentelemetry-api`, or with it and no provider, nothing is traced and nothing is stored.

```python
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
trace.set_tracer_provider(provider)  # before the first turn; eve-py picks it up
```

See docs/tracing.md for every span, attribute and event.
"""

from __future__ import annotations

from eve_py.tracing._attributes import PARK_EVENT, RESUME_EVENT
from eve_py.tracing._otel import INSTRUMENTATION_NAME

__all__ = ("INSTRUMENTATION_NAME", "PARK_EVENT", "RESUME_EVENT")
