"""What a turn's events add up to, as a reader of the stream sees it (eve's `summarizeTurnEvents`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from eve_py._json import JsonValue
from eve_py.protocol import (
    AnyEvent,
    InputRequested,
    InputResolved,
    MessageCompleted,
    ResultCompleted,
    TurnCancelled,
    TurnFailed,
    TurnStarted,
)
from eve_py.protocol.requests import InputRequest
from eve_py.protocol.turns import TurnResult, TurnResultStatus

__all__ = ("open_requests", "summarize")


def open_requests(events: Iterable[AnyEvent]) -> list[InputRequest]:
    """The input requests `events` asked and did not resolve, in the order they were asked."""
    requests: dict[str, InputRequest] = {}
    for event in events:
        if isinstance(event, InputRequested):
            requests.update((request.request_id, request) for request in event.data.input_requests())
        elif isinstance(event, InputResolved):
            for resolution in event.data.resolutions:
                requests.pop(resolution.request_id, None)
    return list(requests.values())


def summarize(session_id: str, turn_id: str | None, events: Sequence[AnyEvent]) -> TurnResult:
    """The `TurnResult` a turn's events (up to its boundary) describe.

    `waiting` when the last event is `turn.waiting`; `failed` after `turn.failed`,
    `turn.cancelled` or `session.failed`; otherwise `completed`.
    """
    status: TurnResultStatus = "completed"
    error: str | None = None
    message: str | None = None
    result: JsonValue | None = None
    for event in events:
        if isinstance(event, TurnStarted) and turn_id is None:
            turn_id = event.data.turn_id
        elif isinstance(event, MessageCompleted):
            message = event.data.message
        elif isinstance(event, ResultCompleted):
            result = event.data.result
        elif isinstance(event, TurnFailed):
            status, error = "failed", event.data.message
        elif isinstance(event, TurnCancelled):
            status, error = "failed", "The turn was cancelled."
        elif event.type == "session.failed":
            status = "failed"
            error = error or "The session failed."
    if events and events[-1].type == "turn.waiting":
        status = "waiting"
    return TurnResult(
        session_id=session_id,
        turn_id=turn_id,
        status=status,
        input_requests=open_requests(events) if status == "waiting" else [],
        message=message,
        events=list(events),
        error=error,
        result=result,
    )
