"""Where a call is parked: a step's tool calls run or wait for a person, and the waiting ones are written.

`run_step_calls` sorts a model step's calls (`parking._park.triage`), asks each executable
tool's approval policy, and runs the calls that need no person, together, recording their
`action.result` events in call order; the rest form the step's batch. `run_call` runs one
call's resolvers and executor and returns its result, or the questions its resolvers ask (the
call then parks on them); its tool context's `ModelChannel` answers `ctx.sample` with the
agent's own model, and its `ctx.report_progress` and `ctx.log` become `action.progress` and
`action.log` events among the call's own, committed with its result (no write of their own),
and go to the runtime's live listener as they happen (`ModelChannel.live`); a call that parked
on its resolvers' questions runs again after the answers without recording again the reports
it made before the park (`PendingStep.reports` counts them).
`park` commits a batch: the session waits on it, each request with its deadline when its tool
or the agent sets one (`parking._expire.with_deadlines`).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import jsonschema
import pydantic

from eve_py._camel import describe_validation_error
from eve_py._context import SILENT, ApprovalContext, ClientFeature, LogLevel, Root, ToolChannel, ToolContext
from eve_py._json import JsonValue, to_json_value
from eve_py.authoring._approval import ApprovalDecision
from eve_py.authoring._signature import NeedsInput
from eve_py.errors import ToolError
from eve_py.harness._commit import Writer
from eve_py.models import Model, ModelRequest
from eve_py.parking._answers import schema_validator
from eve_py.parking._expire import with_deadlines
from eve_py.parking._park import StepPlan, decide, park_events, triage
from eve_py.parking._results import action_result
from eve_py.protocol import Event
from eve_py.protocol.content import content_blocks
from eve_py.protocol.messages import AssistantMessage, ToolCallPart, ToolResultPart, UserMessage
from eve_py.protocol.payloads import ActionLogData, ActionProgressData
from eve_py.protocol.pending import PendingStep, RecordedOutcome
from eve_py.protocol.turns import TurnState
from eve_py.resolvers._solver import Question
from eve_py.sessions._record import SessionRecord
from eve_py.tools._resolved import ResolvedTool
from eve_py.tracing._spans import mark_parked, tool_span

__all__ = ("LiveListener", "ModelChannel", "park", "run_call", "run_step_calls")

_log = logging.getLogger("eve_py")


LiveListener = Callable[[str, Event], None]
"""Called with a session id and one event a running call reported (`action.progress`, `action.log`),
as it happens, before it is committed with the call's result (`Runtime(on_live=...)`)."""


class _CallChannel:
    """One call's channel: its progress and logs join its events (and go to the live listener); the rest
    is asked of `inner`. The first `replayed` reports of a run after a park repeat what the run before
    the park reported (and the log holds): they are skipped."""

    __slots__ = ("_call", "_events", "_inner", "_live", "_replayed", "_step_index", "_turn", "made")

    def __init__(
        self,
        inner: ToolChannel,
        turn: TurnState,
        step_index: int,
        call: ToolCallPart,
        events: list[Event],
        live: Callable[[Event], None] | None,
        replayed: int,
    ) -> None:
        self._inner, self._turn, self._step_index, self._call, self._events = inner, turn, step_index, call, events
        self._live, self._replayed = live, replayed
        self.made = 0
        """Reports this run made, the skipped ones included."""

    def _replay(self) -> bool:
        self.made += 1
        return self.made <= self._replayed

    def _ids(self) -> dict[str, Any]:
        """The fields naming the call a report belongs to, shared by both report events."""
        turn, call = self._turn, self._call
        return {
            "sequence": turn.sequence,
            "turn_id": turn.turn_id,
            "step_index": self._step_index,
            "tool_call_id": call.tool_call_id,
            "tool_name": call.tool_name,
        }

    def _report(self, data: ActionProgressData | ActionLogData) -> None:
        event = self._turn.stamp(data)
        self._events.append(event)
        if self._live is not None:
            try:
                self._live(event)
            except Exception:  # a listener never fails the tool: the event is still committed
                _log.exception("live event listener failed; the call goes on")

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        if self._replay():
            return
        self._report(ActionProgressData(**self._ids(), progress=progress, total=total, message=message))
        await self._inner.progress(progress, total, message)

    async def log(self, level: LogLevel, data: JsonValue, logger: str | None) -> None:
        if self._replay():
            return
        self._report(ActionLogData(**self._ids(), level=level, data=data, logger=logger))
        await self._inner.log(level, data, logger)

    async def sample(self, prompt: str, *, system_prompt: str | None, max_tokens: int) -> str:
        return await self._inner.sample(prompt, system_prompt=system_prompt, max_tokens=max_tokens)

    async def list_roots(self) -> list[Root]:
        return await self._inner.list_roots()

    def offers(self, feature: ClientFeature) -> bool:
        return self._inner.offers(feature)

    async def resource_updated(self, uri: str) -> None:
        await self._inner.resource_updated(uri)


