"""`define_agent`: the agent's model, instructions and limits, from `agent/agent.py`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from eve_py.authoring._definition import expiry_seconds
from eve_py.errors import UsageError

if TYPE_CHECKING:
    from eve_py.models import Model

__all__ = ("AgentDefinition", "define_agent")


@dataclass(frozen=True, kw_only=True)
class AgentDefinition:
    """An agent as its author defined it in `agent/agent.py`."""

    model: str | Model | None = None
    """A `"provider/model"` string or a `Model` instance; None means it must be given at run time."""
    instructions: str | None = None
    """The system prompt. When None, `agent/instructions.md` is used if present."""
    max_steps: int = 20
    """Most model steps a turn takes in a row without a person's input; an answered batch
    starts the count again, so the model can always act on an answer."""
    input_expires_after_s: float | None = None
    """How long an input request waits for its answer when its tool sets no `expires_after`, in
    seconds; None: requests wait until answered."""


def define_agent(
    *,
    model: str | Model | None = None,
    instructions: str | None = None,
    max_steps: int = 20,
    input_expires_after: float | timedelta | None = None,
) -> AgentDefinition:
    """Define the agent of an app.

    Args:
        model: `"provider/model"` (e.g. `"anthropic/claude-sonnet-4.6"`) or a `Model`.
        instructions: The system prompt; falls back to `agent/instructions.md`.
        max_steps: Most model steps per turn, at least 1.
        input_expires_after: How long every input request (approval, question, client tool,
            resolver question) waits for its answer unless its tool sets `expires_after`
            (seconds, or a `timedelta`); None: until answered.

    Raises:
        UsageError: `max_steps` is not a whole number of at least 1, `instructions` is not a
            string, or `input_expires_after` is not a positive duration.
    """
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise UsageError(
            f"define_agent: max_steps must be at least 1, got {max_steps!r} (a whole number of model steps)"
        )
    if instructions is not None and not isinstance(instructions, str):
        raise UsageError("define_agent: instructions must be a string")
    expires_s = expiry_seconds(input_expires_after, what="define_agent: input_expires_after", error=UsageError)
    return AgentDefinition(model=model, instructions=instructions, max_steps=max_steps, input_expires_after_s=expires_s)
