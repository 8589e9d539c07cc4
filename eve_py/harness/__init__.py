"""The harness: the agent loop with parking, the pairing check, events, `Runtime` and `Session`."""

from eve_py.harness.events import Event, EventMeta, EventType
from eve_py.harness.loop import EventListener, TurnResult, TurnStatus
from eve_py.harness.pairing import check_pairing
from eve_py.harness.runtime import Runtime, Session

__all__ = (
    "Event",
    "EventListener",
    "EventMeta",
    "EventType",
    "Runtime",
    "Session",
    "TurnResult",
    "TurnStatus",
    "check_pairing",
)
