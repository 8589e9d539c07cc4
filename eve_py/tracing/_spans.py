"""The spans of a turn: `invoke_agent` for the turn, `chat` for each model call, `execute_tool` for each tool call.

Each hook the harness calls first asks `_otel.tracer()`; with no tracer provider it returns at once
(a shared no-op context, the unchanged step), so a runtime without tracing pays a function call.

A turn that parks adds an `eve.park` event to its span and stores the span's W3C trace context with
the parked step (`PendingStep.trace_context`, inside the record every store keeps). The run that
resumes the batch, in this process or another, adds an `eve.resume` event and a link to that span.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

import anyio

from eve_py.models import Model, ModelRequest, ModelResponse
from eve_py.protocol.pending import PendingStep
from eve_py.protocol.turns import TurnResult
from eve_py.sessions import SessionRecord
from eve_py.tracing import _attributes as a
from eve_py.tracing._otel import tracer

if TYPE_CHECKING:
    from opentelemetry.trace import Link, Span, SpanKind, Tracer

__all__ = ("TurnTrace", "mark_parked", "request_model", "tool_span", "turn_span")

_NOTHING = contextlib.nullcontext()
"""What `tool_span` returns without a tracer (a `nullcontext` may be entered any number of times)."""


class TurnTrace:
    """The turn's span while a driver runs it (no span: every method does nothing)."""

    __slots__ = ("_span",)

    def __init__(self, span: Span | None) -> None:
        self._span = span

    def ended(self, result: TurnResult) -> None:
        """Say how the run ended: `eve.turn.status`; a failed turn's code as `error.type`, status ERROR."""
        span = self._span
        if span is None:
            return
        from opentelemetry.trace import StatusCode

        span.set_attribute(a.TURN_STATUS, result.status)
        if result.turn_id is not None:
            span.set_attribute(a.TURN_ID, result.turn_id)
        failure = a.turn_failure(result)
        if failure is not None:
            span.set_attribute(a.ERROR_TYPE, failure)
            span.set_status(StatusCode.ERROR, result.error)

    def cancelled(self, *, ended: bool) -> None:
        """Say the run was cancelled: `eve.turn.status` `cancelled` when it ended the turn, else `interrupted`.

        A turn left running (cancelled mid-settle, to be finished by the next run) is `interrupted`.
        The span's status stays unset: a cancellation is asked for, not a failure of the agent.
        """
        span = self._span
        if span is None:
            return
        span.set_attribute(a.TURN_STATUS, "cancelled" if ended else "interrupted")


@contextlib.contextmanager
def _recorded(span: Span) -> Iterator[None]:
    """An exception leaving `span` is recorded on it (an `exception` event, `error.type`, status ERROR).

    A cancellation is not: like gRPC's `CANCELLED` on a server span, a stop someone asked for is
    not an error of the operation (the turn's span says `eve.turn.status` `cancelled`).
    """
    try:
        yield
    except anyio.get_cancelled_exc_class():
        raise
    except BaseException as exc:
        from opentelemetry.trace import StatusCode

        span.record_exception(exc)
        span.set_attribute(a.ERROR_TYPE, type(exc).__qualname__)
        span.set_status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}")
        raise


@contextlib.contextmanager
def _current(
    traced: Tracer, name: str, kind: SpanKind, attributes: a.Attributes, links: Sequence[Link] = ()
) -> Iterator[Span]:
    """A span started as the current one whose exceptions `_recorded` records (the SDK's own recording is off)."""
    with (
        traced.start_as_current_span(
            name,
            kind=kind,
            attributes=attributes,
            links=links,
            record_exception=False,
            set_status_on_exception=False,
        ) as span,
        _recorded(span),
    ):
        yield span


_UNTRACED = contextlib.nullcontext(TurnTrace(None))


def turn_span(
    agent_name: str, model: Model, record: SessionRecord, *, cancelling: bool = False
) -> AbstractContextManager[TurnTrace]:
    """The `invoke_agent {agent_name}` span of one run of `record`'s turn, current while it runs.

    A run that starts on a parked step (answers accepted, a deadline passed, a message dismissed
    it, or `cancelling` it) links to the span that parked it and adds an `eve.resume` event.
    """
    traced = tracer()
    if traced is None:
        return _UNTRACED
    return _turn(traced, agent_name, model, record, cancelling)


