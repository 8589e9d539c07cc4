"""Authoring API: what an app's `agent/` files call."""

from eve_py._context import ApprovalContext, Root, ToolContext
from eve_py.authoring._agent import AgentDefinition, define_agent
from eve_py.authoring._approval import ApprovalPolicy
from eve_py.authoring._definition import (
    DisabledTool,
    ToolDefinition,
    define_client_tool,
    define_tool,
    disable_tool,
)

__all__ = (
    "AgentDefinition",
    "ApprovalContext",
    "ApprovalPolicy",
    "DisabledTool",
    "Root",
    "ToolContext",
    "ToolDefinition",
    "define_agent",
    "define_client_tool",
    "define_tool",
    "disable_tool",
)
