"""Where answers are accepted: a person's answers to the parked batch, checked before anything is written.

`TurnUnit.accept` (`eve_py.harness._unit`) calls `check_answers` and writes what it returns with
`accepted_events`, in one commit. The decision is `parking._accept.accept_answers` (pure: the
batch with the answers, or a refusal); this module adds the refusals that need the session
(an answer that comes too late, its call already has its result; a session not waiting; who
may approve). Nothing is written unless every answer passes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from eve_py.errors import (
    InputResponseError,
    RequestAlreadyAnsweredError,
    RequestExpiredError,
    SessionNotWaitingError,
)
from eve_py.harness._execute import approval_context
from eve_py.parking._accept import Acceptance, accept_answers, answered_before
from eve_py.parking._expire import INPUT_EXPIRED, expire_due
from eve_py.protocol import Event
from eve_py.protocol.messages import Message, ToolMessage, ToolResultPart
from eve_py.protocol.payloads import InputApprovedData, InputResolvedData, TurnWaitingData
from eve_py.protocol.pending import PendingStep
from eve_py.protocol.requests import InputRequest, InputResponse
from eve_py.protocol.turns import TurnState
from eve_py.sessions import SessionRecord
from eve_py.tools import ResolvedTool

__all__ = ("accepted_events", "check_answers", "may_approve", "needs_history")


def needs_history(record: SessionRecord, responses: Sequence[InputResponse]) -> bool:
    """Whether checking `responses` must read the conversation: one names a request the batch does not hold.

    Only a refusal's path reads it (is the request's call already answered, or expired?), so the
    answer's path never does.
    """
    pending = record.pending
    parked = {r.request_id for r in pending.requests} if pending is not None else set()
    return any(not answered_before(pending, r.request_id) and r.request_id not in parked for r in responses)


def check_answers(
    record: SessionRecord,
    responses: Sequence[InputResponse],
    *,
    history: Sequence[Message] | None,
    tools: Mapping[str, ResolvedTool],
    settle: bool,
    by: str,
    now: float,
) -> Acceptance:
    """Check `responses` against `record`'s parked batch: what accepting them does, or the refusal.

    Pure: nothing is written, so a refused answer leaves the session as it was, an expired
    request's included.

    Args:
        record: The session as the unit of work holds it.
        responses: The answers, already read into `InputResponse`s.
        history: The conversation, when `needs_history` said it is needed (else None).
        tools: The turn's tools (an approval's `approvers`).
        settle: False keeps the batch open even when every approval is answered.
        by: Who answers (kept with each answer).
        now: Unix time, seconds (which requests are past their deadline).

    Raises:
        SessionNotWaitingError: The session has no open input request.
        UnknownRequestError: A `requestId` is not in the parked batch.
        RequestAlreadyAnsweredError: A `requestId` was answered before (or withdrawn), or twice here.
        RequestExpiredError: A request's deadline passed (now, or earlier: it resolved as expired).
        NotAnApproverError: `by` may not answer one of the approvals.
        InvalidAnswerError: An answer does not fit its request.
        InputResponseError: No response, or `settle=False` with no request left open.
    """
    pending = record.pending
    if not responses:
        raise InputResponseError("respond() needs at least one input response", request_id="")
    running = record.status == "running"
    running_hint = " (a turn is running, or its worker died: call resume())" if running else ""
    http_hint = " (a turn is running; one whose worker died is taken over once its lease expires)" if running else ""
    parked = {r.request_id for r in pending.requests} if pending is not None else set()
    for response in responses:
        earlier = answered_before(pending, response.request_id)
        if not earlier and response.request_id not in parked and history is not None:
            result = _result_in(history, response.request_id)
            if result is not None and _expired(result):
                raise RequestExpiredError(
                    f"Request {response.request_id!r} expired before this answer; it resolved as expired.",
                    request_id=response.request_id,
                )
            earlier = result is not None
        if earlier:
            # Its call has its one result: answered, or settled without an answer (dismissed
            # by a message, cancelled with its turn).
            raise RequestAlreadyAnsweredError(
                f"Request {response.request_id!r} was already answered or withdrawn{running_hint}.",
                request_id=response.request_id,
                http_message=f"Request {response.request_id!r} was already answered or withdrawn{http_hint}.",
            )
    if record.status != "waiting" or pending is None or record.turn is None:
        raise SessionNotWaitingError(
            f"Session {record.id!r} is not waiting for input (status {record.status!r}){running_hint}.",
            status=record.status,
            http_message=f"Session {record.id!r} is not waiting for input (status {record.status!r}){http_hint}.",
        )

    def approver(request: InputRequest, name: str) -> bool:
        return may_approve(tools, record, request, name)

    expired = expire_due(pending, now)
    return accept_answers(pending, responses, settle=settle, by=by, expired=expired, may_approve=approver)


def accepted_events(
    turn: TurnState, pending: PendingStep, accepted: Acceptance, delivery_id: str | None
) -> list[Event]:
    """`input.resolved` (when a request ended), `input.approved` per approval short of its quorum, and
    `turn.waiting` when the batch stays open."""
    coords = {"sequence": turn.sequence, "turn_id": turn.turn_id, "step_index": pending.step_index}
    events: list[Event] = []
    if accepted.resolutions:
        resolved = InputResolvedData(**coords, resolutions=accepted.resolutions, delivery_id=delivery_id)
        events.append(turn.stamp(resolved))
    for request in pending.requests:
        if (names := accepted.approvals.get(request.request_id)) is not None:
            required = request.approvals_required or 1
            approved = InputApprovedData(
                **coords,
                request_id=request.request_id,
                approved_by=names[-1],
                approvals=names,
                required=required,
                delivery_id=delivery_id,
            )
            events.append(turn.stamp(approved))
    if not accepted.settled:  # the rest of the batch is still awaited: the turn parks again
        events.append(turn.stamp(TurnWaitingData(sequence=turn.sequence, turn_id=turn.turn_id)))
    return events


def may_approve(tools: Mapping[str, ResolvedTool], record: SessionRecord, request: InputRequest, by: str) -> bool:
    """Whether `by` may answer `request` (an approval), by its tool's `approvers`; a tool gone since: anyone."""
    tool = tools.get(request.action.tool_name)
    if tool is None:
        return True
    action = request.action
    remembered = action.tool_name in record.approved_tools
    context = approval_context(record.id, action.call_id, action.tool_name, action.input, remembered=remembered)
    return tool.may_approve(context, by)


def _result_in(messages: Sequence[Message], request_id: str) -> ToolResultPart | None:
    """The tool result for this call id in the conversation, if there is one."""
    for message in messages:
        if isinstance(message, ToolMessage):
            for part in message.content:
                if part.tool_call_id == request_id:
                    return part
    return None


def _expired(result: ToolResultPart) -> bool:
    """Whether the call's result is its request's expiry (`parking._expire.expired_result`)."""
    output = result.output
    return result.is_error is True and isinstance(output, str) and output.startswith(f"{INPUT_EXPIRED}:")
