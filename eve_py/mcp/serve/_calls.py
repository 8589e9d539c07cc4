"""Running one MCP `tools/call` of an eve-py tool, on either protocol era.

One *attempt* runs the call as far as the answers recorded so far allow: the approval (for an
approval-gated tool), then the client's result (for a client-resolved tool) or the resolvers
and the executor (`ExecutorPlan.run`). It ends with a `CallToolResult` or with the questions
still open. The era decides how those questions travel, exactly as the SDK's resolvers do:

- 2026 era (>= 2026-07-28): the round returns an `InputRequiredResult`; the client answers
  and calls again with `inputResponses` and the `requestState` this server sealed, and the
  next attempt goes further (a question that depends on an answer comes in a later round);
- legacy era: each question is an `elicitation/create` request pushed mid-call, and the
  call attempts again at once with the answer recorded.

Resolver bodies may run again on every attempt; a recorded answer is used only when a
resolver asks the same question again (same key and digest), as in the SDK.

Arguments or an answer that are not JSON text (a lone UTF-16 surrogate, NaN, Infinity) are
refused with `-32602` before any tool code runs: the result repeating them could not be sent
after the executor's side effect, and a retry would run it twice. The call can be made (or the
round answered) again properly.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import jsonschema
import mcp_types as types
import pydantic
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp_types.version import is_version_at_least

from eve_py._context import SILENT, ApprovalContext, ToolChannel, ToolContext
from eve_py._json import JsonObject, JsonValue, to_json_value
from eve_py.authoring._signature import NeedsInput
from eve_py.errors import ToolError
from eve_py.mcp.serve._asks import approval_granted, approval_question, client_result, result_question
from eve_py.mcp.serve._once import Nonces
from eve_py.mcp.serve._results import content_result, crash_result, error_result, output_result
from eve_py.mcp.serve._rounds import (
    decode_state,
    elicit_request,
    encode_state,
    outcome_of,
    recorded_answers,
    refuse_not_json,
)
from eve_py.parking._answers import DENIED_MESSAGE, schema_validator
from eve_py.protocol.content import content_blocks
from eve_py.protocol.pending import RecordedOutcome
from eve_py.resolvers._solver import Question
from eve_py.tools._resolved import ResolvedTool

__all__ = (
    "CallSite",
    "INPUT_REQUIRED_VERSION",
    "LEGACY_MAX_ATTEMPTS",
    "attempt",
    "call_legacy",
    "call_modern",
    "uses_input_required",
)

logger = logging.getLogger("eve_py.mcp")

INPUT_REQUIRED_VERSION = "2026-07-28"
"""The first protocol revision whose `tools/call` carries questions in `InputRequiredResult`."""

LEGACY_MAX_ATTEMPTS = 32
"""How many times a legacy-era call may ask and attempt again before it gives up (a resolver
whose question changes on every attempt would otherwise ask forever)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CallSite:
    """Where a call comes from: what the tool's `ToolContext` and the capability check need."""

    session_id: str
    call_id: str
    capabilities: types.ClientCapabilities | None
    channel: ToolChannel = SILENT
    """Where the tool's progress, logs and sampling go (the calling client)."""


