"""The built-in `ask_question` tool: a client-resolved question with optional options.

Offered to the model unless an app overrides it (`agent/tools/ask_question.py`) or disables it
(`tool = disable_tool()` there). Its input and output schemas are strict.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from eve_py._json import JsonSchema
from eve_py.tools._resolved import ResolvedTool

__all__ = (
    "ASK_QUESTION_INPUT_SCHEMA",
    "ASK_QUESTION_OUTPUT_SCHEMA",
    "ASK_QUESTION_TOOL",
    "ASK_QUESTION_TOOL_NAME",
    "FRAMEWORK_TOOLS",
)

ASK_QUESTION_TOOL_NAME = "ask_question"


class _Option(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    label: str
    description: str | None = None
    style: Literal["primary", "danger", "default"] | None = None


class _AskQuestionInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    prompt: str
    options: list[_Option] | None = None
    allowFreeform: bool | None = None  # noqa: N815  # the wire name is the field name


def _strict_schema() -> JsonSchema:
    schema = _AskQuestionInput.model_json_schema()
    schema.pop("title", None)
    return schema


ASK_QUESTION_INPUT_SCHEMA: JsonSchema = _strict_schema()
"""`{prompt, options?: [{id, label, description?, style?}], allowFreeform?}`, no other keys."""

ASK_QUESTION_OUTPUT_SCHEMA: JsonSchema = {
    "type": "object",
    "properties": {
        "status": {"enum": ["answered", "ignored"]},
        "optionId": {"type": "string"},
        "text": {"type": "string"},
    },
    "required": ["status"],
    "additionalProperties": False,
}
"""`{status: "answered" | "ignored", optionId?, text?}`."""

ASK_QUESTION_TOOL = ResolvedTool(
    name=ASK_QUESTION_TOOL_NAME,
    description=(
        "Ask the user a question and wait for their response before continuing. "
        "Use this when you need clarification or a choice from the user."
    ),
    input_schema=ASK_QUESTION_INPUT_SCHEMA,
    output_schema=None,
    client_resolved=True,
    needs_approval=False,
    to_model_output=None,
    path="eve:framework/ask-question",
    plan=None,
)
"""The framework tool. Its answers are `{status, optionId?, text?}` (no `value` schema)."""

FRAMEWORK_TOOLS: dict[str, ResolvedTool] = {ASK_QUESTION_TOOL_NAME: ASK_QUESTION_TOOL}
"""Framework tools by name, offered unless overridden or disabled."""
