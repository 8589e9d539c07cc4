"""A session as eve's MCP channel shows it: an *invocation* (`invocationId`, `status`, `inputRequests`, ...).

eve's MCP channel publishes an agent as four tools (`agent_start`, `agent_get`, `agent_update`,
`agent_cancel`) whose results are one invocation object, as structured content and as JSON text:

```json
{"invocationId": "ses_...", "status": "input_required", "createdAt": "...",
 "inputRequests": {"req_...": {"requestId": "req_...", "kind": "select", ...}}}
```

`status` is derived from the stored session: `working` (a turn runs), `input_required` (parked;
`inputRequests` holds the open requests by id, in eve-py's wire form), `completed` (`result` is
the turn's structured result, else the assistant's last text), `failed` (`error` says why) or
`cancelled`. An invocation is an eve-py session, so it lives in the session store like any other.
"""

from __future__ import annotations

from typing import Literal

from eve_py._json import JsonObject, JsonValue
from eve_py.harness import Session

__all__ = ("InvocationStatus", "invocation")

InvocationStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]

_TAIL = 64
"""How many of the session's last events are read to find how its last turn ended."""


async def _ending(session: Session) -> tuple[InvocationStatus, JsonObject]:
    """How the session's last turn ended, from the tail of its event log (its result or error)."""
    record = session.record
    events = await session.events(max(0, record.event_count - _TAIL))
    fields: JsonObject = {}
    for event in reversed(events):
        data = event.data
        if event.type == "turn.cancelled":
            return "cancelled", fields
        if event.type == "turn.failed":
            return "failed", {"error": {"code": -32603, "message": str(getattr(data, "message", "the turn failed"))}}
        if event.type == "result.completed" and "result" not in fields:
            result: JsonValue = getattr(data, "result", None)
            fields["result"] = result
        if event.type == "message.completed" and "result" not in fields:
            fields["result"] = str(getattr(data, "message", ""))
        if event.type == "turn.started":
            break
    status: InvocationStatus = "completed" if record.turn is None or record.turn.status == "completed" else "failed"
    if status == "failed" and record.turn is not None:
        return status, {"error": {"code": -32603, "message": record.turn.error or "the turn failed"}}
    return status, fields


async def invocation(session: Session) -> JsonObject:
    """The session as an invocation object (re-read from the store first)."""
    await session.refresh()
    record = session.record
    shown: JsonObject = {"invocationId": record.id, "createdAt": record.created_at}
    if record.status == "waiting":
        requests: JsonObject = {r.request_id: r.to_wire() for r in session.input_requests}
        return shown | {"status": "input_required", "inputRequests": requests}
    if record.status == "running" or record.turn is None:
        return shown | {"status": "working"}
    status, fields = await _ending(session)
    return shown | {"status": status} | fields
