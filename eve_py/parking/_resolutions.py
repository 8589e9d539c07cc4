"""How each request of a batch ended, as `input.resolved` reports it (eve's `InputResolution`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from eve_py.protocol.payloads import InputResolution, ResolutionOutcome
from eve_py.protocol.requests import InputRequest, InputResponse

__all__ = ("answered", "unanswered")


def _outcome(request: InputRequest, answer: InputResponse) -> ResolutionOutcome:
    if request.kind == "tool-approval":
        return "approved" if answer.option_id == "approve" else "denied"
    if answer.action == "cancel":
        return "cancelled"
    if answer.action == "decline":
        return "ignored"
    return "answered"


def answered(
    requests: Iterable[InputRequest],
    answers: Mapping[str, InputResponse],
    by: str | None = None,
    approvals: Mapping[str, list[str]] | None = None,
) -> list[InputResolution]:
    """One resolution per request of `requests` that `answers` (checked answers, by request id) answers, `by` whom.

    `approvals`: for approvals that needed several approvers, every approver (by request id).
    """
    return [
        InputResolution(
            kind=request.eve_kind,
            outcome=_outcome(request, answer),
            request_id=request.request_id,
            response=answer,
            answered_by=by,
            approved_by=(approvals or {}).get(request.request_id) if answer.option_id == "approve" else None,
        )
        for request in requests
        if (answer := answers.get(request.request_id)) is not None
    ]


def unanswered(requests: Iterable[InputRequest], outcome: ResolutionOutcome = "ignored") -> list[InputResolution]:
    """A resolution with `outcome` (no response) for each request: those a settling batch leaves out."""
    return [
        InputResolution(kind=request.eve_kind, outcome=outcome, request_id=request.request_id) for request in requests
    ]
