"""Turn a model's tool calls into input requests: which calls park, and how they are shown."""

from __future__ import annotations

from eve_py.protocol.messages import ToolCallPart
from eve_py.protocol.requests import Display, InputOption, InputRequest, RequestKind, ToolCallAction
from eve_py.resolvers import Question
from eve_py.tools import ASK_QUESTION_TOOL_NAME, ResolvedTool

__all__ = ("APPROVAL_OPTIONS", "approval_request", "client_request", "elicitation_request")

APPROVAL_OPTIONS = (
    InputOption(id="approve", label="Approve", style="primary"),
    InputOption(id="deny", label="Deny", style="danger"),
)
"""The options of every `tool-approval` request."""


def _action(call: ToolCallPart) -> ToolCallAction:
    # The call's input was validated when the model's response became its message.
    return ToolCallAction.trusted(call_id=call.tool_call_id, tool_name=call.tool_name, input=call.input)


def _options(raw: object) -> list[InputOption] | None:
    """Options from a call's input; entries that are not `{id, label, ...}` objects are skipped."""
    if not isinstance(raw, list):
        return None
    options = []
    for entry in raw:
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            label = entry.get("label")
            description = entry.get("description")
            style = entry.get("style")
            options.append(
                InputOption.trusted(  # strings of the call's input, validated with its message
                    id=entry["id"],
                    label=label if isinstance(label, str) else entry["id"],
                    description=description if isinstance(description, str) else None,
                    style=style if style in ("primary", "danger", "default") else None,
                )
            )
    return options or None


def client_request(call: ToolCallPart, tool: ResolvedTool) -> InputRequest:
    """The request for a call to a client-resolved tool (`ask_question` or any other).

    The request id is the call id, so it never changes, even across a crash and a retry.
    """
    prompt = call.input.get("prompt")
    options = _options(call.input.get("options"))
    allow_freeform = call.input.get("allowFreeform")
    kind: RequestKind = "question" if tool.name == ASK_QUESTION_TOOL_NAME else "client-tool"
    display: Display = "select" if options else ("form" if tool.output_schema is not None else "text")
    # From the call's validated input and the compiled tool: not validated again (the schema
    # stays the tool's own dict, so the answer's check finds its validator by identity).
    return InputRequest.trusted(
        request_id=call.tool_call_id,
        kind=kind,
        action=_action(call),
        prompt=prompt if isinstance(prompt, str) else tool.description,
        display=display,
        options=options,
        allow_freeform=allow_freeform if isinstance(allow_freeform, bool) else None,
        response_schema=tool.output_schema,
    )


def approval_request(call: ToolCallPart, tool: ResolvedTool, *, remember: bool = False) -> InputRequest:
    """The request for a call that needs a person's approval before its executor runs.

    An editable tool's request carries its model-facing input schema (`edit_schema`), so an
    approval's edit is checked with the request alone; `remember` (a `once()` prompt) marks an
    answer the session remembers for the tool.
    """
    return InputRequest.trusted(  # from the call's validated input and the compiled tool
        request_id=call.tool_call_id,
        kind="tool-approval",
        action=_action(call),
        prompt=f"Approve tool call: {call.tool_name}",
        display="confirmation",
        options=list(APPROVAL_OPTIONS),
        allow_freeform=False,
        edit_schema=tool.input_schema if tool.editable else None,
        approvers=list(tool.approvers) if isinstance(tool.approvers, tuple) else None,
        approvals_required=tool.approvals_required if tool.approvals_required > 1 else None,
        remember=remember or None,
    )


def elicitation_request(call: ToolCallPart, question: Question) -> InputRequest:
    """The request for a resolver's question (display `form`, `schema` = the answer's JSON Schema).

    The id joins the call id, the resolver key and the question's digest, so it is stable across
    restarts and a reworded question gets a new one.
    """
    return InputRequest(
        request_id=f"{call.tool_call_id}:{question.key}:{question.digest[:12]}",
        kind="elicitation",
        action=_action(call),
        prompt=question.message,
        display="form",
        response_schema=question.schema,
    )
