"""The harness: the agent loop with parking, the pairing check, events, `Runtime` and `Session`."""

from eve_py.events import Event, EventMeta
from eve_py.harness.loop import Committed, EventListener, TurnResult, TurnStatus
from eve_py.harness.pairing import check_pairing
from eve_py.harness.runtime import Runtime, Session

__all__ = (
    "Committed",
    "Event",
    "EventListener",
    "EventMeta",
    "Runtime",
    "Session",
    "TurnResult",
    "TurnStatus",
    "check_pairing",
)
