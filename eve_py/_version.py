"""The installed distribution's version (what `eve_py.__version__` and `session.started` name)."""

from __future__ import annotations

import functools
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _distribution_version
from pathlib import Path

__all__ = ("version",)


@functools.cache
def version() -> str:
    """The installed distribution's version; from a source tree never installed, its pyproject's."""
    try:
        return _distribution_version("eve-py")
    except PackageNotFoundError:
        pass
    import tomllib  # only on this fallback path: most imports never need it

    try:
        with (Path(__file__).resolve().parent.parent / "pyproject.toml").open("rb") as file:
            project = tomllib.load(file).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return "0+unknown"
    found = project.get("version") if project.get("name") == "eve-py" else None
    return found if isinstance(found, str) else "0+unknown"
