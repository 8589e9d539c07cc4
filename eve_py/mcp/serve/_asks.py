"""The questions an MCP call asks besides its resolvers': an approval, and a client-resolved tool's result.

Both ride the same elicitation as a resolver's `Elicit(...)` (an `input_required` round on the
2026 era, an `elicitation/create` push before it), under keys no resolver can have:

- `eve:approval`: an approval-gated tool asks `{approve: boolean}` before its executor runs;
  anything but an accepted `approve: true` denies the call.
- `eve:result`: a client-resolved tool asks the client for its output. A flat object output
  schema is asked as it is; any other shape is asked as one `value` field holding JSON.
"""

from __future__ import annotations

import json

from eve_py._json import JsonObject, JsonSchema, JsonValue, canonical_dumps
from eve_py.errors import ToolError
from eve_py.parking._answers import schema_validator
from eve_py.protocol.pending import RecordedOutcome
from eve_py.resolvers import Question, question_digest
from eve_py.tools import ASK_QUESTION_TOOL_NAME, ResolvedTool

__all__ = (
    "APPROVAL_KEY",
    "RESULT_KEY",
    "approval_granted",
    "approval_question",
    "client_result",
    "result_question",
)

APPROVAL_KEY = "eve:approval"
RESULT_KEY = "eve:result"

_APPROVAL_SCHEMA: JsonSchema = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Approve", "description": "Let the tool run?"}},
    "required": ["approve"],
}
_PRIMITIVE_TYPES = frozenset({"string", "number", "integer", "boolean"})
_JSON_VALUE_SCHEMA: JsonSchema = {
    "type": "object",
    "properties": {"value": {"type": "string", "title": "Value", "description": "The result, as JSON."}},
    "required": ["value"],
}
_TEXT_SCHEMA: JsonSchema = {
    "type": "object",
    "properties": {"value": {"type": "string", "title": "Value", "description": "The result."}},
    "required": ["value"],
}


def _question(key: str, message: str, schema: JsonSchema) -> Question:
    return Question(key=key, message=message, schema=schema, digest=question_digest(message, schema))


def approval_question(tool: ResolvedTool, tool_input: JsonObject) -> Question:
    """The confirmation an approval-gated call asks before its executor runs."""
    return _question(
        APPROVAL_KEY, f"Allow the tool {tool.name!r} to run with {canonical_dumps(tool_input)}?", _APPROVAL_SCHEMA
    )


def approval_granted(outcome: RecordedOutcome) -> bool:
    """Only an accepted `approve: true` approves; decline, cancel and `false` deny."""
    return outcome.action == "accept" and isinstance(outcome.data, dict) and outcome.data.get("approve") is True


def _flat(schema: JsonSchema | None) -> bool:
    """Whether MCP's form elicitation can ask for `schema` as it is (an object of primitive fields)."""
    if schema is None or schema.get("type") != "object":
        return False
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return False
    return all(isinstance(p, dict) and ("enum" in p or p.get("type") in _PRIMITIVE_TYPES) for p in properties.values())


def _result_message(tool: ResolvedTool, tool_input: JsonObject) -> str:
    prompt = tool_input.get("prompt")
    if tool.name == ASK_QUESTION_TOOL_NAME and isinstance(prompt, str):
        options = tool_input.get("options")
        if isinstance(options, list) and options:
            listed = ", ".join(f"{o.get('id')} ({o.get('label')})" for o in options if isinstance(o, dict))
            return f"{prompt}\nOptions (answer with optionId): {listed}"
        return prompt
    return f"{tool.description}\nInput: {canonical_dumps(tool_input)}"


def result_question(tool: ResolvedTool, tool_input: JsonObject) -> Question:
    """The elicitation offering a client-resolved call to the client: its output schema as a form."""
    schema = tool.output_schema
    if _flat(schema):
        assert schema is not None
        form = schema
    else:
        form = _TEXT_SCHEMA if schema is None else _JSON_VALUE_SCHEMA
    return _question(RESULT_KEY, _result_message(tool, tool_input), form)


def client_result(tool: ResolvedTool, outcome: RecordedOutcome) -> JsonValue:
    """A client-resolved call's output from the client's answer.

    Raises:
        ToolError: The client declined or cancelled, sent a `value` that is not JSON, or an
            answer that fails the tool's output schema.
    """
    if outcome.action != "accept":
        raise ToolError(f"the client did not provide a result: elicitation was {outcome.action}")
    data = outcome.data
    schema = tool.output_schema
    if not _flat(schema) and isinstance(data, dict):
        value = data.get("value")
        if schema is None:
            return value
        try:
            data = json.loads(value) if isinstance(value, str) else value
        except ValueError as exc:
            raise ToolError(f"the client's value is not JSON: {exc}") from None
    if schema is not None:
        error = next(iter(schema_validator(schema).iter_errors(data)), None)
        if error is not None:
            raise ToolError(f"the client's result does not match the output schema: {error.message}")
    return data
