"""Find an app's tool files under `agent/tools/`."""

from __future__ import annotations

from pathlib import Path

__all__ = ("discover_tool_files",)


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
