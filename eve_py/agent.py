"""`Agent`: an app's resolved tools, instructions and model; `load_agent` builds it from a folder."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from eve_py.authoring import AgentDefinition, DisabledTool, ToolDefinition
from eve_py.compiler import compile_app_definitions
from eve_py.models import Model, load_mock_model
from eve_py.tools import ResolvedTool, resolve_tool
from eve_py.tools._ask_question import FRAMEWORK_TOOLS

__all__ = ("Agent", "load_agent", "load_mock_model")


@dataclass(frozen=True, kw_only=True)
class Agent:
    """A runnable agent: what the model is told and which tools it may call."""

    name: str
    instructions: str | None = None
    model: str | Model | None = None
    """The agent's own model choice; `Runtime(model=...)` overrides it."""
    max_steps: int = 20
    input_expires_after_s: float | None = None
    """How long a request waits when its tool sets no `expires_after`, in seconds (None: until answered)."""
    tools: Mapping[str, ResolvedTool] = field(default_factory=dict)
    """Every tool offered to the model, framework tools included."""
    app_dir: Path | None = None

    @classmethod
    def from_definitions(
        cls,
        tools: Mapping[str, ToolDefinition | DisabledTool],
        *,
        name: str = "agent",
        definition: AgentDefinition | None = None,
        instructions: str | None = None,
    ) -> Agent:
        """Build an agent in code, without an app folder (handy in tests and notebooks).

        Args:
            tools: Definitions by tool name; a `DisabledTool` removes that framework tool.
            name: A label for the agent.
            definition: Model and limits; defaults to `AgentDefinition()`.
            instructions: The system prompt (overrides `definition.instructions`).

        Raises:
            ToolResolutionError: A definition has a mixed or incomplete shape.
        """
        definition = definition or AgentDefinition()
        disabled = {tool_name for tool_name, value in tools.items() if isinstance(value, DisabledTool)}
        resolved = {
            tool_name: resolve_tool(value, path=f"tools/{tool_name}.py", name=tool_name)
            for tool_name, value in tools.items()
            if not isinstance(value, DisabledTool)
        }
        return cls(
            name=name,
            instructions=instructions if instructions is not None else definition.instructions,
            model=definition.model,
            max_steps=definition.max_steps,
            input_expires_after_s=definition.input_expires_after_s,
            tools=_with_framework_tools(resolved, disabled),
        )


def _with_framework_tools(tools: Mapping[str, ResolvedTool], disabled: set[str]) -> dict[str, ResolvedTool]:
    merged = {name: tool for name, tool in FRAMEWORK_TOOLS.items() if name not in tools and name not in disabled}
    merged.update(tools)
    return merged


def load_agent(app_dir: str | Path, *, import_timeout_s: float | None = None) -> Agent:
    """Compile an app and resolve every tool for the runtime.

    The runtime normalizer (`resolve_tool`) re-checks each tool independently of the compiler.

    Args:
        app_dir: The app folder (the one holding `agent/`).
        import_timeout_s: How long each file may take to import, as for `compile_app`; default
            `$EVE_IMPORT_TIMEOUT`, else 5 seconds.

    Raises:
        CompileError: The app has errors (a file that raised or did not finish importing included).
        ToolResolutionError: A tool failed the runtime's own checks, or an MCP server declared in
            `agent/connections/` could not be loaded or listed.
        UsageError: `import_timeout_s` or `$EVE_IMPORT_TIMEOUT` is not a number of seconds > 0.
    """
    compiled = compile_app_definitions(app_dir, import_timeout_s=import_timeout_s)
    resolved = {
        name: resolve_tool(definition, path=path, name=name) for name, (path, definition) in compiled.tools.items()
    }
    return Agent(
        name=Path(app_dir).resolve().name,
        instructions=compiled.instructions,
        model=compiled.agent.model,
        max_steps=compiled.agent.max_steps,
        input_expires_after_s=compiled.agent.input_expires_after_s,
        tools=_with_framework_tools(resolved, set(compiled.disabled)) | _mcp_tools(Path(app_dir)),
        app_dir=Path(app_dir),
    )


def _mcp_tools(app_dir: Path) -> dict[str, ResolvedTool]:
    """The tools of the MCP servers declared in `agent/connections/` (needs the mcp extra)."""
    if not (app_dir / "agent" / "connections").is_dir():
        return {}
    from eve_py.mcp.connect import connection_tools  # the mcp extra is optional: imported only here

    return connection_tools(app_dir)
