"""The runtime normalizer (`resolve_tool`) and the framework tools (the built-in `ask_question`)."""

from eve_py.runtime.ask_question import ASK_QUESTION_TOOL, ASK_QUESTION_TOOL_NAME
from eve_py.runtime.tools import ResolvedTool, resolve_tool, tool_name_from_path

__all__ = (
    "ASK_QUESTION_TOOL",
    "ASK_QUESTION_TOOL_NAME",
    "ResolvedTool",
    "resolve_tool",
    "tool_name_from_path",
)
