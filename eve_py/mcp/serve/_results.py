"""A tool call's outcome as the MCP `CallToolResult` the SDK's `MCPServer` would send.

Texts match the SDK's: a failure the tool meant (`ToolError`, arguments that do not fit) reads
`Error executing tool <name>: <message>`; a crash reads `Error executing tool <name>` and
keeps its details in the server's log; an unknown tool reads `Unknown tool: <name>`.
"""

from __future__ import annotations

import json
import logging

import mcp_types as types
from pydantic import TypeAdapter

from eve_py._json import JsonValue
from eve_py.protocol.content import ContentBlock

__all__ = ("content_result", "crash_result", "error_result", "mcp_block", "output_result", "unknown_tool_result")

_BLOCK: TypeAdapter[types.ContentBlock] = TypeAdapter(types.ContentBlock)

logger = logging.getLogger("eve_py.mcp")


def _text(value: JsonValue) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def output_result(output: JsonValue, model_output: JsonValue) -> types.CallToolResult:
    """A successful call: the model-facing output as text, the full output as structured content.

    Args:
        output: What the executor returned (or the client answered), as JSON.
        model_output: The tool's `to_model_output` projection of it (the output itself without one).
    """
    structured = output if isinstance(output, dict) else None
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=_text(model_output))], structured_content=structured
    )


def mcp_block(block: ContentBlock) -> types.ContentBlock:
    """An eve-py content block as the SDK's (the same JSON shape)."""
    return _BLOCK.validate_python(block.model_dump(by_alias=True, exclude_none=True))


def content_result(blocks: list[ContentBlock]) -> types.CallToolResult:
    """A successful call that returned rich content: its blocks are the result's content, as they are."""
    return types.CallToolResult(content=[mcp_block(block) for block in blocks])


def error_result(tool_name: str, message: str) -> types.CallToolResult:
    """A failure the tool meant: `Error executing tool <name>: <message>`."""
    logger.info("Tool %r failed: %r", tool_name, message)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"Error executing tool {tool_name}: {message}")], is_error=True
    )


def crash_result(tool_name: str) -> types.CallToolResult:
    """A crash: the exception's text stays on the server (log it with `logger.exception` first)."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"Error executing tool {tool_name}")], is_error=True
    )


def unknown_tool_result(name: str) -> types.CallToolResult:
    """The SDK's answer to a call of a tool the server does not have."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"Unknown tool: {name}")], is_error=True)
