"""Where answers are accepted: a person's answers to the parked batch, checked, then written in one commit.

`Session.respond` calls `accept`. The decision is `parking._accept.accept_answers` (pure: the
batch with the answers, or a refusal); this module finds answers that come too late (their call
already has its result) and commits what was accepted with its `input.resolved` event. Nothing
is written unless every answer passes.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence

from eve_py._context import ApprovalContext
from eve_py._json import JsonSchema
from eve_py.errors import (
    InputResponseError,
    RequestAlreadyAnsweredError,
    RequestExpiredError,
    SessionNotWaitingError,
)
from eve_py.harness._commit import Writer
from eve_py.harness._loop import TurnDriver
from eve_py.parking._accept import Acceptance, accept_answers, answered_before
from eve_py.parking._expire import INPUT_EXPIRED, expire_due
from eve_py.protocol import Event
from eve_py.protocol.messages import Message, ToolMessage, ToolResultPart
from eve_py.protocol.payloads import InputApprovedData, InputResolvedData, TurnWaitingData
from eve_py.protocol.pending import PendingStep
from eve_py.protocol.requests import InputRequest, InputResponse
from eve_py.protocol.turns import TurnState
from eve_py.sessions._record import SessionRecord
from eve_py.tools._resolved import ResolvedTool

__all__ = ("accept", "commit_acceptance", "may_approve")


async def accept(
    driver: TurnDriver,
    record: SessionRecord,
    responses: Sequence[InputResponse],
    *,
    client_context: str | None,
    output_schema: JsonSchema | None,
    settle: bool,
    by: str,
    delivery_id: str | None = None,
) -> tuple[SessionRecord, bool]:
    """Check `responses` against `record`'s parked batch and store them with `input.resolved`.

    Args:
        driver: The call's driver (its writer commits).
        record: The session as just loaded.
        responses: The answers, already read into `InputResponse`s.
        client_context: Replaces the turn's client context when not None.
        output_schema: Replaces the turn's output schema when not None.
        settle: False keeps the batch open even when every approval is answered.
        by: Who answers (kept with each answer).
        delivery_id: The delivery the answers came as (kept with `input.resolved`), if named.

    Returns:
        The stored record, and whether the batch settled (its results are computed next; the
        write is durable only when it did not, since then it is the call's last).

    Raises:
        SessionNotWaitingError: The session has no open input request.
        UnknownRequestError: A `requestId` is not in the parked batch.
        RequestAlreadyAnsweredError: A `requestId` was answered before (or withdrawn), or twice here.
        RequestExpiredError: A request's deadline passed (now, or earlier: it resolved as expired).
        InvalidAnswerError: An answer does not fit its request.
        InputResponseError: No response, or `settle=False` with no request left open.
        SessionConflictError: Another writer answered the batch first; nothing written.
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
        # Only an id the batch does not hold sends us to the history (a refusal's path, so the
        # answer's path never reads the conversation).
        if not earlier and response.request_id not in parked:
            conversation = await driver.writer.conversation(record)
            result = _result_in(conversation.messages, response.request_id)
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
    expired = expire_due(pending, time.time())
    approver = functools.partial(may_approve, driver.tools, record)
    accepted = accept_answers(pending, responses, settle=settle, by=by, expired=expired, may_approve=approver)
    turn = record.turn.with_context(client_context, output_schema)
    stored = await commit_acceptance(driver.writer, record.with_turn(turn), accepted, delivery_id)
    return stored, accepted.settled


async def commit_acceptance(
    writer: Writer, record: SessionRecord, accepted: Acceptance, delivery_id: str | None = None
) -> SessionRecord:
    """Write what a parked batch accepted (answers, approvals, expiries) with its events, in one commit.

    Settled, the write need not be synced: the call's last write (its results) syncs it; not
    settled, this write is the call's last.

    Raises:
        SessionConflictError: Another writer changed the session since `record` was read.
    """
    assert record.turn is not None and record.pending is not None, "only a parked batch accepts anything"
    events = _accepted_events(record.turn, record.pending, accepted, delivery_id)
    answered = record.answer(accepted.pending, settled=accepted.settled)
    return await writer.commit(answered, events, durable=not accepted.settled)


def _accepted_events(
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
    context = ApprovalContext(
        session_id=record.id,
        call_id=action.call_id,
        tool_name=action.tool_name,
        tool_input=action.input,
        remembered=action.tool_name in record.approved_tools,
    )
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
