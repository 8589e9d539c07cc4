"""What each event type carries: one pydantic model per `data` payload, named as eve 0.80.1 names it.

Every payload's JSON form is the `data` of the eve stream event of the same type (see eve's
`protocol/message.d.ts`). Payloads keep fields they do not know (`extra="allow"`), so an event
from a newer eve server, or one that carries eve-py's extensions, survives a read and a write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Self, TypeAlias

from pydantic import ConfigDict, Field, SerializationInfo, SerializerFunctionWrapHandler, model_serializer

from eve_py._camel import CamelModel
from eve_py._json import JsonObject, JsonValue
from eve_py.protocol.requests import (
    EveInputRequest,
    EveRequestKind,
    InputRequest,
    InputResponse,
    RequestExtension,
    ToolCallAction,
)

__all__ = (
    "ActionInputAppendedData",
    "ActionLogData",
    "ActionProgressData",
    "ActionResultData",
    "ActionResultError",
    "ActionResultStatus",
    "ActionsRequestedData",
    "ContextClearedData",
    "DeliveryIgnoredData",
    "EventData",
    "FinishReason",
    "InputRequestedData",
    "InputApprovedData",
    "InputResolution",
    "InputResolvedData",
    "MessageAppendedData",
    "MessageCompletedData",
    "MessageReceivedData",
    "ReceivedPart",
    "ResolutionOutcome",
    "ResultCompletedData",
    "RuntimeIdentity",
    "SessionCompletedData",
    "SessionFailedData",
    "SessionStartedData",
    "SessionWaitingData",
    "StepCompletedData",
    "StepFailedData",
    "StepStartedData",
    "ToolResultAction",
    "TurnCancelledData",
    "TurnCompletedData",
    "TurnFailedData",
    "TurnStartedData",
    "TurnWaitingData",
    "Usage",
)

FinishReason: TypeAlias = Literal["content-filter", "error", "length", "other", "stop", "tool-calls"]
"""Why a model step ended; `tool-calls` is the only one after which the turn goes on."""

ActionResultStatus: TypeAlias = Literal["completed", "failed", "rejected"]
"""`rejected`: a person (or a policy) denied the call at an approval; it never ran."""

ResolutionOutcome: TypeAlias = Literal["answered", "approved", "cancelled", "denied", "expired", "ignored", "invalid"]
"""How one input request ended (`expired`, eve-py's: its deadline passed unanswered)."""


class EventData(CamelModel):
    """Base of every payload: camelCase JSON, and fields it does not declare kept as they came."""

    model_config = ConfigDict(extra="allow")


class _TurnScoped(EventData):
    sequence: int
    """The turn's number in the session, from 0 (eve's `turn_0` is sequence 0)."""
    turn_id: str


class _StepScoped(_TurnScoped):
    step_index: int
    """The model step's number in its turn, from 0."""


class RuntimeIdentity(EventData):
    """Who serves the session (on `session.started`)."""

    agent_id: str
    agent_name: str | None = None
    eve_version: str
    """The serving runtime's version: `eve-py/<version>`."""


class SessionStartedData(EventData):
    """`session.started`."""

    runtime: RuntimeIdentity | None = None


class TurnStartedData(_TurnScoped):
    """`turn.started`."""


class ReceivedPart(EventData):
    """One part of a received message (eve-py receives text parts only)."""

    type: Literal["text"] = "text"
    text: str


class MessageReceivedData(_TurnScoped):
    """`message.received`: the person's message as flattened text, and its parts."""

    message: str
    parts: list[ReceivedPart] | None = None


class StepStartedData(_StepScoped):
    """`step.started`: one model call begins."""

    model_id: str


class Usage(EventData):
    """Token counts a provider reported."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


class StepCompletedData(_StepScoped):
    """`step.completed`: the model call returned."""

    finish_reason: FinishReason
    usage: Usage | None = None


class StepFailedData(_StepScoped):
    """`step.failed`: the model call (or the step around it) failed."""

    code: str
    message: str
    details: JsonObject | None = None


class MessageAppendedData(_StepScoped):
    """`message.appended`: a piece of the assistant's text as it streams (only the new text)."""

    message_delta: str


class ActionInputAppendedData(_StepScoped):
    """`action.input.appended`: a piece of a tool call's argument text as it streams."""

    call_id: str
    input_text_delta: str
    tool_name: str


class MessageCompletedData(_StepScoped):
    """`message.completed`: one step's whole assistant text."""

    finish_reason: FinishReason
    message: str


class ResultCompletedData(_StepScoped):
    """`result.completed`: the turn's structured result, valid against the requested `outputSchema`."""

    result: JsonValue


class ActionsRequestedData(_StepScoped):
    """`actions.requested`: the step's calls to tools that run on the server."""

    actions: list[ToolCallAction]


class ToolResultAction(EventData):
    """The result of one tool call (`action.result`'s `result`)."""

    kind: Literal["tool-result"] = "tool-result"
    call_id: str
    tool_name: str
    output: JsonValue
    """The full output, before the tool's `to_model_output`; an error's text when `is_error`."""
    is_error: bool | None = None
    error_name: str | None = None

    @model_serializer(mode="wrap")
    def _keep_null_output(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        # A tool may return None: its JSON `null` output is a value, not an unset field.
        data: dict[str, Any] = handler(self)
        data.setdefault("output", None)
        return data


class ActionResultError(EventData):
    """Why a call failed or was rejected, without parsing its output."""

    code: str
    message: str
    name: str | None = None


class ActionResultData(_StepScoped):
    """`action.result`: one call's result."""

    result: ToolResultAction
    status: ActionResultStatus
    error: ActionResultError | None = None


class ActionProgressData(_StepScoped):
    """`action.progress` (eve-py's): how far a running call has got (`ctx.report_progress`)."""

    tool_call_id: str
    tool_name: str
    progress: float
    """How much is done; it rises with every report."""
    total: float | None = None
    """How much there is in all, when the tool knows."""
    message: str | None = None
    """What is happening now, for a person."""


class ActionLogData(_StepScoped):
    """`action.log` (eve-py's): one log entry of a running call (`ctx.log`)."""

    tool_call_id: str
    tool_name: str
    level: str
    """A syslog severity: `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency`."""
    data: JsonValue
    """The entry: text, or any JSON value."""
    logger: str | None = None
    """The name of what logged, when the tool gave one."""


class InputRequestedData(_StepScoped):
    """`input.requested`: one parked batch.

    `requests` are exactly eve's `InputRequest` shape, so eve's `isInputRequest` accepts each.
    What eve-py asks beyond it (a client tool's or elicitation's answer `schema`, the `form`
    display, the precise kind) rides in `extensions`, keyed by request id; a plain eve client
    ignores it and answers with `optionId`/`text`.
    """

    requests: list[EveInputRequest]
    extensions: dict[str, RequestExtension] | None = None

    @classmethod
    def of(cls, requests: Sequence[InputRequest], *, sequence: int, turn_id: str, step_index: int) -> Self:
        """The payload for a batch of eve-py requests: each projected to eve's shape, the rest as extensions."""
        projected = [r.to_eve() for r in requests]
        extensions = {
            r.request_id: ext
            for r, eve in zip(requests, projected, strict=True)
            if (ext := r.extension(eve)) is not None
        }
        return cls(
            sequence=sequence,
            turn_id=turn_id,
            step_index=step_index,
            requests=projected,
            extensions=extensions or None,
        )

    def input_requests(self) -> list[InputRequest]:
        """The batch as eve-py's requests again (eve's projection with its extension merged back)."""
        extensions = self.extensions or {}
        return [InputRequest.from_eve(r, extensions.get(r.request_id)) for r in self.requests]


class InputResolution(EventData):
    """How one request of a batch ended, with the accepted answer when there was one."""

    kind: EveRequestKind
    outcome: ResolutionOutcome
    request_id: str
    response: InputResponse | None = None
    answered_by: str | None = None
    """Who answered (an eve-py extension): the API token's name, `link`, or `respond(by=...)`."""
    approved_by: list[str] | None = None
    """An approval that needed several approvers: each of them, in the order they approved (eve-py's)."""


class InputApprovedData(_StepScoped):
    """`input.approved` (eve-py's): one approver approved a request that needs more; it stays open."""

    request_id: str
    approved_by: str
    """Who approved now."""
    approvals: list[str]
    """Every approver so far, in order (this one last)."""
    required: int
    """How many approvals the call needs before it runs."""
    delivery_id: str | None = None
    """The delivery this approval came as, when its sender named one (eve 1.0's wire)."""


class InputResolvedData(_StepScoped):
    """`input.resolved`: answers accepted (or requests withdrawn) for a parked batch."""

    resolutions: list[InputResolution]
    delivery_id: str | None = None
    """The delivery these answers came as, when its sender named it (eve 1.0's `idempotencyKey`
    names one); None: eve 1.0's wire derives it from this event's id."""


class TurnWaitingData(_TurnScoped):
    """`turn.waiting`: the open turn parked; `on: "input"` while a person must answer."""

    on: Literal["input", "tasks"] = "input"


class TurnCompletedData(_TurnScoped):
    """`turn.completed`."""


class TurnFailedData(_TurnScoped):
    """`turn.failed`; `terminal` is true only when `session.failed` follows."""

    code: str
    message: str
    details: JsonObject | None = None
    terminal: bool = False


class TurnCancelledData(_TurnScoped):
    """`turn.cancelled`: always followed by `session.waiting`."""


class ContextClearedData(_TurnScoped):
    """`context.cleared`: the conversation history was removed (`POST .../clear`)."""

    session_id: str


class DeliveryIgnoredData(EventData):
    """`delivery.ignored` (eve-py's): a delivery that found nothing to act on, kept so it settles
    (eve 1.0's `delivery.settled` `ignored`): a cancel with no turn to stop or naming another turn,
    or answers to requests that were answered, withdrawn or settled before (stale)."""

    delivery_id: str
    source: Literal["cancel", "answers"]
    reason: str
    answers: list[InputResponse] | None = None
    """The stale answers, as sent (for `source="answers"`)."""


class SessionWaitingData(EventData):
    """`session.waiting`: the session is ready for its next message."""

    continuation_token: str = ""
    wait: Literal["next-user-message"] = "next-user-message"
    usage: Usage | None = None


class SessionFailedData(EventData):
    """`session.failed`: the session cannot go on."""

    code: str
    message: str
    session_id: str
    details: JsonObject | None = None


class SessionCompletedData(EventData):
    """`session.completed`: the session ended for good (`POST .../reset`)."""

    usage: Usage | None = Field(default=None)
