"""Running one MCP `tools/call` of an eve-py tool, on either protocol era.

One *attempt* runs the call as far as the answers recorded so far allow: the approval (for an
approval-gated tool), then the client's result (for a client-resolved tool) or the resolvers
and the executor (`ExecutorPlan.run`). It ends with a `CallToolResult` or with the questions
still open; `_drive` carries them to the client as the era asks (an `InputRequiredResult` round
on the 2026 era, `elicitation/create` pushes before it). On the 2026 era a tool's
`ctx.sample(...)` or `ctx.list_roots()` without an answer yet ends the attempt too, its request
asked in the same round.

Resolver bodies (and, on the 2026 era, an executor that asks the client) may run again on every
attempt; a recorded answer is used only when the same question is asked again (same key and
digest), as in the SDK.

Arguments or an answer that are not JSON text (a lone UTF-16 surrogate, NaN, Infinity) are
refused with `-32602` before any tool code runs: the result repeating them could not be sent
after the executor's side effect, and a retry would run it twice. The call can be made (or the
round answered) again properly.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema
import mcp_types as types
import pydantic
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError

from eve_py._context import ClientInputPending, ToolChannel, ToolContext
from eve_py._json import JsonObject
from eve_py.authoring._signature import NeedsInput
from eve_py.errors import ToolError
from eve_py.harness import approval_context, shape_output
from eve_py.mcp.serve._asks import approval_granted, approval_question, client_result, result_question
from eve_py.mcp.serve._drive import CallSite, legacy_call, modern_round
from eve_py.mcp.serve._once import Nonces
from eve_py.mcp.serve._results import content_result, crash_result, error_result, output_result
from eve_py.mcp.serve._rounds import refuse_not_json
from eve_py.parking._answers import DENIED_MESSAGE, denied_output, schema_validator
from eve_py.protocol.pending import RecordedOutcome
from eve_py.resolvers import Question
from eve_py.tools import ResolvedTool

__all__ = ("attempt", "call_legacy", "call_modern")

logger = logging.getLogger("eve_py.mcp")


def _answer(recorded: Mapping[str, RecordedOutcome], question: Question) -> RecordedOutcome | None:
    entry = recorded.get(question.key)
    return entry if entry is not None and entry.q == question.digest else None


@dataclass(frozen=True, slots=True)
class _Checked:
    """A call's arguments, checked once for all its attempts."""

    tool_input: JsonObject
    """The arguments as the client sent them (what an approval or a client-resolved question shows)."""
    kwargs: dict[str, Any] | None
    """The executor's validated keyword arguments (`ExecutorPlan.check`); None for a client-resolved tool."""


def _checked(tool: ResolvedTool, arguments: Mapping[str, Any]) -> _Checked:
    """The call's arguments checked against the tool's input (pydantic for executors, the schema otherwise).

    Raises:
        pydantic.ValidationError: An executor's arguments do not fit its parameters.
        ToolError: A client-resolved tool's arguments fail its input schema.
    """
    tool_input = dict(arguments)
    if tool.plan is not None:
        return _Checked(tool_input=tool_input, kwargs=tool.plan.check(tool_input))
    error = next(iter(schema_validator(tool.input_schema).iter_errors(tool_input)), None)
    if error is not None:
        raise ToolError(f"invalid arguments: {error.message}")
    return _Checked(tool_input=tool_input, kwargs=None)


def _output(tool: ResolvedTool, value: object) -> types.CallToolResult:
    shaped = shape_output(tool, value)  # the agent loop's shaping, so both read a tool's output alike
    if shaped.blocks is not None:
        return content_result(shaped.blocks)
    return output_result(shaped.output, shaped.model_output)


