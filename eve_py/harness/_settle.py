"""Settling a batch, the parts that run tools: a call run again with its answers, and the step's next state.

`TurnUnit.settle` (`eve_py.harness._unit`) carries out `parking._settle.plan_settlement`: an
approved call's executor runs now, a call whose resolver questions were answered runs again
with the answers (`rerun`). Each result is stored before anything else runs (`checkpoint`);
a call whose resolvers ask a dependent question parks again, in a new batch of the same step
(`parked_again`). Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Mapping

from eve_py._context import ToolChannel
from eve_py.harness._execute import run_call
from eve_py.parking._results import action_result, error_result
from eve_py.parking._settle import Settlement
from eve_py.protocol import Event
from eve_py.protocol.messages import ToolCallPart, ToolResultPart
from eve_py.protocol.pending import PendingStep, QuestionRef, RecordedOutcome
from eve_py.protocol.requests import InputRequest
from eve_py.protocol.turns import TurnState
from eve_py.resolvers import Question
from eve_py.tools import ResolvedTool

__all__ = ("checkpoint", "parked_again", "rerun")

_DISMISS_ROUNDS = 8
"""How many times a dismissed call's resolvers may ask again (each time cancelled) before it fails."""

_DISMISSED = "The call was dismissed while its resolvers kept asking."


async def rerun(
    session_id: str,
    turn: TurnState,
    step_index: int,
    call: ToolCallPart,
    tool: ResolvedTool,
    events: list[Event],
    *,
    approved: bool,
    recorded: dict[str, dict[str, RecordedOutcome]],
    reports: dict[str, int],
    channel: ToolChannel,
    dismiss: bool,
) -> ToolResultPart | list[Question]:
    """Run a call again with its recorded answers (`recorded[call id]`); dismissed, its further
    questions are cancelled (recorded as such) until it finishes, at most `_DISMISS_ROUNDS` times."""
    for _ in range(_DISMISS_ROUNDS if dismiss else 1):
        outcome = await run_call(
            session_id,
            turn,
            step_index,
            call,
            tool,
            events,
            approved=approved,
            recorded=recorded.get(call.tool_call_id, {}),
            channel=channel,
            reports=reports,
        )
        if isinstance(outcome, ToolResultPart) or not dismiss:
            return outcome
        for question in outcome:
            cancel = RecordedOutcome(action="cancel", q=question.digest)
            recorded.setdefault(call.tool_call_id, {})[question.key] = cancel
    events.append(action_result(turn, step_index, call, _DISMISSED, "failed", "DISMISSED"))
    return error_result(call, _DISMISSED)


def parked_again(
    pending: PendingStep,
    plan: Settlement,
    results: Mapping[str, ToolResultPart],
    recorded: Mapping[str, Mapping[str, RecordedOutcome]],
    reports: Mapping[str, int],
    requests: list[InputRequest],
    questions: dict[str, QuestionRef],
) -> PendingStep:
    """The step's next batch: the dependent questions its calls asked when they ran again."""
    return PendingStep(
        turn_id=pending.turn_id,
        step_index=pending.step_index,
        assistant=pending.assistant,
        results=dict(results),
        requests=requests,
        questions=questions,
        approved_calls=list(plan.approved_calls),
        edited_inputs=dict(plan.edited_inputs),
        elicitations={call_id: dict(entries) for call_id, entries in recorded.items()},
        answered=[*pending.answered, *(r.request_id for r in pending.requests)],
        reports=dict(reports) or None,
    )


def checkpoint(
    pending: PendingStep,
    results: Mapping[str, ToolResultPart],
    plan: Settlement,
    recorded: Mapping[str, Mapping[str, RecordedOutcome]],
) -> PendingStep:
    """The step with the results so far and what the settlement decided, to store before the next call runs."""
    return pending.model_copy(
        update={
            "results": dict(results),
            "approved_calls": list(plan.approved_calls),
            "edited_inputs": dict(plan.edited_inputs),
            "elicitations": {call_id: dict(entries) for call_id, entries in recorded.items()},
        }
    )
