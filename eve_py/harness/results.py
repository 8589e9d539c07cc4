"""A call's one result, as the model sees it and as the stream reports it; and a turn's structured result.

Pure functions: they build `ToolResultPart`s, `action.result` events and step messages, and check
inputs and final answers against JSON Schemas; nothing here writes or calls a model.
"""

from __future__ import annotations

import json

from eve_py._json import JsonSchema, JsonValue
from eve_py.events import Event
from eve_py.events.payloads import ActionResultData, ActionResultError, ActionResultStatus, ToolResultAction
from eve_py.harness.stamp import stamp
from eve_py.models.messages import AssistantMessage, ToolCallPart, ToolMessage, ToolResultPart
from eve_py.parking.answers import schema_validator
from eve_py.parking.batch import PendingStep
from eve_py.sessions.record import TurnState
from eve_py.tools.resolved import ResolvedTool

__all__ = ("action_result", "error_result", "input_problem", "step_messages", "structured_result")


def step_messages(pending: PendingStep) -> list[AssistantMessage | ToolMessage]:
    """The assistant message and one tool message with exactly one result per call, in call order."""
    parts = [pending.results[call.tool_call_id] for call in pending.assistant.tool_calls]
    return [pending.assistant, ToolMessage(content=parts)]


def error_result(call: ToolCallPart, message: str) -> ToolResultPart:
    return ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, output=message, is_error=True)


def action_result(
    turn: TurnState,
    step_index: int,
    call: ToolCallPart,
    output: JsonValue,
    status: ActionResultStatus,
    code: str | None = None,
    error_name: str | None = None,
) -> Event:
    """`action.result`: a call's full output (before `to_model_output`), or why it failed or was rejected."""
    is_error = status != "completed"
    error = None
    if is_error:
        message = output.get("message") if isinstance(output, dict) else output
        error = ActionResultError(code=code or "TOOL_ERROR", message=str(message), name=error_name)
    result = ToolResultAction(
        call_id=call.tool_call_id, tool_name=call.tool_name, output=output, is_error=is_error or None
    )
    data = ActionResultData(
        sequence=turn.sequence, turn_id=turn.turn_id, step_index=step_index, result=result, status=status, error=error
    )
    return stamp(turn, data)


def input_problem(tool: ResolvedTool, call: ToolCallPart) -> str | None:
    """Why the call's input does not fit the tool's input schema, or None when it does."""
    errors = sorted(schema_validator(tool.input_schema).iter_errors(call.input), key=str)
    if not errors:
        return None
    error = errors[0]
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return (
        f"Invalid input for tool {tool.name!r} at {where}: {error.message}. "
        "Call it again with input matching its schema."
    )


def structured_result(text: str, schema: JsonSchema) -> tuple[JsonValue, str | None]:
    """A final answer read as the turn's structured result: (value, None), or (None, why it is not one)."""
    raw = text.strip()
    if raw.startswith("```"):
        raw = raw.strip("`").removeprefix("json").strip()
    try:
        value: JsonValue = json.loads(raw)
    except json.JSONDecodeError:
        return None, "The model's final answer is not JSON, but the turn asked for a result matching its outputSchema."
    errors = sorted(schema_validator(schema).iter_errors(value), key=str)
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "(root)"
        return None, f"The model's final answer fails the turn's outputSchema at {where}: {errors[0].message}"
    return value, None
