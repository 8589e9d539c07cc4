"""Parking: how tool calls become input requests, and how answers become tool results.

A step's parked calls form one batch (`PendingStep`), stored in the session until every
required answer arrives; then each parked call gets exactly one tool result.
"""

from eve_py.parking.batch import PendingStep
from eve_py.parking.requests import Display, InputOption, InputRequest, InputResponse, RequestKind, ToolCallAction

__all__ = (
    "Display",
    "InputOption",
    "InputRequest",
    "InputResponse",
    "PendingStep",
    "RequestKind",
    "ToolCallAction",
)
