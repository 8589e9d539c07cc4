"""A running tool's progress reports and log entries as AG-UI activity: one activity message per call.

AG-UI 1.0's activity events carry what happens outside the conversation; `@ag-ui/client`'s
`HttpAgent` keeps each as a message with role `activity` (CopilotKit renders one by its
`activityType`). Pure translation, no I/O; `eve_py.server._ag_ui_events` calls it.

| eve-py event | AG-UI event |
|---|---|
| a call's first `action.progress` or `action.log` in the run | `ACTIVITY_SNAPSHOT` of the call's activity message |
| each later `action.progress` | `ACTIVITY_DELTA`: `/progress`, `/total`, `/message` replaced |
| each later `action.log` | `ACTIVITY_DELTA`: the entry appended to `/logs` |

The message id is `activity_<toolCallId>`, its `activityType` `tool-progress`, its content
`{toolCallId, toolName, progress, total, message, logs: [{level, data, logger?}]}` (`null`
for a field no report set yet). The reports come as they happen, while the call runs; a
client attaching to a stored thread gets each call's message as its reports left it, after the
call's result, in the `MESSAGES_SNAPSHOT` (`activity_messages`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ag_ui.core import ActivityDeltaEvent, ActivityMessage, ActivitySnapshotEvent, BaseEvent

from eve_py.protocol import ActionLog, ActionProgress

__all__ = ("ACTIVITY_TYPE", "ToolActivity", "activity_messages")

ACTIVITY_TYPE = "tool-progress"
"""The `activityType` of a tool call's activity message."""


def _message_id(call_id: str) -> str:
    """A call's activity message id: the same in a run's events and in a stored thread's snapshot."""
    return f"activity_{call_id}"


def _change(event: ActionProgress | ActionLog) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """What one report changes: the progress fields it replaces, or the log entry it appends."""
    if isinstance(event, ActionProgress):
        return {"progress": event.data.progress, "total": event.data.total, "message": event.data.message}, None
    entry: dict[str, Any] = {"level": event.data.level, "data": event.data.data}
    if event.data.logger is not None:
        entry["logger"] = event.data.logger
    return {}, entry


def _opened(event: ActionProgress | ActionLog) -> dict[str, Any]:
    """A call's activity content after its first report."""
    fields, entry = _change(event)
    content: dict[str, Any] = {"toolCallId": event.data.tool_call_id, "toolName": event.data.tool_name}
    return content | {"progress": None, "total": None, "message": None, **fields, "logs": [entry] if entry else []}


class ToolActivity:
    """The activity events of one run: a snapshot for each call's first report, deltas after."""

    def __init__(self) -> None:
        self._opened: set[str] = set()

    def events(self, event: ActionProgress | ActionLog) -> list[BaseEvent]:
        """The AG-UI event for one report."""
        message_id = _message_id(event.data.tool_call_id)
        if message_id not in self._opened:
            self._opened.add(message_id)
            content = _opened(event)
            return [ActivitySnapshotEvent(message_id=message_id, activity_type=ACTIVITY_TYPE, content=content)]
        fields, entry = _change(event)
        patch: list[Any] = [{"op": "replace", "path": f"/{key}", "value": value} for key, value in fields.items()]
        if entry is not None:
            patch = [{"op": "add", "path": "/logs/-", "value": entry}]
        return [ActivityDeltaEvent(message_id=message_id, activity_type=ACTIVITY_TYPE, patch=patch)]


def activity_messages(reports: Iterable[ActionProgress | ActionLog]) -> dict[str, ActivityMessage]:
    """Each call's activity message as its reports left it (what the run's snapshot and deltas built), by call id."""
    contents: dict[str, dict[str, Any]] = {}
    for event in reports:
        content = contents.get(event.data.tool_call_id)
        if content is None:
            contents[event.data.tool_call_id] = _opened(event)
            continue
        fields, entry = _change(event)
        content.update(fields)
        if entry is not None:
            content["logs"].append(entry)
    return {
        call_id: ActivityMessage(id=_message_id(call_id), activity_type=ACTIVITY_TYPE, content=content)
        for call_id, content in contents.items()
    }
