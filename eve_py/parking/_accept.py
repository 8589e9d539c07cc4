"""Where an answer is accepted: a parked batch plus people's answers → the batch with them, or a refusal.

A pure function of the parked step and the responses: nothing is written here, so a refused
answer leaves the session exactly as it was. The harness commits what `accept_answers` returns
(the answers, and whether the batch is now settled) in one write.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from eve_py.errors import (
    InputResponseError,
    NotAnApproverError,
    RequestAlreadyAnsweredError,
    RequestExpiredError,
    UnknownRequestError,
)
from eve_py.parking import _resolutions as resolutions
from eve_py.parking._answers import check_response
from eve_py.protocol.payloads import InputResolution
from eve_py.protocol.pending import PendingStep
from eve_py.protocol.requests import InputRequest, InputResponse

__all__ = ("Acceptance", "accept_answers", "answered_before")


@dataclass(frozen=True, slots=True)
class Acceptance:
    """What accepting a set of answers does to a parked batch."""

    pending: PendingStep
    """The batch with the new answers recorded."""
    settled: bool
    """Every required answer is in: the batch settles now (questions left out resolve as ignored)."""
    resolutions: list[InputResolution]
    """How each request ended, for `input.resolved`: the answered ones, and (when settled) the rest."""
    approvals: dict[str, list[str]] = field(default_factory=dict)
    """Approvals that do not complete their quorum yet, by request id: every approver so far (`input.approved`)."""


def answered_before(pending: PendingStep | None, request_id: str) -> bool:
    """Whether `request_id` was answered in this batch or an earlier batch of the same step."""
    return pending is not None and (request_id in pending.answers or request_id in pending.answered)


def accept_answers(
    pending: PendingStep,
    responses: Sequence[InputResponse],
    *,
    settle: bool = True,
    by: str = "local",
    expired: Acceptance | None = None,
    may_approve: Callable[[InputRequest, str], bool] | None = None,
) -> Acceptance:
    """Check every response against its request and record them all, or raise and record none.

    Args:
        pending: The parked step, its batch open.
        responses: The answers, each naming a request of the batch.
        settle: False: keep the batch open even when every approval is answered (a person who
            leaves midway keeps what they answered); it settles with a later call.
        by: Who answers: kept with each answer (`PendingStep.answered_by`, `input.resolved`).
        expired: The batch's requests whose deadline passed (`parking._expire.expire_due`): an
            answer to one is refused; the others' expiry is recorded with the answers.
        may_approve: Whether a principal may answer an approval (its tool's `approvers`); None: anyone.

    Returns:
        The batch with the answers (normalized: a bare option id for a typed picker becomes its
        value, free text matched to an option becomes the option id) and whether it settled.

    Raises:
        RequestAlreadyAnsweredError: A request was answered before, or twice in `responses`.
        RequestExpiredError: A request's deadline passed (it is in `expired`).
        NotAnApproverError: `by` may not answer one of the approvals.
        UnknownRequestError: A request id is not in the batch.
        InvalidAnswerError: An answer does not fit its request (option, value, schema, format).
        InputResponseError: `settle=False` with nothing left open to settle the batch with later.
    """
    if expired is not None:
        pending = expired.pending
    by_id = {request.request_id: request for request in pending.requests}
    accepted: dict[str, InputResponse] = {}
    approvals: dict[str, list[str]] = {}
    for response in responses:
        request_id = response.request_id
        if request_id in accepted or request_id in approvals:
            raise RequestAlreadyAnsweredError(
                f"Request {request_id!r} is answered twice in these answers: send one answer per request.",
                request_id=request_id,
            )
        request = _open_request(pending, by_id, request_id)
        checked = check_response(request, response)
        if request.kind == "tool-approval" and may_approve is not None and not may_approve(request, by):
            raise NotAnApproverError(
                f"{by!r} may not answer request {request_id!r}: the tool {request.action.tool_name!r} takes "
                f"approvals from {', '.join(request.approvers) if request.approvers else 'its approvers'} only.",
                request_id=request_id,
            )
        so_far = _approvals(pending, request, checked, by)
        if so_far is None or len(so_far) >= (request.approvals_required or 1):
            accepted[request_id] = checked
        if so_far is not None:
            approvals[request_id] = so_far
    pending = pending.model_copy(update={"approvals": {**pending.approvals, **approvals}})
    answers = {**pending.answers, **accepted}
    updated = pending.with_answers(answers, {**pending.answered_by, **dict.fromkeys(accepted, by)})
    if not settle and not updated.open_requests():
        raise InputResponseError(
            "settle=False keeps a batch open for its other requests, but these answers leave none open; "
            "send them with settle=True",
            request_id=responses[0].request_id if responses else "",
        )
    settled = settle and pending.ready(answers)
    answered = resolutions.answered(pending.requests, accepted, by, approvals)
    resolved = [*(expired.resolutions if expired else []), *answered]
    if settled:
        resolved += resolutions.unanswered(updated.open_requests())
    partial = {rid: names for rid, names in approvals.items() if rid not in accepted}
    return Acceptance(pending=updated, settled=settled, resolutions=resolved, approvals=partial)


def _open_request(pending: PendingStep, by_id: dict[str, InputRequest], request_id: str) -> InputRequest:
    """The batch's request `request_id`, if it is still open.

    Raises:
        RequestExpiredError: Its deadline passed.
        RequestAlreadyAnsweredError: It was answered before.
        UnknownRequestError: The batch has no such request.
    """
    if request_id in pending.expired:
        deadline = by_id[request_id].expires_at or ""
        raise RequestExpiredError(
            f"Request {request_id!r} expired at {deadline} before this answer; it resolved as expired.",
            request_id=request_id,
            expires_at=deadline,
        )
    if answered_before(pending, request_id):
        raise RequestAlreadyAnsweredError(f"Request {request_id!r} was already answered.", request_id=request_id)
    request = by_id.get(request_id)
    if request is None:
        open_ids = [r.request_id for r in pending.open_requests()]
        raise UnknownRequestError(
            f"Unknown request id {request_id!r}; the open requests are {open_ids}.", request_id=request_id
        )
    return request


def _approvals(pending: PendingStep, request: InputRequest, answer: InputResponse, by: str) -> list[str] | None:
    """Every approver so far with this answer, for an approval that needs several; None for any other answer.

    Raises:
        RequestAlreadyAnsweredError: `by` approved this request already.
    """
    if request.approvals_required is None or answer.option_id != "approve":
        return None
    so_far = pending.approvals.get(request.request_id, [])
    if by in so_far:
        raise RequestAlreadyAnsweredError(
            f"{by!r} already approved request {request.request_id!r}; it waits for "
            f"{request.approvals_required - len(so_far)} more approval(s) from other approvers.",
            request_id=request.request_id,
        )
    return [*so_far, by]
