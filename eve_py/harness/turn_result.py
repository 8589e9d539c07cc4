"""`TurnResult`: where a turn stands when `send`, `respond` or `resume` returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from eve_py._json import JsonValue
from eve_py.events import AnyEvent
from eve_py.parking.requests import InputRequest

__all__ = ("TurnResult", "TurnStatus")

TurnStatus = Literal["waiting", "completed", "failed"]


@dataclass(frozen=True, kw_only=True)
class TurnResult:
    """Where a turn stands after `send`, `respond` or `resume` returns."""

    session_id: str
    turn_id: str | None
    status: TurnStatus
    """`waiting`: parked on `input_requests`; `completed`: the model answered; `failed`: see `error`."""
    input_requests: list[InputRequest]
    """Open requests (empty unless waiting)."""
    message: str | None
    """The assistant's last text in this call, if any."""
    events: list[AnyEvent]
    """The events committed during this call (or read for it, by a client), oldest first."""
    error: str | None = None
    """Why the turn failed."""
    result: JsonValue | None = None
    """The turn's structured result, when it was sent an `output_schema` and completed."""
