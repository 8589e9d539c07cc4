"""An eve-py conversation as AG-UI messages, for the `MESSAGES_SNAPSHOT` a client attaching to a thread gets.

The ids are positional (`user_3`, `assistant_4`) except a tool result's, `result_<callId>`, the
id its `TOOL_CALL_RESULT` carried when it streamed, and a call's activity message's (its
progress reports and log entries), `activity_<callId>`, which follows the call's result.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from ag_ui.core import (
    ActivityMessage,
    AssistantMessage,
    FunctionCall,
    Message,
    MessagesSnapshotEvent,
    ToolCall,
    ToolMessage,
    UserMessage,
)

from eve_py.protocol import ActionLog, ActionProgress
from eve_py.protocol import messages as eve
from eve_py.server._ag_ui_activity import activity_messages

__all__ = ("snapshot_of",)


def _json_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _message(index: int, message: eve.Message, activity: dict[str, ActivityMessage]) -> list[Message]:
    if isinstance(message, eve.UserMessage):
        return [UserMessage(id=f"user_{index}", content=message.content)]
    if isinstance(message, eve.AssistantMessage):
        calls = [
            ToolCall(id=c.tool_call_id, function=FunctionCall(name=c.tool_name, arguments=_json_text(c.input)))
            for c in message.tool_calls
        ]
        return [AssistantMessage(id=f"assistant_{index}", content=message.text or None, tool_calls=calls or None)]
    results: list[Message] = []
    for part in message.content:
        results.append(
            ToolMessage(
                id=f"result_{part.tool_call_id}",
                tool_call_id=part.tool_call_id,
                content=_json_text(part.output),
                error=_json_text(part.output) if part.is_error else None,
            )
        )
        if part.tool_call_id in activity:
            results.append(activity[part.tool_call_id])
    return results


def snapshot_of(
    conversation: Sequence[eve.Message], reports: Iterable[ActionProgress | ActionLog] = ()
) -> MessagesSnapshotEvent:
    """`MESSAGES_SNAPSHOT` of the whole stored conversation, each call's activity message after its result.

    Args:
        conversation: The session's messages.
        reports: The session's `action.progress` and `action.log` events, in log order.
    """
    activity = activity_messages(reports)
    return MessagesSnapshotEvent(
        messages=[m for i, message in enumerate(conversation) for m in _message(i, message, activity)]
    )
