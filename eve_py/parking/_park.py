"""Where a call is parked: which of a step's tool calls run, which wait for a person, and the park events.

Pure functions. `triage` sorts a model step's calls: calls that cannot run get their error
result at once, calls to client-resolved tools become input requests, and calls to executable
tools wait for their approval policy, which the harness asks (a policy may be async); `decide`
then parks such a call on an approval request or lets it run, and `ran` adds what the calls that
ran gave. Each returns a new, read-only `StepPlan`.
`park_events` are what a step that parks adds to the log (`input.requested`, `turn.waiting`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

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
from eve_py.resolvers import Question
from eve_py.tools import ResolvedTool

__all__ = ("StepPlan", "decide", "elicitation_requests", "park_events", "ran", "triage")

_V = TypeVar("_V")
_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class StepPlan:
    """How a step's calls go: their results so far, the requests they park on, and what runs.

    Read-only: `triage`, `decide` and `ran` each return a new plan, and the harness carries the
    last one out (`StepPlan.pending`) without changing it.
    """

    results: Mapping[str, ToolResultPart]
    """Results known without running anything (rejected calls, denials), then the calls that ran, by call id."""
    parked: Mapping[str, tuple[InputRequest, ...]]
    """The requests each parked call waits on, by call id."""
    questions: Mapping[str, QuestionRef]
    """For each `elicitation` request, by request id: the resolver question it asks."""
    runnable: tuple[tuple[ToolCallPart, ResolvedTool], ...]
    """Calls whose executors run now, in call order."""
    actions: tuple[ToolCallAction, ...]
    """The calls announced in `actions.requested` (every call to an executable tool)."""
    reports: Mapping[str, int]
    """Progress reports and log entries each parked call made before it parked (`PendingStep.reports`)."""
    denied: Mapping[str, JsonValue]
    """Calls their approval policy denied, by call id: the `action.result` output (their `results` say why)."""
    undecided: tuple[tuple[ToolCallPart, ResolvedTool], ...] = ()
    """Calls to executable tools whose approval policy the harness must ask (`decide` takes the answers)."""

    def pending(self, turn_id: str, step_index: int, assistant: AssistantMessage) -> PendingStep:
        """The step as it parks (or, with no requests, as it completes): its results and its batch."""
        # Of models and ids built this step: not validated again.
        return PendingStep.trusted(
            turn_id=turn_id,
            step_index=step_index,
            assistant=assistant,
            results=dict(self.results),
            requests=[r for call in assistant.tool_calls for r in self.parked.get(call.tool_call_id, ())],
            questions=dict(self.questions),
            reports=dict(self.reports) or None,
        )


def _frozen(mapping: dict[str, _V]) -> Mapping[str, _V]:
    """A read-only view of a dict built here (and never changed after)."""
    return MappingProxyType(mapping) if mapping else _EMPTY


def triage(assistant: AssistantMessage, tools: Mapping[str, ResolvedTool], unparsed: Mapping[str, str]) -> StepPlan:
    """First pass over a step's calls: the plan so far, its `undecided` calls waiting for their approval policy.

    Args:
        assistant: The model's response (its tool calls, in order).
        tools: The agent's tools by name.
        unparsed: Call ids whose argument text was not a JSON object, with the reason.
    """
    results: dict[str, ToolResultPart] = {}
    parked: dict[str, tuple[InputRequest, ...]] = {}
    actions: list[ToolCallAction] = []
    undecided: list[tuple[ToolCallPart, ResolvedTool]] = []
    for call in assistant.tool_calls:
        call_id = call.tool_call_id
        tool = tools.get(call.tool_name)
        if call_id in unparsed:
            results[call_id] = error_result(
                call,
                f"The arguments for tool {call.tool_name!r} are not a valid JSON object ({unparsed[call_id]}). "
                "Call it again with valid JSON arguments.",
            )
        elif tool is None:
            offered = ", ".join(sorted(tools))
            results[call_id] = error_result(call, f"Unknown tool {call.tool_name!r}. Available tools: {offered}.")
        elif (problem := input_problem(tool, call)) is not None:
            results[call_id] = error_result(call, problem)
        elif tool.client_resolved:
            parked[call_id] = (client_request(call, tool),)
        else:
            actions.append(ToolCallAction.trusted(call_id=call_id, tool_name=call.tool_name, input=call.input))
            undecided.append((call, tool))
    return StepPlan(
        results=_frozen(results),
        parked=_frozen(parked),
        questions=_EMPTY,
        runnable=(),
        actions=tuple(actions),
        reports=_EMPTY,
        denied=_EMPTY,
        undecided=tuple(undecided),
    )


def decide(plan: StepPlan, decisions: Mapping[str, ApprovalDecision | Exception]) -> StepPlan:
    """The plan once each `undecided` call's approval policy answered (`decisions`, by call id): each is
    parked on an approval request, runs, is denied, or fails (the policy raised)."""
    results, parked, denied = dict(plan.results), dict(plan.parked), dict(plan.denied)
    runnable = list(plan.runnable)
    for call, tool in plan.undecided:
        decision = decisions[call.tool_call_id]
        if isinstance(decision, Exception):
            message = f"The approval policy of {call.tool_name!r} failed: {decision}"
            results[call.tool_call_id] = error_result(call, message)
        elif decision.outcome == "ask":
            parked[call.tool_call_id] = (approval_request(call, tool, remember=decision.remember),)
        elif decision.outcome == "deny":
            message = denied_output(decision.reason)
            results[call.tool_call_id] = error_result(call, message)
            denied[call.tool_call_id] = denial(message, {"policy": "approval", "status": "denied"})
        else:
            runnable.append((call, tool))
    return StepPlan(
        results=_frozen(results),
        parked=_frozen(parked),
        questions=plan.questions,
        runnable=tuple(runnable),
        actions=plan.actions,
        reports=plan.reports,
        denied=_frozen(denied),
    )


def ran(
    plan: StepPlan, outcomes: Mapping[str, ToolResultPart | list[Question]], reports: Mapping[str, int]
) -> StepPlan:
    """The plan once its `runnable` calls ran: each one's result, or the resolver questions it parks on.

    Args:
        plan: The decided plan.
        outcomes: By call id, what each run gave.
        reports: By call id, the reports each call that parked made before it did.
    """
    results, parked, questions = dict(plan.results), dict(plan.parked), dict(plan.questions)
    for call, _ in plan.runnable:
        outcome = outcomes[call.tool_call_id]
        if isinstance(outcome, ToolResultPart):
            results[call.tool_call_id] = outcome
        else:
            parked[call.tool_call_id] = tuple(elicitation_requests(call, outcome, questions))
    return StepPlan(
        results=_frozen(results),
        parked=_frozen(parked),
        questions=_frozen(questions),
        runnable=(),
        actions=plan.actions,
        reports=_frozen({**plan.reports, **reports}),
        denied=plan.denied,
    )


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
