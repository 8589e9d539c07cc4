"""The compiler: `compile_app` checks an app's `agent/` folder and writes its manifest."""

from eve_py.compiler.app import CompiledApp, compile_app, compile_app_definitions, manifest_path, save_manifest
from eve_py.compiler.diagnostics import Diagnostic
from eve_py.compiler.manifest import AgentEntry, Manifest, ToolEntry

__all__ = (
    "AgentEntry",
    "CompiledApp",
    "Diagnostic",
    "Manifest",
    "ToolEntry",
    "compile_app",
    "compile_app_definitions",
    "manifest_path",
    "save_manifest",
)
