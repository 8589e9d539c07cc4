"""Session events: an append-only, replayable log of everything that happened.

Each event is `{type, data, meta: {id, at}}`; `meta.id` is `evt_<ULID>` and `meta.at` an
ISO 8601 UTC timestamp. An event's position in the session's log is its index (what
`startIndex` counts).

`message.delta` events (text and tool-call argument pieces from a streaming model) are
ephemeral: listeners get them while the step runs, the log never stores them; the step's
`message.completed` carries the whole text. `deltaIndex` numbers a step's deltas from 0, so a
reader that reconnects mid-step and is sent them again can skip the ones it has.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from typing import Literal, TypeAlias

from eve_py._json import JsonObject
from eve_py._wire import WireModel

__all__ = ("Event", "EventMeta", "EventType", "new_event", "new_id", "now_iso")

EventType: TypeAlias = Literal[
    "session.started",
    "turn.started",
    "message.received",
    "step.started",
    "actions.requested",
    "action.result",
    "input.requested",
    "input.resolved",
    "message.completed",
    "turn.completed",
    "turn.failed",
    "session.waiting",
    "session.failed",
    "message.delta",
    "turn.cancelled",
]

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_id(prefix: str) -> str:
    """A ULID with a prefix (`evt_01J...`): sortable by creation time, unique without coordination."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return f"{prefix}_{''.join(reversed(chars))}"


def now_iso() -> str:
    """The current UTC time, ISO 8601 with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class EventMeta(WireModel):
    """Where and when an event was recorded."""

    id: str
    at: str


class Event(WireModel):
    """One entry of a session's event log."""

    type: EventType
    data: JsonObject
    meta: EventMeta


def new_event(type: EventType, data: JsonObject) -> Event:  # noqa: A002  # the wire field is named type
    """A new event stamped with a fresh id and the current time."""
    return Event(type=type, data=data, meta=EventMeta(id=new_id("evt"), at=now_iso()))
