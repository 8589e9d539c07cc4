"""Authoring API: what an app's `agent/` files call."""

from eve_py.authoring.agent import AgentDefinition, define_agent
from eve_py.authoring.definition import (
    ApprovalPolicy,
    DisabledTool,
    ToolDefinition,
    define_client_tool,
    define_tool,
    disable_tool,
)
from eve_py.context import ApprovalContext, ToolContext

__all__ = (
    "AgentDefinition",
    "ApprovalContext",
    "ApprovalPolicy",
    "DisabledTool",
    "ToolContext",
    "ToolDefinition",
    "define_agent",
    "define_client_tool",
    "define_tool",
    "disable_tool",
)
