"""Context objects eve-py hands to tool executors and approval policies.

A parameter annotated `ToolContext` is filled by the runtime and never appears in the
model-facing input schema. An approval policy (`needs_approval=callable`) receives an
`ApprovalContext`.
"""

from __future__ import annotations

from dataclasses import dataclass

from eve_py._json import JsonObject

__all__ = ("ApprovalContext", "ToolContext")


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolContext:
    """What a running tool knows about the call it serves."""

    session_id: str
    """The session the call belongs to."""
    turn_id: str
    """The turn the call belongs to."""
    call_id: str
    """The model's id for this tool call (the `toolCallId` in the conversation)."""
    tool_name: str
    """The tool's name as the model sees it (its path under `agent/tools/`)."""
    approved: bool = False
    """True when the call ran because a person approved it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalContext:
    """What an approval policy sees when it decides whether a call needs a person's approval."""

    session_id: str
    """The session the call belongs to."""
    call_id: str
    """The model's id for the tool call."""
    tool_name: str
    """The tool's name as the model sees it."""
    tool_input: JsonObject
    """The call's input, as sent by the model and validated against the tool's input schema."""
    approved_tools: frozenset[str]
    """Names of tools a person already approved earlier in this session."""
