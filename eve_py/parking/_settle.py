"""Where a batch settles: a settled batch's answers → each parked call's result, or the call to run again.

Pure functions. Once every required answer of a batch is in (or the batch is dismissed or
cancelled), each parked call gets exactly one tool result:

- a question or client tool: the answer is the result (`{"status": "ignored"}` when left out);
- an approval: denied (or left out) gives one error result and an `action.result` event;
  approved means the executor runs (the harness runs it: `Settlement.rerun`);
- a resolver's question: the answer is recorded and the call runs again with it (`rerun`),
  where it finishes or asks a dependent question (a new batch of the same step);
- any request whose deadline passed (`PendingStep.expired`): its call gets one error result
  (`INPUT_EXPIRED`) and an `action.result` event, and does not run.

`plan_settlement` decides; the harness runs the reruns and commits. `withdraw` is a parked
turn's end by cancel: every parked call gets the cancelled result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from eve_py._json import JsonObject
from eve_py.parking import _resolutions as resolutions
from eve_py.parking._answers import approval_decision, client_result, denied_output, elicitation_outcome
from eve_py.parking._expire import expire_due, expired_event, expired_result
from eve_py.parking._results import action_result, denial, error_result
from eve_py.protocol import Event
from eve_py.protocol.messages import ToolCallPart, ToolResultPart
from eve_py.protocol.payloads import InputResolution, InputResolvedData, ResolutionOutcome, TurnCancelledData
from eve_py.protocol.pending import PendingStep, RecordedOutcome
from eve_py.protocol.turns import TurnState

__all__ = ("CANCELLED_CALL_RESULT", "Settlement", "dismissal", "plan_settlement", "withdraw")

CANCELLED_CALL_RESULT = "The turn was cancelled before this call finished."
"""The result of a parked call whose turn was cancelled (eve's words)."""


@dataclass(frozen=True, slots=True)
class Settlement:
    """What a settled batch decides before anything runs; read-only (the harness copies what it extends)."""

    results: Mapping[str, ToolResultPart]
    """Every result known now, by call id: earlier ones, answers, denials."""
    events: tuple[Event, ...]
    """`action.result` for each denial, in batch order."""
    rerun: tuple[ToolCallPart, ...]
    """Calls to run (again) now, in call order: approved ones and ones whose questions were answered."""
    approved_calls: tuple[str, ...]
    """Calls a person approved (their executors run as approved)."""
    edited_inputs: Mapping[str, JsonObject]
    """Inputs a person set when approving, by call id (the `rerun` calls carry them already)."""
    approved_tools: tuple[str, ...]
    """The tools whose `once()` approval the session remembers, after this batch's answers."""
    recorded: Mapping[str, Mapping[str, RecordedOutcome]]
    """Answers to resolver questions, by call id then resolver key."""
    reports: Mapping[str, int]
    """Progress reports and log entries each call made before it parked (`PendingStep.reports`)."""


def plan_settlement(
    turn: TurnState, pending: PendingStep, approved_tools: list[str], executable: Callable[[str], bool]
) -> Settlement:
    """Decide every parked call of a settled batch from its answer.

    Args:
        turn: The parked turn.
        pending: The parked step, every required answer in (missing ones count as unanswered).
        approved_tools: The tools whose `once()` approval the session remembers.
        executable: Whether the agent still has an executable tool of that name (an approval of
            a tool removed since is a denial).
    """
    results = dict(pending.results)
    events: list[Event] = []
    approved_calls = list(pending.approved_calls)
    edited_inputs = dict(pending.edited_inputs)
    remembered: dict[str, bool] = {}
    recorded = {call_id: dict(entries) for call_id, entries in pending.elicitations.items()}
    calls = {call.tool_call_id: call for call in pending.assistant.tool_calls}
    rerun: set[str] = set()
    for request in pending.requests:
        call = calls[request.action.call_id]
        answer = pending.answers.get(request.request_id)
        if call.tool_call_id in pending.results and request.kind == "tool-approval":
            continue  # decided and stored before a crash: its event is in the log already
        if request.request_id in pending.expired:
            if call.tool_call_id not in results:  # a call's second expired question adds nothing
                events.append(expired_event(turn, pending.step_index, call, request))
                results[call.tool_call_id] = expired_result(call, request)
        elif request.kind in ("question", "client-tool"):
            output = client_result(request, answer)
            # The answer was checked when it was accepted; its output is not walked again.
            results[call.tool_call_id] = ToolResultPart.trusted(
                tool_call_id=call.tool_call_id, tool_name=call.tool_name, output=output
            )
        elif request.kind == "elicitation":
            ref = pending.questions[request.request_id]
            recorded.setdefault(call.tool_call_id, {})[ref.key] = elicitation_outcome(answer, ref.digest)
            rerun.add(call.tool_call_id)
        else:
            approved, reason = approval_decision(answer)
            if approved and executable(call.tool_name):
                if call.tool_call_id not in approved_calls:
                    approved_calls.append(call.tool_call_id)
                if request.remember:
                    remembered[call.tool_name] = remembered.get(call.tool_name, True)
                if answer is not None and answer.edited_input is not None:
                    edited_inputs[call.tool_call_id] = answer.edited_input
                rerun.add(call.tool_call_id)
                continue
            if request.remember and answer is not None:
                remembered[call.tool_name] = False  # a denial among one message's answers wins
            if approved:
                reason = f"the tool {call.tool_name!r} is no longer available"
            message = denied_output(reason)
            output = denial(message, {"requestId": request.request_id, "status": "denied" if answer else "ignored"})
            events.append(action_result(turn, pending.step_index, call, output, "rejected", "TOOL_EXECUTION_DENIED"))
            results[call.tool_call_id] = error_result(call, message)
    return Settlement(
        results=MappingProxyType(results),
        events=tuple(events),
        # A call whose result was stored before a crash ran already: it is not run again.
        rerun=tuple(
            _with_input(call, edited_inputs.get(call.tool_call_id))
            for call in pending.assistant.tool_calls
            if call.tool_call_id in rerun and call.tool_call_id not in results
        ),
        approved_calls=tuple(approved_calls),
        edited_inputs=MappingProxyType(edited_inputs),
        approved_tools=tuple(_remember(approved_tools, remembered)),
        recorded=MappingProxyType({call_id: MappingProxyType(entries) for call_id, entries in recorded.items()}),
        reports=MappingProxyType(dict(pending.reports or {})),
    )


def _remember(approved_tools: list[str], remembered: dict[str, bool]) -> list[str]:
    """The session's `once()` memory after a batch: approved tools added, denied ones dropped."""
    kept = [name for name in approved_tools if remembered.get(name, True)]
    return kept + [name for name, approved in remembered.items() if approved and name not in kept]


def _with_input(call: ToolCallPart, edited: JsonObject | None) -> ToolCallPart:
    """The call as it runs: with the input a person set when approving, if they changed it."""
    return call if edited is None else call.model_copy(update={"input": edited})


def _unanswered_event(
    turn: TurnState, pending: PendingStep, outcome: ResolutionOutcome, earlier: list[InputResolution] | None = None
) -> Event:
    """`input.resolved` with every open request of the batch ended as `outcome`, after `earlier` resolutions."""
    resolved = InputResolvedData(
        sequence=turn.sequence,
        turn_id=pending.turn_id,
        step_index=pending.step_index,
        resolutions=[*(earlier or []), *resolutions.unanswered(pending.open_requests(), outcome)],
    )
    return turn.stamp(resolved)


def dismissal(turn: TurnState, pending: PendingStep, now: float) -> tuple[PendingStep, Event]:
    """A batch a new message dismisses, and its `input.resolved`: every open request `ignored`.

    Requests whose deadline passed (`now`, Unix seconds) resolve as `expired` instead, and their
    calls get the expiry's result.
    """
    expired = expire_due(pending, now)
    if expired is not None:
        pending = expired.pending
    event = _unanswered_event(turn, pending, "ignored", earlier=expired.resolutions if expired else [])
    return pending, event


def withdraw(turn: TurnState, pending: PendingStep) -> tuple[PendingStep, list[Event]]:
    """A parked turn cancelled: every parked call's result, and the withdrawal's first events.

    Returns:
        The step with one result per call, and `input.resolved` (open requests `cancelled`) and
        `turn.cancelled`.
    """
    results = dict(pending.results)
    for call in pending.assistant.tool_calls:
        results.setdefault(call.tool_call_id, error_result(call, CANCELLED_CALL_RESULT))
    events = [
        _unanswered_event(turn, pending, "cancelled"),
        turn.stamp(TurnCancelledData(sequence=turn.sequence, turn_id=turn.turn_id)),
    ]
    return pending.with_results(results), events