def uses_input_required(protocol_version: str | None) -> bool:
    """True when this connection's calls ask through `InputRequiredResult` (>= 2026-07-28)."""
    return protocol_version is not None and is_version_at_least(protocol_version, INPUT_REQUIRED_VERSION)


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
    tool: ResolvedTool, tool_input: JsonObject, site: CallSite, recorded: Mapping[str, RecordedOutcome]
) -> types.CallToolResult | list[Question]:
    ctx = ToolContext(
        session_id=site.session_id,
        turn_id=site.call_id,
        call_id=site.call_id,
        tool_name=tool.name,
        channel=site.channel,
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
    outcome = await tool.plan.run(tool_input, ctx, recorded)
    if isinstance(outcome, NeedsInput):
        return outcome.questions
    return _output(tool, outcome.value)


async def attempt(
    tool: ResolvedTool, arguments: Mapping[str, Any], site: CallSite, recorded: Mapping[str, RecordedOutcome]
) -> types.CallToolResult | list[Question]:
    """Run a call as far as `recorded` allows: its result, or the questions still open.

    Raises:
        MCPError: A resolver or the executor raised one (passed through, as in the SDK).
    """
    try:
        return await _run(tool, _arguments(tool, arguments), site, recorded)
    except MCPError:
        raise
    except (ToolError, pydantic.ValidationError) as exc:
        return error_result(tool.name, str(exc))
    except (Exception, jsonschema.ValidationError):
        logger.exception("Tool %r raised an unexpected exception", tool.name)
        return crash_result(tool.name)


def _require_elicitation(site: CallSite, question: Question) -> None:
    """The SDK's check: a question needs the client's form elicitation capability.

    Raises:
        MCPError: `MISSING_REQUIRED_CLIENT_CAPABILITY`, naming what the client must declare.
    """
    elicitation = site.capabilities.elicitation if site.capabilities is not None else None
    if elicitation is not None and (elicitation.form is not None or elicitation.url is None):
        return
    required = types.ClientCapabilities(elicitation=types.ElicitationCapability(form=types.FormElicitationCapability()))
    data = types.MissingRequiredClientCapabilityErrorData(required_capabilities=required)
    raise MCPError(
        code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=f"Client did not declare the form elicitation capability required by resolver {question.key!r}",
        data=data.model_dump(by_alias=True, mode="json", exclude_none=True),
    )


async def call_modern(
    tool: ResolvedTool, params: types.CallToolRequestParams, site: CallSite, nonces: Nonces
) -> types.CallToolResult | types.InputRequiredResult:
    """One 2026-era round: the result, or the open questions with the state to come back with.

    `params.request_state` is the plaintext the SDK's `RequestStateBoundary` already verified;
    its nonce is spent in `nonces` once the round's answers are read, before any tool code runs.

    Raises:
        MCPError: The arguments or an answer are not JSON text (`-32602`), the state was used
            before (`-32602 Invalid or expired requestState`), the client lacks form elicitation
            and a question is open, or a tool raised one.
    """
    refuse_not_json(f"The arguments of tool {tool.name!r}", params.arguments or {})
    state = decode_state(params.request_state)
    try:
        recorded = recorded_answers(state, params.input_responses)
    except ToolError as exc:
        return error_result(tool.name, str(exc))
    if state.n:
        await nonces.spend(state.n)
    outcome = await attempt(tool, params.arguments or {}, site, recorded)
    if isinstance(outcome, types.CallToolResult):
        return outcome
    for question in outcome:
        _require_elicitation(site, question)
    return types.InputRequiredResult(
        input_requests={q.key: elicit_request(q) for q in outcome},
        request_state=encode_state(recorded, outcome),
    )


async def call_legacy(
    tool: ResolvedTool,
    params: types.CallToolRequestParams,
    site: CallSite,
    *,
    session: ServerSession,
    request_id: types.RequestId | None,
) -> types.CallToolResult:
    """A legacy-era call: each open question is pushed as `elicitation/create`, then the call goes on.

    Args:
        session: The connection's `ServerSession` (its `elicit_form` sends the push).
        request_id: The `tools/call` request the pushes relate to.

    Raises:
        MCPError: The arguments or an answer are not JSON text (`-32602`), the client lacks form
            elicitation, the connection has no back-channel, or a tool raised one.
    """
    refuse_not_json(f"The arguments of tool {tool.name!r}", params.arguments or {})
    recorded: dict[str, RecordedOutcome] = {}
    for _ in range(LEGACY_MAX_ATTEMPTS):
        outcome = await attempt(tool, params.arguments or {}, site, recorded)
        if isinstance(outcome, types.CallToolResult):
            return outcome
        for question in outcome:
            if session.can_send_request:
                _require_elicitation(site, question)
            answer: types.ElicitResult = await session.elicit_form(
                question.message, question.schema, related_request_id=request_id
            )
            try:
                recorded[question.key] = outcome_of(question.key, answer, question.digest)
            except ToolError as exc:
                return error_result(tool.name, str(exc))
    return error_result(tool.name, f"the call asked questions {LEGACY_MAX_ATTEMPTS} times without finishing")
