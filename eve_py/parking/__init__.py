"""Parking's decisions, as pure functions: which calls park, whether an answer is accepted, how a batch settles.

Nothing here writes: each module takes the stored state and what happened, and returns the
next state and its events; `eve_py.harness` carries each decision out (the module of the same
name there commits it). The shapes they work on (`InputRequest`, `InputResponse`,
`PendingStep`) are the shared vocabulary in `eve_py.protocol`.

- `_park`: which of a step's tool calls run and which wait for a person (`_build` makes the requests).
- `_accept`: a parked batch plus people's answers -> the batch with them, or a refusal (`_answers` checks each).
- `_settle`: a settled batch's answers -> each parked call's result, or the call to run again
  (`_results` builds results, `_resolutions` what `input.resolved` reports).
"""

from eve_py._moved import moved_names

__all__ = ()

__getattr__ = moved_names(
    "eve_py.parking",
    dict.fromkeys(
        ("Display", "InputOption", "InputRequest", "InputResponse", "PendingStep", "RequestKind", "ToolCallAction"),
        "eve_py.protocol",
    ),
)
