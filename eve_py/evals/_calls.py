"""The tool calls of a session, rebuilt from its events (and its conversation, when readable).

Executable tools show up as `actions.requested` and `action.result` events. A call that parks
shows up in `input.requested`; a client-resolved call (`ask_question`, `define_client_tool`)
gets no `action.result` at all: its one result is the person's answer, which the conversation
holds. When the conversation cannot be read (a session behind `--url`), that result is
rebuilt from `input.requested` and `input.resolved` with the same rule the runtime uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from eve_py._json import JsonObject, JsonValue
from eve_py.parking._answers import client_result
from eve_py.protocol import ActionResult, ActionsRequested, AnyEvent, InputRequested, InputResolved
from eve_py.protocol.messages import AssistantMessage, Message, ToolMessage
from eve_py.protocol.requests import InputRequest, RequestKind

__all__ = ("ToolCall", "collect_tool_calls")


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """One tool call the model made in a session, and what came of it."""

    call_id: str
    tool_name: str
    input: JsonObject
    output: JsonValue | None
    """The result: the executor's output (`action.result`), else the conversation's result, else
    (for a client-resolved call seen only through events) the answer turned into its result.
    `None` while the call has no result yet."""
    is_error: bool
    has_result: bool
    result_count: int
    """How many results the call has: in the conversation when it is readable (so the calls of a
    step that is still parked count 0), otherwise in the events."""
    request_kind: RequestKind | None
    """How the call parked, if it did: `question`, `client-tool`, `tool-approval` or `elicitation`."""


@dataclass
class _Builder:
    call_id: str
    tool_name: str
    input: JsonObject
    request_kind: RequestKind | None = None
    executed: list[tuple[JsonValue, bool]] = field(default_factory=list)
    answered: list[JsonValue] = field(default_factory=list)


def collect_tool_calls(events: Sequence[AnyEvent], conversation: Sequence[Message] | None = None) -> list[ToolCall]:
    """Every tool call of one session: in the model's order where the conversation is given (the
    calls of a parked step, and all calls without it, in the order of their events).

    Args:
        events: The session's events, oldest first.
        conversation: The session's messages, when readable; makes `result_count` and the
            results of client-resolved calls exact instead of rebuilt from events.
    """
    calls: dict[str, _Builder] = {}

    def ensure(call_id: str, tool_name: str, tool_input: JsonObject) -> _Builder:
        builder = calls.get(call_id)
        if builder is None:
            builder = calls[call_id] = _Builder(call_id, tool_name, tool_input)
        elif not builder.input and tool_input:
            builder.input = tool_input
        return builder

    open_client: dict[str, InputRequest] = {}
    for event in events:
        if isinstance(event, ActionsRequested):
            for action in event.data.actions:
                ensure(action.call_id, action.tool_name, action.input)
        elif isinstance(event, InputRequested):
            for request in event.data.input_requests():
                builder = ensure(request.action.call_id, request.action.tool_name, request.action.input)
                builder.request_kind = request.kind
                if request.kind in ("question", "client-tool"):
                    open_client[request.request_id] = request
        elif isinstance(event, ActionResult):
            done = event.data.result
            builder = ensure(done.call_id, done.tool_name, {})
            builder.executed.append((done.output, done.is_error is True))
        elif isinstance(event, InputResolved):
            for resolution in event.data.resolutions:
                asked = open_client.pop(resolution.request_id, None)
                # An expired call's one result is the INPUT_EXPIRED `action.result` it already has.
                if asked is not None and resolution.outcome != "expired":
                    answered = resolution.response if resolution.outcome == "answered" else None
                    calls[asked.action.call_id].answered.append(client_result(asked, answered))

    in_conversation: dict[str, list[tuple[JsonValue, bool]]] = {}
    order: dict[str, int] = {}
    if conversation is not None:
        for message in conversation:
            if isinstance(message, AssistantMessage):
                for call in message.tool_calls:
                    ensure(call.tool_call_id, call.tool_name, call.input)
                    order.setdefault(call.tool_call_id, len(order))
            elif isinstance(message, ToolMessage):
                for part in message.content:
                    in_conversation.setdefault(part.tool_call_id, []).append((part.output, part.is_error))

    result = []
    # The model's order where the conversation shows it; the calls of a parked step after them.
    ranked = sorted(calls.values(), key=lambda builder: order.get(builder.call_id, len(order)))
    for builder in ranked:
        results: list[tuple[JsonValue, bool]] = builder.executed or in_conversation.get(builder.call_id, [])
        if not results:
            results = [(answer, False) for answer in builder.answered]
        count = (
            len(in_conversation.get(builder.call_id, []))
            if conversation is not None
            else len(builder.executed) + len(builder.answered)
        )
        output, is_error = results[-1] if results else (None, False)
        result.append(
            ToolCall(
                call_id=builder.call_id,
                tool_name=builder.tool_name,
                input=builder.input,
                output=output,
                is_error=is_error,
                has_result=bool(results),
                result_count=count,
                request_kind=builder.request_kind,
            )
        )
    return result


def _objects(value: JsonValue | None) -> list[JsonObject]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _object(value: JsonValue | None) -> JsonObject:
    return value if isinstance(value, dict) else {}
