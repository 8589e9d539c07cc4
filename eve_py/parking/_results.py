"""A call's one result, as the model sees it (`ToolResultPart`) and as the stream reports it (`action.result`).

Pure functions: they build results, `action.result` events and a step's messages, and check a
call's input against its tool's schema; nothing here writes or calls a model.
"""

from __future__ import annotations

from eve_py._json import JsonObject, JsonValue, canonical_dumps
from eve_py.parking._answers import first_schema_error
from eve_py.protocol import Event
from eve_py.protocol.content import content_from_json
from eve_py.protocol.messages import AssistantMessage, ToolCallPart, ToolMessage, ToolResultPart
from eve_py.protocol.payloads import ActionResultData, ActionResultError, ActionResultStatus, ToolResultAction
from eve_py.protocol.pending import PendingStep
from eve_py.protocol.turns import TurnState
from eve_py.tools import ResolvedTool

__all__ = (
    "EDITED_NOTE",
    "action_result",
    "denial",
    "edited_result",
    "error_result",
    "input_problem",
    "step_messages",
)

EDITED_NOTE = "A person changed this call's input when approving it; the tool ran with ranWith, not with your input."
"""What the model is told about a call a person edited (beside the input that ran)."""


def step_messages(pending: PendingStep) -> list[AssistantMessage | ToolMessage]:
    """The assistant message and one tool message with exactly one result per call, in call order."""
    parts = [pending.results[call.tool_call_id] for call in pending.assistant.tool_calls]
    return [pending.assistant, ToolMessage(content=parts)]


def denial(message: str, approval: JsonObject) -> JsonValue:
    """A denied call's `action.result` output: `{approval, code: TOOL_EXECUTION_DENIED, message, tool}`.

    Args:
        message: What the model is told (`denied_output`).
        approval: Who denied: `{requestId, status}` for a person's answer, `{policy: "approval",
            status: "denied"}` for the tool's policy.
    """
    return {"approval": approval, "code": "TOOL_EXECUTION_DENIED", "message": message, "tool": {"result": "not_run"}}


def error_result(call: ToolCallPart, message: str) -> ToolResultPart:
    """The one error result `call` gets when it cannot run (the model reads `message`)."""
    return ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, output=message, is_error=True)


def edited_result(result: ToolResultPart, ran_with: JsonObject) -> ToolResultPart:
    """`result` of a call a person edited, telling the model so: `{note, ranWith, output}`.

    The call in the history keeps the model's input; this result is where the model learns
    what actually ran. A result of content blocks (images, audio, resources) stays content:
    a first text block says `{note, ranWith}` and the blocks follow, so the model still gets the
    images as images.
    """
    note: JsonObject = {"note": EDITED_NOTE, "ranWith": ran_with}
    told: JsonValue = note | {"output": result.output}
    if isinstance(result.output, list) and content_from_json(result.output) is not None:
        told = [{"type": "text", "text": canonical_dumps(note)}, *result.output]
    return result.model_copy(update={"output": told})


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
    # `output` is eve-py's: a tool's output made JSON (`to_json_value`), an error's text, a denial.
    result = ToolResultAction.trusted(
        call_id=call.tool_call_id, tool_name=call.tool_name, output=output, is_error=is_error or None
    )
    data = ActionResultData(
        sequence=turn.sequence, turn_id=turn.turn_id, step_index=step_index, result=result, status=status, error=error
    )
    return turn.stamp(data)


def input_problem(tool: ResolvedTool, call: ToolCallPart) -> str | None:
    """Why the call's input does not fit the tool's input schema, or None when it does."""
    found = first_schema_error(tool.input_schema, call.input)
    if found is None:
        return None
    where, error = found
    return (
        f"Invalid input for tool {tool.name!r} at {where}: {error.message}. "
        "Call it again with input matching its schema."
    )
