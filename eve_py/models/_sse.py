"""Server-sent events from a provider response, decoded by `httpx-sse` as they arrive.

Both providers stream with SSE: OpenAI-compatible servers send `data: {chunk}` lines ending
with `data: [DONE]`; Anthropic sends named events (`event: content_block_delta` + `data:`).
Line endings (`\\n`, `\\r\\n`, `\\r`), comments and events split across network chunks are
handled by the decoder.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
from httpx_sse import EventSource, ServerSentEvent, SSEError

from eve_py.errors import ModelConnectionError, ModelError

__all__ = ("is_event_stream", "sse_events")


def is_event_stream(response: httpx.Response) -> bool:
    """Whether the response is a `text/event-stream` (a server may answer JSON instead)."""
    content_type: str = response.headers.get("content-type", "")
    return content_type.partition(";")[0].strip().lower() == "text/event-stream"


async def sse_events(response: httpx.Response, *, provider: str) -> AsyncIterator[ServerSentEvent]:
    """Yield the response's events in order.

    Raises:
        ModelConnectionError: The connection broke or timed out mid-stream (not retried: its
            deltas may already have been reported).
        ModelError: The body is not an event stream.
    """
    try:
        async for event in EventSource(response).aiter_sse():
            yield event
    except SSEError as exc:
        raise ModelError(f"{provider} sent a malformed event stream: {exc}") from exc
    except httpx.TransportError as exc:
        raise ModelConnectionError(
            f"The {provider} stream broke off: {type(exc).__name__}: {exc}", provider=provider
        ) from exc
