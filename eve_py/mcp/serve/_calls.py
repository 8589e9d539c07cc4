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
from dataclasses import replace
from typing import Any

import jsonschema
import mcp_types as types
import pydantic
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError

from eve_py._context import ApprovalContext, ClientInputPending, ToolChannel, ToolContext
from eve_py._json import JsonObject, JsonValue, to_json_value
from eve_py.authoring._signature import NeedsInput
from eve_py.errors import ToolError
from eve_py.mcp.serve._asks import approval_granted, approval_question, client_result, result_question
from eve_py.mcp.serve._drive import CallSite, legacy_call, modern_round
from eve_py.mcp.serve._once import Nonces
from eve_py.mcp.serve._results import content_result, crash_result, error_result, output_result
from eve_py.mcp.serve._rounds import refuse_not_json
from eve_py.parking._answers import DENIED_MESSAGE, schema_validator
from eve_py.protocol.content import content_blocks
from eve_py.protocol.pending import RecordedOutcome
from eve_py.resolvers._solver import Question
from eve_py.tools._resolved import ResolvedTool

__all__ = ("attempt", "call_legacy", "call_modern")

logger = logging.getLogger("eve_py.mcp")


def _answer(recorded: Mapping[str, RecordedOutcome], question: Question) -> RecordedOutcome | None:
    entry = recorded.get(question.key)
    return entry if entry is not None and entry.q == question.digest else None


def _arguments(tool: ResolvedTool, arguments: Mapping[str, Any]) -> JsonObject:
    """The call's arguments checked against the tool's input (pydantic for executors, the schema otherwise).

    Raises:
        pydantic.ValidationError: An executor's arguments do not fit its parameters.
        ToolError: A client-resolved tool's arguments fail its input schema.
    """
    if tool.plan is not None:
        tool.plan.arguments_model.model_validate(dict(arguments))
        return dict(arguments)
    error = next(iter(schema_validator(tool.input_schema).iter_errors(dict(arguments))), None)
    if error is not None:
        raise ToolError(f"invalid arguments: {error.message}")
    return dict(arguments)


def _output(tool: ResolvedTool, value: object) -> types.CallToolResult:
    blocks = content_blocks(value)
    if blocks is not None:
        return content_result(blocks)
    output: JsonValue = to_json_value(value)
    if tool.output_schema is not None:
        schema_validator(tool.output_schema).validate(output)
    model_output = output if tool.to_model_output is None else to_json_value(tool.to_model_output(output))
    return output_result(output, model_output)


async def _run(
    tool: ResolvedTool,
    tool_input: JsonObject,
    site: CallSite,
    recorded: Mapping[str, RecordedOutcome],
    channel: ToolChannel,
) -> types.CallToolResult | list[Question]:
    ctx = ToolContext(
        session_id=site.session_id,
        turn_id=site.call_id,
        call_id=site.call_id,
        tool_name=tool.name,
        channel=channel,
    )
    if tool.plan is None:
        question = result_question(tool, tool_input)
        answer = _answer(recorded, question)
        if answer is None:
            return [question]
        return _output(tool, client_result(tool, answer))
    approval = ApprovalContext(
        session_id=site.session_id,
        call_id=site.call_id,
        tool_name=tool.name,
        tool_input=tool_input,
        approved_tools=frozenset(),
    )
    if await tool.approval_required(approval):
        question = approval_question(tool, tool_input)
        answer = _answer(recorded, question)
        if answer is None:
            return [question]
        if not approval_granted(answer):
            return error_result(tool.name, DENIED_MESSAGE)
        ctx = replace(ctx, approved=True)
    try:
        outcome = await tool.plan.run(tool_input, ctx, recorded)
    except ClientInputPending:
        return []  # the executor asked the client: the request waits in the channel
    if isinstance(outcome, NeedsInput):
        return outcome.questions
    return _output(tool, outcome.value)


async def attempt(
    tool: ResolvedTool,
    arguments: Mapping[str, Any],
    site: CallSite,
    recorded: Mapping[str, RecordedOutcome],
    channel: ToolChannel,
) -> types.CallToolResult | list[Question]:
    """Run a call as far as `recorded` allows, its context on `channel`: its result, or the questions still open.

    Raises:
        MCPError: A resolver or the executor raised one (passed through, as in the SDK).
    """
    try:
        return await _run(tool, _arguments(tool, arguments), site, recorded, channel)
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
    """The call's `attempt`, its arguments checked once (`-32602` when they are not JSON text), for either era."""
    arguments = params.arguments or {}
    refuse_not_json(f"The arguments of tool {tool.name!r}", arguments)

    async def run(
        recorded: Mapping[str, RecordedOutcome], channel: ToolChannel
    ) -> types.CallToolResult | list[Question]:
        return await attempt(tool, arguments, site, recorded, channel)

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
