"""The build manifest written to `APP_DIR/.eve/build/manifest.json`."""

from __future__ import annotations

from typing import Literal

from eve_py._camel import CamelModel
from eve_py._json import JsonSchema

__all__ = ("AgentEntry", "Manifest", "ToolEntry")


class ToolEntry(CamelModel):
    """One tool offered to the model."""

    name: str
    description: str
    input_schema: JsonSchema
    output_schema: JsonSchema | None
    client_resolved: bool
    needs_approval: bool
    """True when a call may need approval (always, or decided per call)."""
    approval: Literal["never", "always", "once", "dynamic"]
    """`once`: asks once per tool and session; `dynamic`: a callable decides per call."""
    editable: bool = False
    """True when the person approving a call may change its input."""
    source: str
    """Path relative to `agent/`, or an `eve:` id for framework tools."""


class AgentEntry(CamelModel):
    """The agent's configuration as far as it is static."""

    model: str | None
    """The `"provider/model"` string, or None when not a string (or not set)."""
    has_instructions: bool
    max_steps: int


class Manifest(CamelModel):
    """What `eve-py build` compiled."""

    version: Literal[1] = 1
    app: str
    """The app folder's name."""
    agent: AgentEntry
    tools: list[ToolEntry]
    """Every tool the model is offered, framework tools included, sorted by name."""
    disabled: list[str]
    """Framework tools the app disabled."""
