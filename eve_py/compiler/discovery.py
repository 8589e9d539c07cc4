"""Find an app's files under `agent/` and load each Python file in isolation."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

__all__ = ("LoadFailure", "discover_tool_files", "load_module")


@dataclass(frozen=True, slots=True)
class LoadFailure:
    """A module that raised while being imported."""

    error: BaseException
    """What it raised."""
    location: str
    """`file:line` of the innermost frame inside the module, when known."""


def discover_tool_files(agent_dir: Path) -> list[Path]:
    """Every `*.py` under `agent/tools/`, sorted, skipping files and folders named `_*` (helpers)."""
    tools_dir = agent_dir / "tools"
    if not tools_dir.is_dir():
        return []
    return sorted(
        path
        for path in tools_dir.rglob("*.py")
        if not any(part.startswith("_") for part in path.relative_to(tools_dir).parts)
    )


def load_module(path: Path, *, app_dir: Path) -> ModuleType | LoadFailure:
    """Import one file as its own module, so one broken file cannot hide another's problems.

    The module is registered in `sys.modules` under a name unique to the app and file, which
    dataclasses and pydantic models defined in the file need.
    """
    digest = hashlib.sha256(str(app_dir.resolve()).encode()).hexdigest()[:12]
    relative = path.relative_to(app_dir).with_suffix("")
    name = f"_eve_app_{digest}." + ".".join(part.replace("-", "_") for part in relative.parts)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return LoadFailure(ImportError(f"cannot load {path}"), str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        del sys.modules[name]
        resolved = path.resolve()
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == resolved]
        location = f"{path.name}:{frames[-1].lineno}" if frames else path.name
        return LoadFailure(exc, location)
    return module
