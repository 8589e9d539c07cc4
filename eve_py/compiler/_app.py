"""`compile_app`: discover an app's `agent/` folder, check every export, build the manifest.

Every tool file is loaded on its own and every problem is collected as a `Diagnostic`; the
compiler never stops at the first one. Any error makes `compile_app` raise one
`CompileError` carrying them all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from eve_py._loading import ImportTimedOut, LoadFailure, import_timeout, load_module
from eve_py.authoring import AgentDefinition, DisabledTool, ToolDefinition
from eve_py.authoring._approval import policy_name
from eve_py.compiler._checks import check_tool, shape_message
from eve_py.compiler._discovery import discover_tool_files
from eve_py.compiler._manifest import AgentEntry, Manifest, ToolEntry
from eve_py.errors import CompileError, Diagnostic, ToolResolutionError
from eve_py.tools import tool_name_from_path
from eve_py.tools._ask_question import FRAMEWORK_TOOLS

__all__ = ("CompiledApp", "compile_app", "compile_app_definitions", "manifest_path", "save_manifest")

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True, kw_only=True)
class CompiledApp:
    """The loaded, checked contents of an app (what `load_agent` builds its `Agent` from)."""

    app_dir: Path
    agent: AgentDefinition
    instructions: str | None
    tools: dict[str, tuple[str, ToolDefinition]]
    """App tools by name: (path relative to `agent/`, definition)."""
    disabled: frozenset[str]
    manifest: Manifest
    diagnostics: list[Diagnostic]
    """Warnings (errors raise instead)."""


def manifest_path(app_dir: str | Path) -> Path:
    """Where `eve-py build` writes the manifest: `APP_DIR/.eve/build/manifest.json`."""
    return Path(app_dir) / ".eve" / "build" / "manifest.json"


def _timed_out_hint(timeout_s: float) -> str:
    return (
        f"Importing the file must finish within {timeout_s:g} s. Move slow or blocking work (network, "
        "sleeps, loops) out of the module's top level, e.g. into the executor; or raise the bound with "
        "eve-py build --import-timeout SECONDS, the EVE_IMPORT_TIMEOUT variable or import_timeout_s=..."
    )


def _load_agent_file(
    agent_dir: Path, app_dir: Path, timeout_s: float, diagnostics: list[Diagnostic]
) -> AgentDefinition:
    agent_file = agent_dir / "agent.py"
    if not agent_file.is_file():
        return AgentDefinition()
    loaded = load_module(agent_file, app_dir=app_dir, timeout_s=timeout_s)
    if isinstance(loaded, ImportTimedOut):
        diagnostics.append(
            Diagnostic(
                severity="error",
                code="E202",
                path="agent.py",
                message=f"agent.py did not finish importing within {timeout_s:g} s; eve-py stopped waiting for it.",
                hint=_timed_out_hint(timeout_s),
            )
        )
        return AgentDefinition()
    if isinstance(loaded, LoadFailure):
        diagnostics.append(
            Diagnostic(
                severity="error",
                code="E201",
                path="agent.py",
                message=f"agent.py failed to import: {type(loaded.error).__name__}: {loaded.error}",
                hint=f"see {loaded.location}",
            )
        )
        return AgentDefinition()
    value = getattr(loaded, "agent", None)
    if not isinstance(value, AgentDefinition):
        diagnostics.append(
            Diagnostic(
                severity="error",
                code="E201",
                path="agent.py",
                message='Expected the export "agent" from "agent.py" to be the value returned by define_agent(...).',
                hint="agent = define_agent(model=..., instructions=...)",
            )
        )
        return AgentDefinition()
    return value


def _import_tool_file(file: Path, path: str, app_dir: Path, timeout_s: float) -> ModuleType | Diagnostic:
    """Import one tool file, or the diagnostic saying why it could not be."""
    loaded = load_module(file, app_dir=app_dir, timeout_s=timeout_s)
    if isinstance(loaded, ImportTimedOut):
        return Diagnostic(
            severity="error",
            code="E111",
            path=path,
            message=f'The tool file "{path}" did not finish importing within {timeout_s:g} s; '
            "eve-py stopped waiting for it.",
            hint=_timed_out_hint(timeout_s),
        )
    if isinstance(loaded, LoadFailure):
        return Diagnostic(
            severity="error",
            code="E101",
            path=path,
            message=f'Failed to import the tool file "{path}": {type(loaded.error).__name__}: {loaded.error}',
            hint=f"see {loaded.location}",
        )
    return loaded


def compile_app_definitions(app_dir: str | Path, *, import_timeout_s: float | None = None) -> CompiledApp:
    """Load and check an app without writing anything.

    Args:
        app_dir: The app folder (the one holding `agent/`).
        import_timeout_s: How long each file may take to import before it is reported (`E111`,
            `E202`) and abandoned; default `$EVE_IMPORT_TIMEOUT`, else 5 seconds.

    Raises:
        CompileError: One or more errors; `.diagnostics` lists every problem found.
        UsageError: `import_timeout_s` or `$EVE_IMPORT_TIMEOUT` is not a number of seconds > 0.
    """
    timeout_s = import_timeout(import_timeout_s)
    app_dir = Path(app_dir)
    agent_dir = app_dir / "agent"
    diagnostics: list[Diagnostic] = []
    if not agent_dir.is_dir():
        raise CompileError(
            [
                Diagnostic(
                    severity="error",
                    code="E001",
                    path=str(app_dir),
                    message=f"no agent/ folder in {str(app_dir)!r}",
                    hint="An app is a folder holding agent/agent.py and agent/tools/*.py.",
                )
            ]
        )
    agent = _load_agent_file(agent_dir, app_dir, timeout_s, diagnostics)
    instructions = agent.instructions
    instructions_file = agent_dir / "instructions.md"
    if instructions is None and instructions_file.is_file():
        instructions = instructions_file.read_text(encoding="utf-8").strip() or None

    tools, disabled = _load_tools(agent_dir, app_dir, timeout_s, diagnostics)
    if any(d.severity == "error" for d in diagnostics):
        raise CompileError(diagnostics)
    return CompiledApp(
        app_dir=app_dir,
        agent=agent,
        instructions=instructions,
        tools=tools,
        disabled=frozenset(disabled),
        manifest=_manifest(app_dir, agent, instructions, tools, disabled),
        diagnostics=diagnostics,
    )


def _load_tools(
    agent_dir: Path, app_dir: Path, timeout_s: float, diagnostics: list[Diagnostic]
) -> tuple[dict[str, tuple[str, ToolDefinition]], set[str]]:
    """Every tool file's definition by tool name (with its path), and the framework tools disabled.

    Each problem is added to `diagnostics`; a file with a problem is left out.
    """
    tools: dict[str, tuple[str, ToolDefinition]] = {}
    disabled: set[str] = set()
    for file in discover_tool_files(agent_dir):
        path = file.relative_to(agent_dir).as_posix()
        name = tool_name_from_path(path)
        exported = _tool_export(file, path, name, app_dir, timeout_s, diagnostics)
        if exported is None:
            continue
        value = exported[0]
        if isinstance(value, DisabledTool):
            if name not in FRAMEWORK_TOOLS:
                diagnostics.append(
                    Diagnostic(
                        severity="warning",
                        code="W101",
                        path=path,
                        message=f"disable_tool() for {name!r}, which is no framework tool; nothing is disabled",
                        hint=f"framework tools: {', '.join(sorted(FRAMEWORK_TOOLS))}",
                    )
                )
            disabled.add(name)
            continue
        problems = check_tool(path, value)
        diagnostics += problems
        if problems or not isinstance(value, ToolDefinition):
            continue
        if name in tools:
            diagnostics.append(
                Diagnostic(
                    severity="error",
                    code="E108",
                    path=path,
                    message=f"tool name {name!r} is already taken by {tools[name][0]!r}",
                    hint="Rename one of the files.",
                )
            )
            continue
        tools[name] = (path, value)
    return tools, disabled


def _tool_export(
    file: Path, path: str, name: str, app_dir: Path, timeout_s: float, diagnostics: list[Diagnostic]
) -> tuple[object] | None:
    """A tool file's `tool` export (in a 1-tuple, since any value may be exported), or None after a problem."""
    if not _TOOL_NAME.match(name):
        diagnostics.append(
            Diagnostic(
                severity="error",
                code="E107",
                path=path,
                message=f"tool name {name!r} (from the file path) is not valid",
                hint="Tool names use letters, digits, '_' and '-' only, at most 64 characters: rename the file.",
            )
        )
        return None
    loaded = _import_tool_file(file, path, app_dir, timeout_s)
    if isinstance(loaded, Diagnostic):
        diagnostics.append(loaded)
        return None
    if not hasattr(loaded, "tool"):
        diagnostics.append(
            Diagnostic(
                severity="error",
                code="E102",
                path=path,
                message=shape_message(path),
                hint='The file defines no "tool"; add tool = define_tool(...) (or define_client_tool / disable_tool).',
            )
        )
        return None
    return (loaded.tool,)


