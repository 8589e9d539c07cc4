"""Where a call is parked: which of a step's tool calls run, which wait for a person, and the park events.

Pure functions. `triage` sorts a model step's calls: calls that cannot run get their error
result at once, calls to client-resolved tools become input requests, and calls to executable
tools wait for their approval policy, which the harness asks (a policy may be async); `decide`
then parks such a call on an approval request or lets it run.
`park_events` are what a step that parks adds to the log (`input.requested`, `turn.waiting`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from eve_py._json import JsonValue
from eve_py.authoring._approval import ApprovalDecision
from eve_py.parking._answers import denied_output
from eve_py.parking._build import approval_request, client_request, elicitation_request
from eve_py.parking._results import denial, error_result, input_problem
from eve_py.protocol import Event
from eve_py.protocol.messages import AssistantMessage, ToolCallPart, ToolResultPart
from eve_py.protocol.payloads import InputRequestedData, TurnWaitingData
from eve_py.protocol.pending import PendingStep, QuestionRef
from eve_py.protocol.requests import InputRequest, ToolCallAction
from eve_py.protocol.turns import TurnState
from eve_py.resolvers._solver import Question
from eve_py.tools._resolved import ResolvedTool

__all__ = ("StepPlan", "decide", "elicitation_requests", "park_events", "triage")


@dataclass(slots=True)
class StepPlan:
    """How a step's calls go: their results so far, the requests they park on, and what runs."""

    results: dict[str, ToolResultPart] = field(default_factory=dict)
    """Results known without running anything (rejected calls), by call id."""
    parked: dict[str, list[InputRequest]] = field(default_factory=dict)
    """The requests each parked call waits on, by call id."""
    questions: dict[str, QuestionRef] = field(default_factory=dict)
    """For each `elicitation` request, by request id: the resolver question it asks."""
    runnable: list[tuple[ToolCallPart, ResolvedTool]] = field(default_factory=list)
    """Calls whose executors run now, in call order."""
    actions: list[ToolCallAction] = field(default_factory=list)
    """The calls announced in `actions.requested` (every call to an executable tool)."""
    reports: dict[str, int] = field(default_factory=dict)
    """Progress reports and log entries each parked call made before it parked (`PendingStep.reports`)."""
    denied: dict[str, JsonValue] = field(default_factory=dict)
    """Calls their approval policy denied, by call id: the `action.result` output (their `results` say why)."""

    def pending(self, turn_id: str, step_index: int, assistant: AssistantMessage) -> PendingStep:
        """The step as it parks (or, with no requests, as it completes): its results and its batch."""
        # Of models and ids built this step (the plan is not used after): not validated again.
        return PendingStep.trusted(
            turn_id=turn_id,
            step_index=step_index,
            assistant=assistant,
            results=self.results,
            requests=[r for call in assistant.tool_calls for r in self.parked.get(call.tool_call_id, [])],
            questions=self.questions,
            reports=self.reports or None,
        )

    def ask(self, call: ToolCallPart, questions: list[Question]) -> None:
        """Park `call` on its resolvers' `questions` (it ran and asked instead of finishing)."""
        self.parked[call.tool_call_id] = elicitation_requests(call, questions, self.questions)


def triage(
    assistant: AssistantMessage, tools: Mapping[str, ResolvedTool], unparsed: Mapping[str, str]
) -> tuple[StepPlan, list[tuple[ToolCallPart, ResolvedTool]]]:
    """First pass over a step's calls: the plan so far, and the calls whose approval policy must be asked.

    Args:
        assistant: The model's response (its tool calls, in order).
        tools: The agent's tools by name.
        unparsed: Call ids whose argument text was not a JSON object, with the reason.
    """
    plan = StepPlan()
    undecided: list[tuple[ToolCallPart, ResolvedTool]] = []
    for call in assistant.tool_calls:
        call_id = call.tool_call_id
        tool = tools.get(call.tool_name)
        if call_id in unparsed:
            plan.results[call_id] = error_result(
                call,
                f"The arguments for tool {call.tool_name!r} are not a valid JSON object ({unparsed[call_id]}). "
                "Call it again with valid JSON arguments.",
            )
        elif tool is None:
            offered = ", ".join(sorted(tools))
            plan.results[call_id] = error_result(call, f"Unknown tool {call.tool_name!r}. Available tools: {offered}.")
        elif (problem := input_problem(tool, call)) is not None:
            plan.results[call_id] = error_result(call, problem)
        elif tool.client_resolved:
            plan.parked[call_id] = [client_request(call, tool)]
        else:
            plan.actions.append(ToolCallAction.trusted(call_id=call_id, tool_name=call.tool_name, input=call.input))
            undecided.append((call, tool))
    return plan, undecided


def decide(plan: StepPlan, call: ToolCallPart, tool: ResolvedTool, decision: ApprovalDecision | Exception) -> None:
    """Record an executable call's approval decision in `plan`: park it, run it, deny it, or fail it
    (the policy raised)."""
    if isinstance(decision, Exception):
        message = f"The approval policy of {call.tool_name!r} failed: {decision}"
        plan.results[call.tool_call_id] = error_result(call, message)
    elif decision.outcome == "ask":
        plan.parked[call.tool_call_id] = [approval_request(call, tool, remember=decision.remember)]
    elif decision.outcome == "deny":
        message = denied_output(decision.reason)
        plan.results[call.tool_call_id] = error_result(call, message)
        plan.denied[call.tool_call_id] = denial(message, {"policy": "approval", "status": "denied"})
    else:
        plan.runnable.append((call, tool))


def elicitation_requests(
    call: ToolCallPart, questions: list[Question], refs: dict[str, QuestionRef]
) -> list[InputRequest]:
    """One `elicitation` request per question (ids stable: call id, resolver key, question digest), noted in `refs`."""
    requests = []
    for question in questions:
        request = elicitation_request(call, question)
        refs[request.request_id] = QuestionRef(call_id=call.tool_call_id, key=question.key, digest=question.digest)
        requests.append(request)
    return requests


def park_events(turn: TurnState, pending: PendingStep) -> list[Event]:
    """What a parking step adds to the log: the batch (`input.requested`), then `turn.waiting`."""
    requested = InputRequestedData.of(
        pending.requests, sequence=turn.sequence, turn_id=turn.turn_id, step_index=pending.step_index
    )
    return [turn.stamp(requested), turn.stamp(TurnWaitingData(sequence=turn.sequence, turn_id=turn.turn_id))]
