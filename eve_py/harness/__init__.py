"""The harness: carries out parking's decisions, drives turns (the agent loop), and commits every write.

Where things happen, each module named after the decision in `eve_py.parking` it carries out:

- `_park`: runs a step's tool calls; the calls `parking._park` says must wait are parked.
- `_accept`: where a person's answers are accepted (`Session.respond`) and written.
- `_settle`: runs what a settled batch needs run (`parking._settle`) and writes the step.
- `_loop`: the agent loop (`TurnDriver`): model step -> calls -> results, until the turn parks or ends.
- `_commit`: how every state change reaches the store, the event listener and the conversation cache.
- `_runtime` and `_session`: the public `Runtime` and `Session`; `_turns`: the registry of turns running here.
"""

from eve_py._moved import moved_names
from eve_py.harness._commit import Committed, EventListener
from eve_py.harness._pairing import check_pairing
from eve_py.harness._runtime import Runtime
from eve_py.harness._session import Session

__all__ = (
    "Committed",
    "EventListener",
    "Runtime",
    "Session",
    "check_pairing",
)

__getattr__ = moved_names(
    "eve_py.harness",
    {
        "Event": "eve_py.protocol",
        "EventMeta": "eve_py.protocol",
        "TurnResult": "eve_py.protocol",
        "TurnStatus": "eve_py.protocol:TurnResultStatus",
    },
)
