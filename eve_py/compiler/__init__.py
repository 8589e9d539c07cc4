"""The compiler: `compile_app` checks an app's `agent/` folder and writes its manifest."""

from eve_py.compiler._app import CompiledApp, compile_app, compile_app_definitions, manifest_path, save_manifest
from eve_py.compiler._manifest import AgentEntry, Manifest, ToolEntry
from eve_py.errors import Diagnostic

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
