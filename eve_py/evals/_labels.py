"""How the eval driver writes a step's call, an open request and a session's tool calls as text.

The driving steps (`eve_py.evals._driver`) and the checking steps (`eve_py.evals._checks`) both
name their step with `step_label` and list open requests with `request_line`; the tool-call
checks list the session's calls with `calls_block`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from eve_py.evals._calls import ToolCall
from eve_py.evals._matching import describe, render_json
from eve_py.protocol.requests import InputRequest

__all__ = ("calls_block", "request_line", "step_label")


def step_label(name: str, *args: object, omit_none: bool = False, **kwargs: object) -> str:
    """A step's call as the eval wrote it, shortened: `respond_all('approve', text='ok')`.

    Args:
        name: The step's method.
        args: Its positional arguments.
        omit_none: Leave out the keyword arguments that are None (the ones not given).
        kwargs: Its keyword arguments.
    """
    parts = [_short(arg) for arg in args]
    parts += [f"{key}={_short(value)}" for key, value in kwargs.items() if not (omit_none and value is None)]
    return f"{name}({', '.join(parts)})"


def request_line(request: InputRequest) -> str:
    """One open request on one line: tool, kind, display, options, id and the prompt's start."""
    options = f" options={request.option_ids()}" if request.options else ""
    return (
        f"{request.action.tool_name} [{request.kind}, {request.display}]{options} "
        f"id={request.request_id} prompt={request.prompt[:80]!r}"
    )


def calls_block(calls: Sequence[ToolCall]) -> str:
    """A session's tool calls for a failure report, one indented line each, with their results."""
    if not calls:
        return "  tool calls in this session: none"
    lines = ["  tool calls in this session:"]
    for call in calls:
        result = (
            f"-> {'error ' if call.is_error else ''}{render_json(call.output, 160)}"
            if call.has_result
            else "(no result)"
        )
        parked = f" [{call.request_kind}]" if call.request_kind else ""
        lines.append(
            f"    - {call.tool_name} {call.call_id}{parked} input={render_json(call.input, 160)} {result} "
            f"({call.result_count} result(s))"
        )
    return "\n".join(lines)


def _short(value: object) -> str:
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:59] + "…")
    if isinstance(value, re.Pattern) or callable(value):
        return describe(value)
    return render_json(value, 80)
