"""Where a request expires: deadlines set on a batch as it parks, and its due requests ended as `expired`.

Pure functions of the batch and the time. A request gets its deadline (`expires_at`) when its
batch opens: its tool's `expires_after`, else the agent's `input_expires_after`, else none.
Once the deadline passes unanswered, `expire_due` ends the request as `expired`; when that
leaves nothing open the batch settles, and each expired request's call gets exactly one error
result (`expired_result`, with `action.result` code `INPUT_EXPIRED`). Nothing here writes: the
harness (`eve_py.harness._expire`) commits what these return.
"""

from __future__ import annotations

from collections.abc import Mapping

from eve_py._json import JsonValue
from eve_py.parking import _resolutions as resolutions
from eve_py.parking._accept import Acceptance
from eve_py.parking._results import action_result, error_result
from eve_py.protocol import Event
from eve_py.protocol.messages import ToolCallPart, ToolResultPart
from eve_py.protocol.pending import PendingStep
from eve_py.protocol.requests import InputRequest, deadline_iso
from eve_py.protocol.turns import TurnState
from eve_py.tools import ResolvedTool

__all__ = ("INPUT_EXPIRED", "expire_due", "expired_event", "expired_result", "with_deadlines")

INPUT_EXPIRED = "INPUT_EXPIRED"
"""The error code of a call whose request expired (`action.result`'s `error.code`)."""


def with_deadlines(
    pending: PendingStep, tools: Mapping[str, ResolvedTool], default_s: float | None, now: float
) -> PendingStep:
    """The batch with a deadline on each open request that has none and whose tool (or agent) sets one.

    Args:
        pending: The batch as it opens.
        tools: The agent's tools by name (`expires_after_s`).
        default_s: The agent's `input_expires_after`, in seconds (None: no default).
        now: Unix time, seconds: when the batch opens.
    """
    stamped: list[InputRequest] = []
    for request in pending.requests:
        seconds = _expires_after(request, tools.get(request.action.tool_name), default_s)
        if request.expires_at is None and seconds is not None and request.request_id not in pending.answers:
            request = request.model_copy(update={"expires_at": deadline_iso(now + seconds)})
        stamped.append(request)
    return pending.model_copy(update={"requests": stamped})


def _expires_after(request: InputRequest, tool: ResolvedTool | None, default_s: float | None) -> float | None:
    """A resolver's question takes the agent's default; the tool's own setting bounds its approval or answer."""
    if request.kind != "elicitation" and tool is not None and tool.expires_after_s is not None:
        return tool.expires_after_s
    return default_s


def expire_due(pending: PendingStep, now: float) -> Acceptance | None:
    """End every open request whose deadline is `now` or earlier as `expired`; None when none is due.

    Returns:
        The batch with them expired, settled when nothing is left open (an approval still open
        keeps the batch waiting, as do questions whose deadline is later), and an `expired`
        resolution for each.
    """
    due = pending.due(now)
    if not due:
        return None
    updated = pending.model_copy(update={"expired": [*pending.expired, *(r.request_id for r in due)]})
    return Acceptance(
        pending=updated, settled=not updated.open_requests(), resolutions=resolutions.unanswered(due, "expired")
    )


def _message(request: InputRequest) -> str:
    return (
        f"{INPUT_EXPIRED}: nobody answered this request before its deadline ({request.expires_at}), "
        "so the call did not run and has no answer. Go on without it, or ask again if it is still needed."
    )


def expired_result(call: ToolCallPart, request: InputRequest) -> ToolResultPart:
    """The one error result a call gets when its request expired (the text names the deadline)."""
    return error_result(call, _message(request))


def expired_event(turn: TurnState, step_index: int, call: ToolCallPart, request: InputRequest) -> Event:
    """`action.result` for a call whose request expired: rejected, `error.code` `INPUT_EXPIRED`."""
    output: JsonValue = {"code": INPUT_EXPIRED, "message": _message(request), "expiresAt": request.expires_at}
    return action_result(turn, step_index, call, output, "rejected", INPUT_EXPIRED)