@contextlib.contextmanager
def _turn(
    traced: Tracer, agent_name: str, model: Model, record: SessionRecord, cancelling: bool
) -> Iterator[TurnTrace]:
    from opentelemetry.trace import SpanKind

    provider, model_id = a.model_identity(model)
    attributes: a.Attributes = {
        a.OPERATION: "invoke_agent",
        a.PROVIDER: provider,
        a.AGENT_NAME: agent_name,
        a.CONVERSATION: record.id,
        a.REQUEST_MODEL: model_id,
    }
    if record.turn is not None:
        attributes[a.TURN_ID] = record.turn.turn_id
    pending = record.pending
    links = _links(pending) if pending is not None else []
    name = f"invoke_agent {agent_name}"
    with _current(traced, name, SpanKind.INTERNAL, attributes, links) as span:
        if pending is not None:
            unanswered = "cancelled" if cancelling else "ignored"
            resumed = a.resume_attributes(pending, dismissed=record.queued is not None, unanswered=unanswered)
            span.add_event(a.RESUME_EVENT, resumed)
        yield TurnTrace(span)


def _links(pending: PendingStep) -> list[Link]:
    """A link to the span that parked `pending`, when its trace context was stored and is valid."""
    if pending.trace_context is None:
        return []
    from opentelemetry.trace import Link, get_current_span
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    parked_in = get_current_span(TraceContextTextMapPropagator().extract(pending.trace_context)).get_span_context()
    if not parked_in.is_valid:
        return []
    return [Link(parked_in, {"eve.link.type": "parked", a.TURN_ID: pending.turn_id, a.STEP_INDEX: pending.step_index})]


def mark_parked(pending: PendingStep) -> PendingStep:
    """`pending` with the current span's trace context, after an `eve.park` event on that span.

    Unchanged without a tracer, or when no span is current.
    """
    if tracer() is None:
        return pending
    from opentelemetry.trace import get_current_span
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    span = get_current_span()
    if not span.get_span_context().is_valid:
        return pending
    span.add_event(a.PARK_EVENT, a.park_attributes(pending))
    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)
    return pending.model_copy(update={"trace_context": carrier})


async def request_model(model: Model, request: ModelRequest, session_id: str) -> ModelResponse:
    """`model.request(request)` inside a `chat {model}` span (a CLIENT span; the model's failure is recorded).

    Raises:
        Exception: Whatever the model raised.
    """
    traced = tracer()
    if traced is None:
        return await model.request(request)
    from opentelemetry.trace import SpanKind

    provider, model_id = a.model_identity(model)
    attributes: a.Attributes = {
        a.OPERATION: "chat",
        a.PROVIDER: provider,
        a.REQUEST_MODEL: model_id,
        a.CONVERSATION: session_id,
    }
    with _current(traced, f"chat {model_id}", SpanKind.CLIENT, attributes) as span:
        response = await model.request(request)
        span.set_attributes(a.response_attributes(response))
        return response


def tool_span(session_id: str, call_id: str, tool_name: str, description: str) -> AbstractContextManager[object]:
    """The `execute_tool {tool_name}` span of one call's resolvers and executor, current while they run.

    An exception leaving it is recorded, with `error.type` (its class) and status ERROR; a cancellation is not.
    """
    traced = tracer()
    if traced is None:
        return _NOTHING
    return _tool(traced, session_id, call_id, tool_name, description)


@contextlib.contextmanager
def _tool(traced: Tracer, session_id: str, call_id: str, tool_name: str, description: str) -> Iterator[object]:
    from opentelemetry.trace import SpanKind

    attributes: a.Attributes = {
        a.OPERATION: "execute_tool",
        a.TOOL_NAME: tool_name,
        a.TOOL_CALL_ID: call_id,
        a.TOOL_TYPE: "function",
        a.CONVERSATION: session_id,
    }
    if description:
        attributes[a.TOOL_DESCRIPTION] = description
    with _current(traced, f"execute_tool {tool_name}", SpanKind.INTERNAL, attributes) as span:
        yield span
