"""Tools as the runtime runs them.

The load-time normalizer (`resolve_tool` turns a `ToolDefinition` into a `ResolvedTool`) and the
framework tools (the built-in `ask_question`).
"""

from eve_py.tools._ask_question import ASK_QUESTION_TOOL, ASK_QUESTION_TOOL_NAME
from eve_py.tools._resolved import ResolvedTool, resolve_tool, tool_name_from_path

__all__ = (
    "ASK_QUESTION_TOOL",
    "ASK_QUESTION_TOOL_NAME",
    "ResolvedTool",
    "resolve_tool",
    "tool_name_from_path",
)
