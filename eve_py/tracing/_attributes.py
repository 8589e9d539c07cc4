"""What eve-py's spans say: names and attributes after the OpenTelemetry GenAI semantic conventions.

Pure functions from eve-py's own values (a model, a response, a parked step) to span attributes;
`_spans` puts them on spans. The GenAI conventions name the turn (`invoke_agent`), each model call
(`chat`) and each tool call (`execute_tool`); `eve.*` attributes add what they have no name for:
parking a batch of calls on people and resuming it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from eve_py.models import Model, ModelResponse
from eve_py.parking._resolutions import answered
from eve_py.protocol.pending import PendingStep
from eve_py.protocol.turns import TurnResult

__all__ = (
    "PARK_EVENT",
    "RESUME_EVENT",
    "Attributes",
    "model_identity",
    "park_attributes",
    "response_attributes",
    "resume_attributes",
    "turn_failure",
)

Attributes = dict[str, str | bool | int | Sequence[str]]
"""Span or event attributes: OpenTelemetry's primitive values and string arrays."""

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
CONVERSATION = "gen_ai.conversation.id"
AGENT_NAME = "gen_ai.agent.name"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
FINISH_REASONS = "gen_ai.response.finish_reasons"
RESPONSE_ID = "gen_ai.response.id"
RESPONSE_MODEL = "gen_ai.response.model"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
ERROR_TYPE = "error.type"
TURN_ID = "eve.turn.id"
TURN_STATUS = "eve.turn.status"
STEP_INDEX = "eve.step.index"

PARK_EVENT = "eve.park"
"""The span event of a turn that parks calls on people (see `park_attributes`)."""
RESUME_EVENT = "eve.resume"
"""The span event of a turn that resumes a parked batch (see `resume_attributes`)."""


def model_identity(model: Model) -> tuple[str, str]:
    """`(gen_ai.provider.name, gen_ai.request.model)` for `model`.

    eve-py's HTTP models carry `provider` and `model`; another model's `name` is split at its first
    `:` (`"openai:gpt-4o"`), or names both when it has none (`"mock"`).
    """
    provider, model_id = getattr(model, "provider", None), getattr(model, "model", None)
    if isinstance(provider, str) and isinstance(model_id, str):
        return provider, model_id
    name = model.name
    head, colon, tail = name.partition(":")
    return (head, tail) if colon and head and tail else (name, name)


def response_attributes(response: ModelResponse) -> Attributes:
    """A `chat` span's response attributes: why the model stopped, its token usage, id and model, as reported.

    The finish reason is the provider's (`end_turn`, `tool_calls`, ...); a model that reports none
    (`MockModel`) gets `tool_calls` when it called tools, else `stop`.
    """
    reason = response.finish_reason or ("tool_calls" if response.tool_calls else "stop")
    attributes: Attributes = {FINISH_REASONS: [reason]}
    usage = response.usage
    if usage is not None and usage.input_tokens is not None:
        attributes[INPUT_TOKENS] = usage.input_tokens
    if usage is not None and usage.output_tokens is not None:
        attributes[OUTPUT_TOKENS] = usage.output_tokens
    if response.response_id is not None:
        attributes[RESPONSE_ID] = response.response_id
    if response.response_model is not None:
        attributes[RESPONSE_MODEL] = response.response_model
    return attributes


def park_attributes(pending: PendingStep) -> Attributes:
    """An `eve.park` event's attributes: the parked step and its requests, in batch order.

    `eve.request.ids`, `eve.request.kinds`, `eve.tool.call.ids` and `eve.tool.names` are parallel
    arrays, one entry per request (a call with several resolver questions appears once per question).
    """
    requests = pending.requests
    return {
        TURN_ID: pending.turn_id,
        STEP_INDEX: pending.step_index,
        "eve.request.ids": [r.request_id for r in requests],
        "eve.request.kinds": [r.kind for r in requests],
        "eve.tool.call.ids": [r.action.call_id for r in requests],
        "eve.tool.names": [r.action.tool_name for r in requests],
    }


def resume_attributes(pending: PendingStep, *, dismissed: bool, unanswered: str = "ignored") -> Attributes:
    """An `eve.resume` event's attributes: how each request of the settling batch ended, and who answered.

    Parallel arrays, one entry per request in batch order: `eve.request.ids`, `eve.request.outcomes`
    (`input.resolved`'s outcomes: `answered`, `approved`, `denied`, `cancelled`, `ignored`, `expired`)
    and `eve.request.answered_by` (the answer's `by`; empty when nobody answered). `eve.resume.dismissed`
    is true when a new message dismissed the batch. A request nobody answered is `expired` when its
    deadline passed, else `unanswered` (`ignored`; `cancelled` when the turn is cancelled).
    """
    outcomes: Mapping[str, str] = {r.request_id: r.outcome for r in answered(pending.requests, pending.answers)}
    ids = [r.request_id for r in pending.requests]
    return {
        TURN_ID: pending.turn_id,
        STEP_INDEX: pending.step_index,
        "eve.request.ids": ids,
        "eve.request.outcomes": [outcomes.get(rid, "expired" if rid in pending.expired else unanswered) for rid in ids],
        "eve.request.answered_by": [pending.answered_by.get(rid, "") for rid in ids],
        "eve.resume.dismissed": dismissed,
    }


def turn_failure(result: TurnResult) -> str | None:
    """The code a failed turn ended with (`turn.failed`'s `code`: `MODEL_ERROR`, `STEP_LIMIT`, ...), else None."""
    if result.status != "failed":
        return None
    for event in reversed(result.events):
        if event.type == "turn.failed":
            code = getattr(event.data, "code", None)
            return code if isinstance(code, str) else "_OTHER"
    return "_OTHER"
