"""The harness: drives turns (the agent loop), commits their writes, and runs tool calls.

Where things happen: `loop.py` drives a turn step by step; `calls.py` runs a step's calls;
`settling.py` runs what a settled batch needs run; `writes.py` commits every state change;
`runtime.py` is the public `Runtime` and `Session`. The decisions themselves (which calls park,
whether an answer is accepted, how a batch settles) are pure functions in `eve_py.parking`.
"""

from eve_py.events import Event, EventMeta
from eve_py.harness.pairing import check_pairing
from eve_py.harness.runtime import Runtime
from eve_py.harness.session import Session
from eve_py.harness.turn_result import TurnResult, TurnStatus
from eve_py.harness.writes import Committed, EventListener

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
