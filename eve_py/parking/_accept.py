"""Where an answer is accepted: a parked batch plus people's answers → the batch with them, or a refusal.

A pure function of the parked step and the responses: nothing is written here, so a refused
answer leaves the session exactly as it was. The harness commits what `accept_answers` returns
(the answers, and whether the batch is now settled) in one write.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from eve_py.errors import InputResponseError, RequestAlreadyAnsweredError, RequestExpiredError, UnknownRequestError
from eve_py.parking import _resolutions as resolutions
from eve_py.parking._answers import check_response
from eve_py.protocol.payloads import InputResolution
from eve_py.protocol.pending import PendingStep
from eve_py.protocol.requests import InputResponse

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

    Returns:
        The batch with the answers (normalized: a bare option id for a typed picker becomes its
        value, free text matched to an option becomes the option id) and whether it settled.

    Raises:
        RequestAlreadyAnsweredError: A request was answered before, or twice in `responses`.
        RequestExpiredError: A request's deadline passed (it is in `expired`).
        UnknownRequestError: A request id is not in the batch.
        InvalidAnswerError: An answer does not fit its request (option, value, schema, format).
        InputResponseError: `settle=False` with nothing left open to settle the batch with later.
    """
    if expired is not None:
        pending = expired.pending
    by_id = {request.request_id: request for request in pending.requests}
    accepted: dict[str, InputResponse] = {}
    for response in responses:
        request_id = response.request_id
        if request_id in pending.expired:
            deadline = by_id[request_id].expires_at or ""
            raise RequestExpiredError(
                f"Request {request_id!r} expired at {deadline} before this answer; it resolved as expired.",
                request_id=request_id,
                expires_at=deadline,
            )
        if request_id in accepted or answered_before(pending, request_id):
            raise RequestAlreadyAnsweredError(f"Request {request_id!r} was already answered.", request_id=request_id)
        request = by_id.get(request_id)
        if request is None:
            open_ids = [r.request_id for r in pending.open_requests()]
            raise UnknownRequestError(
                f"Unknown request id {request_id!r}; the open requests are {open_ids}.", request_id=request_id
            )
        accepted[request_id] = check_response(request, response)
    answers = {**pending.answers, **accepted}
    updated = pending.with_answers(answers, {**pending.answered_by, **dict.fromkeys(accepted, by)})
    if not settle and not updated.open_requests():
        raise InputResponseError(
            "settle=False keeps a batch open for its other requests, but these answers leave none open; "
            "send them with settle=True",
            request_id=responses[0].request_id if responses else "",
        )
    settled = settle and pending.ready(answers)
    resolved = [*(expired.resolutions if expired else []), *resolutions.answered(pending.requests, accepted, by)]
    if settled:
        resolved += resolutions.unanswered(updated.open_requests())
    return Acceptance(pending=updated, settled=settled, resolutions=resolved)