class ModelChannel:
    """The `ToolChannel` of the calls the agent loop runs: a tool's `ctx.sample(...)` (and an MCP
    server's sampling request to one of the agent's connections) is one step of the agent's own
    model, with no tools; progress and logs are the call's events (`run_call`); roots are configured per
    connection (`define_mcp_server(roots=...)`), not here. The `Model` protocol has no token
    limit, so `max_tokens` is the provider's default. With `live`, each call's reports also go to
    it as they happen (`Runtime(on_live=...)`)."""

    __slots__ = ("_model", "live")

    def __init__(self, model: Model, live: LiveListener | None = None) -> None:
        self._model = model
        self.live = live

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        return None

    async def log(self, level: LogLevel, data: JsonValue, logger: str | None) -> None:
        return None

    async def sample(self, prompt: str, *, system_prompt: str | None, max_tokens: int) -> str:
        """The agent's model's answer to `prompt`.

        Raises:
            ToolError: The model answered with no text.
            ModelError: The provider failed.
        """
        request = ModelRequest(instructions=system_prompt, messages=[UserMessage(content=prompt)], tools=[])
        response = await self._model.request(request)
        if not response.text:
            raise ToolError(f"the agent's model ({self._model.name}) answered the sampling request with no text")
        return response.text

    async def list_roots(self) -> list[Root]:
        return await SILENT.list_roots()

    def offers(self, feature: ClientFeature) -> bool:
        return feature in ("elicitation", "sampling")

    async def resource_updated(self, uri: str) -> None:
        return None  # an agent run serves no MCP client to tell


async def run_call(
    session_id: str,
    turn: TurnState,
    step_index: int,
    call: ToolCallPart,
    tool: ResolvedTool,
    events: list[Event],
    *,
    approved: bool,
    recorded: Mapping[str, RecordedOutcome],
    channel: ToolChannel = SILENT,
    reports: dict[str, int] | None = None,
) -> ToolResultPart | list[Question]:
    """Run one call's resolvers and executor: its one result, or the questions it waits on.

    Whatever the resolvers or the executor raise becomes an error result the model sees; the
    call's `action.progress` and `action.log` events, then its `action.result`, are appended to `events`.

    Args:
        approved: A person approved this call (`ToolContext.approved`).
        recorded: Answers to this call's resolver questions, by resolver key.
        channel: Where the tool's `ctx.sample(...)` goes (the agent's model; its `live` listener
            gets the call's reports as they happen).
        reports: Reports made before a park, by call id (`PendingStep.reports`): this run takes
            its entry and skips as many reports, and leaves its own count there if it parks again.
    """
    assert tool.plan is not None, "client-resolved tools have no executor"
    call_id = call.tool_call_id
    live = channel.live if isinstance(channel, ModelChannel) else None
    reporter = _CallChannel(
        channel,
        turn,
        step_index,
        call,
        events,
        functools.partial(live, session_id) if live is not None else None,
        reports.pop(call_id, 0) if reports else 0,
    )
    ctx = ToolContext(
        session_id=session_id,
        turn_id=turn.turn_id,
        call_id=call_id,
        tool_name=tool.name,
        approved=approved,
        channel=reporter,
    )
    output: JsonValue
    is_error = False
    error_name: str | None = None
    try:
        with tool_span(session_id, call.tool_call_id, tool.name, tool.description):
            outcome = await tool.plan.run(call.input, ctx, recorded)
            if isinstance(outcome, NeedsInput):
                if reports is not None and reporter.made:
                    reports[call_id] = reporter.made
                return outcome.questions
            output = _stored(outcome.value)
            if tool.output_schema is not None:
                schema_validator(tool.output_schema).validate(output)
            model_output = output if tool.to_model_output is None else _stored(tool.to_model_output(output))
    except pydantic.ValidationError as exc:
        output = model_output = f"Invalid input for tool {tool.name!r}: {describe_validation_error(exc)}"
        is_error = True
    except jsonschema.ValidationError as exc:
        output = model_output = f"Tool {tool.name!r} returned output that fails its output schema: {exc.message}"
        is_error = True
    except ToolError as exc:
        output = model_output = f"Error executing tool {tool.name}: {exc}"
        is_error, error_name = True, type(exc).__name__
    except Exception as exc:
        output = model_output = f"Tool {tool.name!r} failed: {type(exc).__name__}: {exc}"
        is_error, error_name = True, type(exc).__name__
    if is_error:
        events.append(action_result(turn, step_index, call, output, "failed", "TOOL_ERROR", error_name))
    else:
        events.append(action_result(turn, step_index, call, output, "completed"))
    # Made JSON by `_stored` (or an error's text): not walked again.
    return ToolResultPart.trusted(
        tool_call_id=call.tool_call_id, tool_name=tool.name, output=model_output, is_error=is_error
    )


