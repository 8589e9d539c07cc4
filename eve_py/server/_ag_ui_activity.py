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
for a field no report set yet). The reports come as they happen, while the call runs.
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import ActivityDeltaEvent, ActivitySnapshotEvent, BaseEvent

from eve_py.protocol import ActionLog, ActionProgress

__all__ = ("ACTIVITY_TYPE", "ToolActivity")

ACTIVITY_TYPE = "tool-progress"
"""The `activityType` of a tool call's activity message."""


class ToolActivity:
    """The activity events of one run: a snapshot for each call's first report, deltas after."""

    def __init__(self) -> None:
        self._opened: set[str] = set()

    def events(self, event: ActionProgress | ActionLog) -> list[BaseEvent]:
        """The AG-UI event for one report."""
        data = event.data
        message_id = f"activity_{data.tool_call_id}"
        fields: dict[str, Any] = {}
        entry: dict[str, Any] | None = None
        if isinstance(event, ActionProgress):
            fields = {"progress": event.data.progress, "total": event.data.total, "message": event.data.message}
        else:
            entry = {"level": event.data.level, "data": event.data.data}
            if event.data.logger is not None:
                entry["logger"] = event.data.logger
        if message_id not in self._opened:
            self._opened.add(message_id)
            content: dict[str, Any] = {"toolCallId": data.tool_call_id, "toolName": data.tool_name}
            content |= {"progress": None, "total": None, "message": None, **fields, "logs": [entry] if entry else []}
            return [ActivitySnapshotEvent(message_id=message_id, activity_type=ACTIVITY_TYPE, content=content)]
        patch: list[Any] = [{"op": "replace", "path": f"/{key}", "value": value} for key, value in fields.items()]
        if entry is not None:
            patch = [{"op": "add", "path": "/logs/-", "value": entry}]
        return [ActivityDeltaEvent(message_id=message_id, activity_type=ACTIVITY_TYPE, patch=patch)]
