"""`PendingStep`: one model step whose calls are parked, stored in the session until answered.

Beside it: `QuestionRef` (which resolver question an `elicitation` request asks) and
`RecordedOutcome` (a person's answer to one, kept until the call has its result).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from eve_py._camel import CamelModel
from eve_py._json import JsonObject, JsonValue
from eve_py.protocol.messages import AssistantMessage, ToolResultPart
from eve_py.protocol.requests import InputRequest, InputResponse

__all__ = ("PendingStep", "QuestionRef", "RecordedOutcome")


class RecordedOutcome(CamelModel):
    """A person's answer to a resolver's question, kept in the session until the call ends."""

    action: Literal["accept", "decline", "cancel"]
    data: JsonValue | None = None
    """The accepted value as answered (JSON), None for decline/cancel."""
    q: str
    """The digest of the question it answered."""


class QuestionRef(CamelModel):
    """Which resolver question an `elicitation` request asks."""

    call_id: str
    key: str
    """The resolver's stable key."""
    digest: str
    """The question's digest; the recorded answer is pinned to it."""


class PendingStep(CamelModel):
    """A step with parked calls: the assistant's message, finished results, and the batch.

    The assistant message is kept here, not in the conversation, until every call of the step
    has its one result; then both are appended together. So the stored conversation is always
    correctly paired, whatever happens in between.
    """

    turn_id: str
    step_index: int
    assistant: AssistantMessage
    """The model's response for this step (its tool calls, in order)."""
    results: dict[str, ToolResultPart] = Field(default_factory=dict)
    """Results already known, by call id: executed siblings and rejected calls."""
    requests: list[InputRequest]
    """The batch: one request per parked call, in call order."""
    answers: dict[str, InputResponse] = Field(default_factory=dict)
    """Checked answers by request id, durable as soon as they are accepted."""
    answered_by: dict[str, str] = Field(default_factory=dict)
    """Who gave each answer, by request id (`respond(by=...)`; the HTTP API's token name)."""
    questions: dict[str, QuestionRef] = Field(default_factory=dict)
    """For each `elicitation` request of the batch, by request id: the question it asks."""
    approved_calls: list[str] = Field(default_factory=list)
    """Calls a person approved whose executor still waits on a resolver's question."""
    edited_inputs: dict[str, JsonObject] = Field(default_factory=dict)
    """Inputs a person set when approving, by call id: the call runs with them (its resolvers too)."""
    elicitations: dict[str, dict[str, RecordedOutcome]] = Field(default_factory=dict)
    """Answers to resolver questions, by call id then resolver key, kept until the call has its result."""
    answered: list[str] = Field(default_factory=list)
    """Request ids of this step's earlier, settled batches (a step parks again for dependent questions)."""
    approvals: dict[str, list[str]] = Field(default_factory=dict)
    """For approvals that need several approvers, by request id: who approved so far, in order."""
    expired: list[str] = Field(default_factory=list)
    """Request ids of this batch whose deadline passed unanswered: each call gets the expiry's error result."""
    reports: dict[str, int] | None = None
    """How many progress reports and log entries each parked call made before it parked, by call id
    (None: none did). They are in the log already: the call's run after the answer skips as many."""
    trace_context: dict[str, str] | None = None
    """The W3C trace context (`traceparent`, and `tracestate` when set) of the span that parked this
    batch, when a tracer provider was configured (`eve_py.tracing`): the resumed turn's span links to it."""

    def with_results(self, results: dict[str, ToolResultPart]) -> PendingStep:
        """This step with `results` as its known results."""
        return self.model_copy(update={"results": results})

    def with_answers(self, answers: dict[str, InputResponse], answered_by: dict[str, str]) -> PendingStep:
        """This step with `answers` as its accepted answers, given by `answered_by` (both by request id)."""
        return self.model_copy(update={"answers": answers, "answered_by": answered_by})

    def open_requests(self) -> list[InputRequest]:
        """Requests neither answered nor expired yet, in batch order."""
        return [r for r in self.requests if r.request_id not in self.answers and r.request_id not in self.expired]

    def ready(self, answers: dict[str, InputResponse]) -> bool:
        """Whether `answers` settle the batch: approvals must be answered (or expired), questions may be left out."""
        return all(
            r.request_id in answers or r.request_id in self.expired for r in self.requests if r.kind == "tool-approval"
        )

    def deadline(self) -> float | None:
        """The earliest deadline of an open request (Unix time, seconds), or None when none expires."""
        deadlines = [at for request in self.open_requests() if (at := request.deadline) is not None]
        return min(deadlines, default=None)

    def due(self, now: float) -> list[InputRequest]:
        """Open requests whose deadline is `now` or earlier, in batch order."""
        return [r for r in self.open_requests() if (at := r.deadline) is not None and at <= now]
