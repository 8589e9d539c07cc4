"""An eve-py conversation as AG-UI messages, for the `MESSAGES_SNAPSHOT` a client attaching to a thread gets.

The ids are positional (`user_3`, `assistant_4`) except a tool result's, `result_<callId>`, the
id its `TOOL_CALL_RESULT` carried when it streamed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ag_ui.core import (
    AssistantMessage,
    FunctionCall,
    Message,
    MessagesSnapshotEvent,
    ToolCall,
    ToolMessage,
    UserMessage,
)

from eve_py.protocol import messages as eve

__all__ = ("snapshot_of",)


def _json_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _message(index: int, message: eve.Message) -> list[Message]:
    if isinstance(message, eve.UserMessage):
        return [UserMessage(id=f"user_{index}", content=message.content)]
    if isinstance(message, eve.AssistantMessage):
        calls = [
            ToolCall(id=c.tool_call_id, function=FunctionCall(name=c.tool_name, arguments=_json_text(c.input)))
            for c in message.tool_calls
        ]
        return [AssistantMessage(id=f"assistant_{index}", content=message.text or None, tool_calls=calls or None)]
    return [
        ToolMessage(
            id=f"result_{part.tool_call_id}",
            tool_call_id=part.tool_call_id,
            content=_json_text(part.output),
            error=_json_text(part.output) if part.is_error else None,
        )
        for part in message.content
    ]


def snapshot_of(conversation: Sequence[eve.Message]) -> MessagesSnapshotEvent:
    """`MESSAGES_SNAPSHOT` of the whole stored conversation."""
    return MessagesSnapshotEvent(messages=[m for i, message in enumerate(conversation) for m in _message(i, message)])
