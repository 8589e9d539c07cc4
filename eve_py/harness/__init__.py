"""The harness: carries out parking's decisions, drives turns (the agent loop), and commits every write.

Where things happen, each module named after the decision in `eve_py.parking` it carries out:

- `_unit`: the unit of work (`TurnUnit`): one per call, it alone holds the record, writes it and keeps
  the lease; its methods are the turn's transitions (`start`, `accept`, `step`, `park`, `settle`,
  `complete`) and its `drive` is the agent loop: model step -> calls -> results, until the turn
  parks or ends.
- `_park`: runs a step's tool calls; the calls `parking._park` says must wait are parked (`TurnUnit.park`).
- `_accept`: where a person's answers are checked before `TurnUnit.accept` writes them.
- `_settle`: the reruns a settled batch needs (`parking._settle`), carried out by `TurnUnit.settle`.
- `_execute`: the one tool-execution path (approval context, run, output shaping, progress and logs),
  for the agent loop and the MCP server alike (`shape_output`, `approval_context` are this package's seam).
- `_commit`: what a write is (`Write`, `Committed`) and who hears of it (the listeners).
- `_runtime` and `_session`: the public `Runtime` and `Session`; `_turns`: the registry of turns running here.
"""

from eve_py._moved import moved_names
from eve_py.harness._commit import Committed, EventListener
from eve_py.harness._execute import ShapedOutput, approval_context, shape_output
from eve_py.harness._pairing import check_pairing
from eve_py.harness._runtime import Runtime
from eve_py.harness._session import Session

__all__ = (
    "Committed",
    "EventListener",
    "Runtime",
    "Session",
    "ShapedOutput",
    "approval_context",
    "check_pairing",
    "shape_output",
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
