"""Where a call is parked: a step's tool calls run or wait for a person.

`run_step_calls` sorts a model step's calls (`parking._park.triage`), asks each executable
tool's approval policy, and runs the calls that need no person, together (`_execute.run_call`),
recording their `action.result` events in call order; the rest form the step's batch.
Parking itself, the write that opens the batch, is `TurnUnit.park` (`eve_py.harness._unit`).
"""

from __future__ import annotations

from collections.abc import Mapping

import anyio

from eve_py._context import SILENT, ToolChannel
from eve_py.harness._execute import approval_context, ask_approval, run_call
from eve_py.parking._park import StepPlan, decide, ran, triage
from eve_py.parking._results import action_result
from eve_py.protocol import Event
from eve_py.protocol.messages import AssistantMessage, ToolCallPart, ToolResultPart
from eve_py.protocol.turns import TurnState
from eve_py.resolvers import Question
from eve_py.sessions import SessionRecord
from eve_py.tools import ResolvedTool

__all__ = ("run_step_calls",)


async def run_step_calls(
    record: SessionRecord,
    turn: TurnState,
    step_index: int,
    assistant: AssistantMessage,
    tools: Mapping[str, ResolvedTool],
    unparsed: Mapping[str, str],
    channel: ToolChannel = SILENT,
) -> tuple[StepPlan, list[Event], list[Event]]:
    """Sort a step's calls, run those that need no person, and say which park.

    Args:
        record: The session (its id and approved tools).
        turn: The turn (the coordinates and delivery ids of the events).
        step_index: The step's index.
        assistant: The model's response for the step.
        tools: The agent's tools by name.
        unparsed: Call ids whose argument text was not a JSON object, with the reason.
        channel: The calls' tool context channel (`run_call`).

    Returns:
        The plan with every result known and every parked call's requests; the events of the
        rejected calls (`action.result`, before the calls that ran); the events of the calls that
        ran, in call order.
    """
    plan = triage(assistant, tools, unparsed)
    if plan.undecided:
        decisions = {}
        for call, tool in plan.undecided:
            remembered = call.tool_name in record.approved_tools
            context = approval_context(record.id, call.tool_call_id, call.tool_name, call.input, remembered=remembered)
            decisions[call.tool_call_id] = await ask_approval(tool, context)
        plan = decide(plan, decisions)
    rejected = [
        action_result(turn, step_index, call, denied, "rejected", "TOOL_EXECUTION_DENIED")
        if (denied := plan.denied.get(call.tool_call_id)) is not None
        else action_result(turn, step_index, call, result.output, "failed", "INVALID_TOOL_CALL")
        for call in assistant.tool_calls
        if (result := plan.results.get(call.tool_call_id)) is not None
    ]
    own: dict[str, list[Event]] = {call.tool_call_id: [] for call, _ in plan.runnable}
    outcomes: dict[str, ToolResultPart | list[Question]] = {}
    reports: dict[str, int] = {}

    async def run(call: ToolCallPart, tool: ResolvedTool) -> None:
        outcomes[call.tool_call_id] = await run_call(
            record.id,
            turn,
            step_index,
            call,
            tool,
            own[call.tool_call_id],
            approved=False,
            recorded={},
            channel=channel,
            reports=reports,
        )

    if plan.runnable:  # a step of client tools and approvals only runs nothing here
        async with anyio.create_task_group() as group:
            for call, tool in plan.runnable:
                group.start_soon(run, call, tool)
        plan = ran(plan, outcomes, reports)
    reported = [event for events in own.values() for event in events]  # in call order, whatever order they finished
    return plan, rejected, reported
