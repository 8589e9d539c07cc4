"""Settling a batch: the calls `parking._settle.plan_settlement` sends back to run are run, and the step is written.

An approved call's executor runs now; a call whose resolver questions were answered runs again
with the answers. Each result is stored before anything else runs when the call was approved, so
`resume()` after a crash never runs a person-approved executor twice. A call whose resolvers
ask a dependent question parks again (a new batch of the same step); when every parked call has
its result, the step's assistant message and tool results join the conversation together.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from eve_py._context import SILENT, ToolChannel
from eve_py.harness._commit import Write, Writer
from eve_py.harness._park import park, run_call
from eve_py.parking._park import elicitation_requests
from eve_py.parking._results import action_result, edited_result, error_result, step_messages
from eve_py.parking._settle import Settlement, plan_settlement
from eve_py.protocol import Event
from eve_py.protocol.messages import Message, ToolCallPart, ToolResultPart
from eve_py.protocol.pending import PendingStep, QuestionRef, RecordedOutcome
from eve_py.protocol.requests import InputRequest
from eve_py.protocol.turns import TurnState
from eve_py.resolvers._solver import Question
from eve_py.sessions._record import SessionRecord
from eve_py.tools._resolved import ResolvedTool

__all__ = ("settle",)

_DISMISS_ROUNDS = 8
"""How many times a dismissed call's resolvers may ask again (each time cancelled) before it fails."""

_DISMISSED = "The call was dismissed while its resolvers kept asking."


async def settle(
    writer: Writer,
    tools: Mapping[str, ResolvedTool],
    record: SessionRecord,
    *,
    dismiss: bool = False,
    then: Callable[[SessionRecord], Write] | None = None,
    default_expiry_s: float | None = None,
    channel: ToolChannel = SILENT,
) -> SessionRecord:
    """Give every parked call of a settled batch its one result and append the step.

    A call whose resolvers ask a further question parks again (the returned record is
    `waiting`). With `dismiss`, further questions are cancelled too, so the step always
    completes, and `then` may add to the same write (a new turn).

    Args:
        writer: Commits this call's writes.
        tools: The agent's tools by name.
        record: The session, its batch settling (as stored).
        dismiss: Settle every open request as unanswered, asking nothing further.
        then: Called with the settled record; its record, events and messages join the write.
        default_expiry_s: The agent's `input_expires_after` for a dependent question's new batch.
        channel: The calls' tool context channel (`run_call`).
    """
    pending, turn = record.pending, record.turn
    assert pending is not None and turn is not None and record.settling, "only a settling batch is settled"
    plan = plan_settlement(turn, pending, record.approved_tools, lambda name: _executable(tools.get(name)))
    results, recorded = plan.results, plan.recorded
    events: list[Event] = list(plan.events)
    questions: dict[str, QuestionRef] = {}
    requests: list[InputRequest] = []
    for call in plan.rerun:
        tool = tools.get(call.tool_name)
        if tool is None or tool.plan is None:
            gone = f"The tool {call.tool_name!r} is no longer available."
            results[call.tool_call_id] = error_result(call, gone)
            events.append(action_result(turn, pending.step_index, call, gone, "failed", "TOOL_UNAVAILABLE"))
            continue
        outcome = await _run(record.id, turn, pending.step_index, call, tool, events, plan, channel, dismiss=dismiss)
        if isinstance(outcome, ToolResultPart):
            if call.tool_call_id in plan.edited_inputs:
                outcome = edited_result(outcome, plan.edited_inputs[call.tool_call_id])
            results[call.tool_call_id] = outcome
            recorded.pop(call.tool_call_id, None)
            approved = call.tool_call_id in plan.approved_calls
            checkpoint = _checkpoint(pending, results, plan, recorded)
            # Stored before anything else runs: after a crash, resume() finds the result and does
            # not run this executor again (durably so when a person approved it).
            record = await writer.commit(record.checkpoint(checkpoint, plan.approved_tools), events, durable=approved)
            pending, events = checkpoint, []
        else:
            requests += elicitation_requests(call, outcome, questions)

    if requests:
        again = _parked_again(pending, plan, requests, questions)
        kept = record.checkpoint(pending, plan.approved_tools)
        return await park(writer, kept, again, events, tools=tools, default_expiry_s=default_expiry_s)
    messages: list[Message] = [*step_messages(pending.with_results(results))]
    record = record.settle(plan.approved_tools, answered=bool(pending.answers))
    if then is not None:
        more = then(record)
        record, events, messages = more.record, events + more.events, messages + list(more.messages)
    elif not plan.rerun:
        # Nothing ran: the results come from answers already stored, so settling again after a
        # crash gives the same ones. They ride with the next step's write (one write fewer).
        writer.carry(Write(record, events, messages))
        return record
    return await writer.commit(record, events, messages=messages, durable=False)


async def _run(
    session_id: str,
    turn: TurnState,
    step_index: int,
    call: ToolCallPart,
    tool: ResolvedTool,
    events: list[Event],
    plan: Settlement,
    channel: ToolChannel,
    *,
    dismiss: bool,
) -> ToolResultPart | list[Question]:
    """Run a call again with its recorded answers; dismissed, its further questions are cancelled."""
    for _ in range(_DISMISS_ROUNDS if dismiss else 1):
        outcome = await run_call(
            session_id,
            turn,
            step_index,
            call,
            tool,
            events,
            approved=call.tool_call_id in plan.approved_calls,
            recorded=plan.recorded.get(call.tool_call_id, {}),
            channel=channel,
            reports=plan.reports,
        )
        if isinstance(outcome, ToolResultPart) or not dismiss:
            return outcome
        for question in outcome:
            cancel = RecordedOutcome(action="cancel", q=question.digest)
            plan.recorded.setdefault(call.tool_call_id, {})[question.key] = cancel
    events.append(action_result(turn, step_index, call, _DISMISSED, "failed", "DISMISSED"))
    return error_result(call, _DISMISSED)


def _parked_again(
    pending: PendingStep, plan: Settlement, requests: list[InputRequest], questions: dict[str, QuestionRef]
) -> PendingStep:
    """The step's next batch: the dependent questions its calls asked when they ran again."""
    return PendingStep(
        turn_id=pending.turn_id,
        step_index=pending.step_index,
        assistant=pending.assistant,
        results=plan.results,
        requests=requests,
        questions=questions,
        approved_calls=plan.approved_calls,
        edited_inputs=plan.edited_inputs,
        elicitations=plan.recorded,
        answered=[*pending.answered, *(r.request_id for r in pending.requests)],
        reports=plan.reports or None,
    )


def _checkpoint(
    pending: PendingStep,
    results: dict[str, ToolResultPart],
    plan: Settlement,
    recorded: dict[str, dict[str, RecordedOutcome]],
) -> PendingStep:
    """The step with the results so far and what the settlement decided, to store before the next call runs."""
    return pending.model_copy(
        update={
            "results": dict(results),
            "approved_calls": plan.approved_calls,
            "edited_inputs": plan.edited_inputs,
            "elicitations": recorded,
        }
    )


def _executable(tool: ResolvedTool | None) -> bool:
    return tool is not None and tool.plan is not None