def _manifest(
    app_dir: Path,
    agent: AgentDefinition,
    instructions: str | None,
    tools: dict[str, tuple[str, ToolDefinition]],
    disabled: set[str],
) -> Manifest:
    entries = [
        ToolEntry(
            name=tool.name,
            description=tool.description,
            input_schema=tool.input_schema,
            output_schema=tool.output_schema,
            client_resolved=True,
            needs_approval=False,
            approval="never",
            source=tool.path,
        )
        for tool in FRAMEWORK_TOOLS.values()
        if tool.name not in tools and tool.name not in disabled
    ]
    for name, (path, definition) in tools.items():
        approval = policy_name(definition.needs_approval)
        entries.append(
            ToolEntry(
                name=name,
                description=definition.description,
                input_schema=definition.input_schema,
                output_schema=definition.output_schema,
                client_resolved=definition.client_resolved,
                needs_approval=approval != "never",
                approval=approval,
                editable=definition.editable,
                source=path,
            )
        )
    return Manifest(
        app=app_dir.resolve().name,
        agent=AgentEntry(
            model=agent.model if isinstance(agent.model, str) else None,
            has_instructions=instructions is not None,
            max_steps=agent.max_steps,
        ),
        tools=sorted(entries, key=lambda entry: entry.name),
        disabled=sorted(disabled & FRAMEWORK_TOOLS.keys()),
    )