async def _run(
    tool: ResolvedTool,
    checked: _Checked,
    site: CallSite,
    recorded: Mapping[str, RecordedOutcome],
    channel: ToolChannel,
) -> types.CallToolResult | list[Question]:
    tool_input = checked.tool_input
    if tool.plan is None or checked.kwargs is None:
        question = result_question(tool, tool_input)
        answer = _answer(recorded, question)
        if answer is None:
            return [question]
        return _output(tool, client_result(tool, answer))
    approved = False
    # A tool that never needs approval skips building the policy's context on every call.
    decision = None
    if tool.needs_approval is not False:
        asked = approval_context(site.session_id, site.call_id, tool.name, tool_input)
        decision = await tool.approval(asked)
    if decision is not None and decision.outcome == "deny":
        return error_result(tool.name, denied_output(decision.reason))
    if decision is not None and decision.outcome == "ask":
        question = approval_question(tool, tool_input)
        answer = _answer(recorded, question)
        if answer is None:
            return [question]
        if not approval_granted(answer):
            return error_result(tool.name, DENIED_MESSAGE)
        approved = True
    ctx = ToolContext(
        session_id=site.session_id,
        turn_id=site.call_id,
        call_id=site.call_id,
        tool_name=tool.name,
        approved=approved,
        channel=channel,
    )
    try:
        outcome = await tool.plan.run_checked(checked.kwargs, ctx, recorded)
    except ClientInputPending:
        return []  # the executor asked the client: the request waits in the channel
    if isinstance(outcome, NeedsInput):
        return outcome.questions
    return _output(tool, outcome.value)


async def attempt(
    tool: ResolvedTool,
    checked: _Checked,
    site: CallSite,
    recorded: Mapping[str, RecordedOutcome],
    channel: ToolChannel,
) -> types.CallToolResult | list[Question]:
    """Run a call as far as `recorded` allows, its context on `channel`: its result, or the questions still open.

    Raises:
        MCPError: A resolver or the executor raised one (passed through, as in the SDK).
    """
    try:
        return await _run(tool, checked, site, recorded, channel)
    except MCPError:
        raise
    except (ToolError, pydantic.ValidationError) as exc:
        return error_result(tool.name, str(exc))
    except (Exception, jsonschema.ValidationError):
        logger.exception("Tool %r raised an unexpected exception", tool.name)
        return crash_result(tool.name)


def _attempts(
    tool: ResolvedTool, params: types.CallToolRequestParams, site: CallSite
) -> Callable[[Mapping[str, RecordedOutcome], ToolChannel], Awaitable[types.CallToolResult | list[Question]]]:
    """The call's `attempt`, its arguments checked once for every attempt, for either era.

    Arguments that do not fit the tool make every attempt the SDK's error result, and no tool
    code runs.

    Raises:
        MCPError: The arguments are not JSON text (`-32602`).
    """
    arguments = params.arguments or {}
    refuse_not_json(f"The arguments of tool {tool.name!r}", arguments)
    try:
        checked = _checked(tool, arguments)
    except (ToolError, pydantic.ValidationError) as exc:
        refused = error_result(tool.name, str(exc))

        async def refuse(
            recorded: Mapping[str, RecordedOutcome], channel: ToolChannel
        ) -> types.CallToolResult | list[Question]:
            return refused

        return refuse

    async def run(
        recorded: Mapping[str, RecordedOutcome], channel: ToolChannel
    ) -> types.CallToolResult | list[Question]:
        return await attempt(tool, checked, site, recorded, channel)

    return run


async def call_modern(
    tool: ResolvedTool, params: types.CallToolRequestParams, site: CallSite, nonces: Nonces
) -> types.CallToolResult | types.InputRequiredResult:
    """One 2026-era round of a call (`_drive.modern_round`): the result, or the open questions.

    Raises:
        MCPError: The arguments or an answer are not JSON text (`-32602`), the state was used
            before (`-32602 Invalid or expired requestState`), the client lacks a capability a
            question needs (`-32021`), or a tool raised one.
    """
    run = _attempts(tool, params, site)
    try:
        return await modern_round(
            run, request_state=params.request_state, input_responses=params.input_responses, site=site, nonces=nonces
        )
    except ToolError as exc:
        return error_result(tool.name, str(exc))


async def call_legacy(
    tool: ResolvedTool,
    params: types.CallToolRequestParams,
    site: CallSite,
    *,
    session: ServerSession,
    request_id: types.RequestId | None,
) -> types.CallToolResult:
    """A legacy-era call (`_drive.legacy_call`): each open question is pushed as `elicitation/create`.

    Raises:
        MCPError: The arguments or an answer are not JSON text (`-32602`), the client lacks form
            elicitation, the connection has no back-channel, or a tool raised one.
    """
    run = _attempts(tool, params, site)
    try:
        return await legacy_call(run, site=site, session=session, request_id=request_id)
    except ToolError as exc:
        return error_result(tool.name, str(exc))
