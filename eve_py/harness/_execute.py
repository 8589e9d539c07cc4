"""The one tool-execution path: how a call of an eve-py tool is asked for approval, run, and its output shaped.

Both the agent loop (`run_call`, for `TurnUnit.step` and `TurnUnit.settle`) and the MCP server
(`eve_py.mcp.serve._calls`, which imports this module's names through `eve_py.harness`) run a
tool's call through this module:

- `approval_context` is the one `ApprovalContext` a tool's approval policy and its `approvers` see,
  and `ask_approval` asks the policy (its exception is the call's failure, not the caller's);
- `run_call` runs a call's resolvers and executor with a `ToolContext` and returns its one result
  (errors become results the model reads) or the questions its resolvers ask;
- `shape_output` is how a tool's return value becomes what is stored and what the model (or MCP
  client) reads: content blocks as blocks, anything else as JSON checked against the tool's
  output schema, then `to_model_output`;
- the call's `ctx.report_progress` and `ctx.log` become `action.progress` and `action.log` events
  among the call's own (`_CallChannel`), committed with its result, and go to the runtime's live
  listener as they happen (`ModelChannel.live`); a call that parked on its resolvers' questions
  runs again after the answers without recording again the reports it made before the park
  (`PendingStep.reports` counts them). `ModelChannel` answers `ctx.sample` with the agent's model.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema
import pydantic

from eve_py._camel import describe_validation_error
from eve_py._context import SILENT, ApprovalContext, ClientFeature, LogLevel, Root, ToolChannel, ToolContext
from eve_py._json import JsonObject, JsonValue, to_json_value
from eve_py.authoring._approval import ApprovalDecision
from eve_py.authoring._signature import NeedsInput
from eve_py.errors import ToolError
from eve_py.models import Model, ModelRequest
from eve_py.parking._answers import schema_validator
from eve_py.parking._results import action_result
from eve_py.protocol import Event
from eve_py.protocol.content import ContentBlock, content_blocks
from eve_py.protocol.messages import ToolCallPart, ToolResultPart, UserMessage
from eve_py.protocol.payloads import ActionLogData, ActionProgressData
from eve_py.protocol.pending import RecordedOutcome
from eve_py.protocol.turns import TurnState
from eve_py.resolvers import Question
from eve_py.tools import ResolvedTool
from eve_py.tracing._spans import tool_span

__all__ = (
    "LiveListener",
    "ModelChannel",
    "ShapedOutput",
    "approval_context",
    "ask_approval",
    "run_call",
    "shape_output",
)

_log = logging.getLogger("eve_py")


LiveListener = Callable[[str, Event], None]
"""Called with a session id and one event a running call reported (`action.progress`, `action.log`),
as it happens, before it is committed with the call's result (`Runtime(on_live=...)`)."""


def approval_context(
    session_id: str, call_id: str, tool_name: str, tool_input: JsonObject, *, remembered: bool = False
) -> ApprovalContext:
    """What a tool's approval policy and its `approvers` are told about one call.

    Args:
        remembered: The session remembers a `once()` approval of this tool.
    """
    return ApprovalContext(
        session_id=session_id, call_id=call_id, tool_name=tool_name, tool_input=tool_input, remembered=remembered
    )


async def ask_approval(tool: ResolvedTool, context: ApprovalContext) -> ApprovalDecision | Exception:
    """The tool's approval policy's decision for this call, or the error it raised (the call fails with it)."""
    try:
        return await tool.approval(context)
    except Exception as exc:
        return exc


@dataclass(frozen=True, slots=True)
class ShapedOutput:
    """A tool's return value as it is stored and read."""

    output: JsonValue
    """What is stored (`action.result`); content blocks as their JSON list."""
    model_output: JsonValue
    """What the model reads (`to_model_output` of `output`, when the tool has one)."""
    blocks: list[ContentBlock] | None
    """The content blocks, when the tool returned one or a list of them (they have no output schema)."""


def shape_output(tool: ResolvedTool, value: object) -> ShapedOutput:
    """`value`, a tool's return value, as stored and read.

    Raises:
        jsonschema.ValidationError: It is not content blocks and fails the tool's output schema.
        Exception: What the tool's `to_model_output` raised.
    """
    blocks = content_blocks(value)
    output = to_json_value(value if blocks is None else blocks)
    if blocks is None and tool.output_schema is not None:
        schema_validator(tool.output_schema).validate(output)
    model_output = output if tool.to_model_output is None else to_json_value(tool.to_model_output(output))
    return ShapedOutput(output, model_output, blocks)


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
            shaped = shape_output(tool, outcome.value)
            output, model_output = shaped.output, shaped.model_output
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
    # Made JSON by `shape_output` (or an error's text): not walked again.
    return ToolResultPart.trusted(
        tool_call_id=call.tool_call_id, tool_name=tool.name, output=model_output, is_error=is_error
    )