def compile_app(app_dir: str | Path, *, write_manifest: bool = True, import_timeout_s: float | None = None) -> Manifest:
    """Compile an app and (by default) write `APP_DIR/.eve/build/manifest.json`.

    Args:
        app_dir: The app folder (the one holding `agent/`).
        write_manifest: Write the manifest file; nothing is written when compiling fails.
        import_timeout_s: How long each file may take to import before it is reported as an
            error and abandoned (its code keeps running in a daemon thread: Python cannot stop
            it); default `$EVE_IMPORT_TIMEOUT`, else 5 seconds.

    Returns:
        The manifest: every tool the model will be offered, the tools of the MCP servers in
        `agent/connections/` included (each server is connected to and listed).

    Raises:
        CompileError: One or more errors; `.diagnostics` lists every problem found.
        UsageError: `import_timeout_s` or `$EVE_IMPORT_TIMEOUT` is not a number of seconds > 0.
    """
    compiled = compile_app_definitions(app_dir, import_timeout_s=import_timeout_s)
    return save_manifest(compiled) if write_manifest else _with_connections(compiled)


def _connection_entries(app_dir: Path) -> list[ToolEntry]:
    """The tools of the MCP servers in `agent/connections/`, listed now (none without the folder).

    Raises:
        CompileError: `E301`: a connection file fails to load, or its server cannot be listed.
    """
    if not (app_dir / "agent" / "connections").is_dir():
        return []
    from eve_py.mcp.connect import connection_tools  # the mcp extra is optional: imported only here

    try:
        tools = connection_tools(app_dir)
    except ToolResolutionError as exc:
        hint = "The server must be reachable when the app is built: its tools are listed in the manifest."
        diagnostic = Diagnostic(severity="error", code="E301", path=exc.path, message=str(exc), hint=hint)
        raise CompileError([diagnostic]) from None
    return [
        ToolEntry(
            name=name,
            description=tool.description,
            input_schema=tool.input_schema,
            output_schema=tool.output_schema,
            client_resolved=False,
            needs_approval=bool(tool.needs_approval),
            approval="always" if tool.needs_approval else "never",
            source=tool.path,
        )
        for name, tool in tools.items()
    ]


def _with_connections(compiled: CompiledApp) -> Manifest:
    connected = _connection_entries(compiled.app_dir)
    if not connected:
        return compiled.manifest
    tools = sorted([*compiled.manifest.tools, *connected], key=lambda entry: entry.name)
    return compiled.manifest.model_copy(update={"tools": tools})


def save_manifest(compiled: CompiledApp) -> Manifest:
    """Write `compiled`'s manifest, with the tools of its MCP servers (listed now), to
    `APP_DIR/.eve/build/manifest.json` and return it.

    Raises:
        CompileError: `E301`: an MCP server in `agent/connections/` cannot be listed.
    """
    manifest = _with_connections(compiled)
    target = manifest_path(compiled.app_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(manifest.model_dump_json(by_alias=True, indent=2) + "\n", encoding="utf-8")
    return manifest