def _stored(value: object) -> JsonValue:
    """A tool's output as JSON; content blocks, one or many, as a list (what `content_from_json` reads)."""
    blocks = content_blocks(value)
    return to_json_value(value if blocks is None else blocks)


async def _approval(record: SessionRecord, call: ToolCallPart, tool: ResolvedTool) -> ApprovalDecision | Exception:
    """The tool's approval policy's decision for this call, or the error it raised."""
    approval_ctx = ApprovalContext(
        session_id=record.id,
        call_id=call.tool_call_id,
        tool_name=call.tool_name,
        tool_input=call.input,
        remembered=call.tool_name in record.approved_tools,
    )
    try:
        return await tool.approval(approval_ctx)
    except Exception as exc:
        return exc


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
    plan, undecided = triage(assistant, tools, unparsed)
    for call, tool in undecided:
        decide(plan, call, tool, await _approval(record, call, tool))
    rejected = [
        action_result(turn, step_index, call, denied, "rejected", "TOOL_EXECUTION_DENIED")
        if (denied := plan.denied.get(call.tool_call_id)) is not None
        else action_result(turn, step_index, call, result.output, "failed", "INVALID_TOOL_CALL")
        for call in assistant.tool_calls
        if (result := plan.results.get(call.tool_call_id)) is not None
    ]
    own: dict[str, list[Event]] = {call.tool_call_id: [] for call, _ in plan.runnable}

    async def run(call: ToolCallPart, tool: ResolvedTool) -> None:
        events = own[call.tool_call_id]
        outcome = await run_call(
            record.id,
            turn,
            step_index,
            call,
            tool,
            events,
            approved=False,
            recorded={},
            channel=channel,
            reports=plan.reports,
        )
        if isinstance(outcome, ToolResultPart):
            plan.results[call.tool_call_id] = outcome
        else:
            plan.ask(call, outcome)

    if plan.runnable:  # a step of client tools and approvals only runs nothing here
        async with anyio.create_task_group() as group:
            for call, tool in plan.runnable:
                group.start_soon(run, call, tool)
    ran = [event for events in own.values() for event in events]  # in call order, whatever order they finished
    return plan, rejected, ran


async def park(
    writer: Writer,
    record: SessionRecord,
    pending: PendingStep,
    events: list[Event],
    *,
    tools: Mapping[str, ResolvedTool],
    default_expiry_s: float | None,
    turn: TurnState | None = None,
) -> SessionRecord:
    """Store `pending` as the session's open batch, after `events`: `input.requested`, then `turn.waiting`.

    Args:
        writer: Commits the write.
        record: The session as last written.
        pending: The batch, its requests without deadlines yet.
        events: What the step logged before it parked.
        tools: The agent's tools (each one's `expires_after_s` sets its requests' deadlines).
        default_expiry_s: The agent's `input_expires_after`, in seconds (None: no default).
        turn: The current turn as the step left it, when `record` does not hold it yet.

    Raises:
        SessionConflictError: Another writer changed the session since `record` was read.
    """
    pending = mark_parked(with_deadlines(pending, tools, default_expiry_s, time.time()))
    parked = record.park(pending, turn)
    assert parked.turn is not None
    return await writer.commit(parked, [*events, *park_events(parked.turn, pending)])
