"""`eve-py init [DIR]`: write a small working app to start from.

The app lives as real files under `eve_py/cli/template/` (type-checked and linted with the
package, so it cannot rot): an agent, its instructions, a typed `ask_question` picker, an
approval-gated `deploy` tool, a mock model that walks through both, and an eval.
"""

from __future__ import annotations

import argparse
from importlib.resources import files
from importlib.resources.abc import Traversable
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from eve_py.errors import UsageError

__all__ = ("add_init_parser", "init_app", "run_init_command")

_RENAMED = {"gitignore": ".gitignore"}
"""Template files stored under another name: a `.gitignore` inside a package is easily dropped."""


def _template_files(folder: Traversable, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], bytes]]:
    found: list[tuple[tuple[str, ...], bytes]] = []
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        if entry.name == "__pycache__" or entry.name.endswith(".pyc"):
            continue
        if entry.is_dir():
            found += _template_files(entry, (*prefix, entry.name))
        else:
            found.append(((*prefix, _RENAMED.get(entry.name, entry.name)), entry.read_bytes()))
    return found


def init_app(target: str | Path, *, force: bool = False) -> list[Path]:
    """Write the starter app into `target` (created if missing).

    Args:
        target: The app folder to write.
        force: Write into a folder that is not empty, replacing files of the same name (other
            files are left alone).

    Returns:
        The files written, relative to `target`, sorted.

    Raises:
        UsageError: `target` or a folder above it is a file, `target` is a non-empty folder and
            `force` is false, or a file cannot be written (permissions, a full disk).
    """
    target = Path(target)
    blocking = next((folder for folder in (target, *target.parents) if folder.exists()), None)
    if blocking is not None and not blocking.is_dir():
        where = "" if blocking == target else f" (in {str(target)!r})"
        raise UsageError(f"{str(blocking)!r} is a file, not a folder{where}")
    if target.is_dir() and not force:
        present = sorted(entry.name for entry in target.iterdir())
        if present:
            shown = ", ".join(present[:3]) + (", ..." if len(present) > 3 else "")
            raise UsageError(
                f"{str(target)!r} is not empty ({shown}); choose a new folder, or pass --force to write the "
                "app into it anyway (files of the same name are replaced)"
            )
    written: list[Path] = []
    for parts, content in _template_files(files("eve_py.cli").joinpath("template")):
        path = target.joinpath(*parts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        except OSError as exc:
            raise UsageError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
        written.append(Path(*parts))
    return sorted(written)


def add_init_parser(commands: argparse._SubParsersAction[Any]) -> None:
    """Register `init` on the `eve-py` command's subparsers."""
    command = commands.add_parser(
        "init",
        help="write a small working app to start from",
        description="Write a working eve-py app: an agent, a typed ask_question picker, an approval-gated "
        "tool, a mock model for --model mock, and an eval.",
    )
    command.add_argument(
        "app_dir",
        type=Path,
        nargs="?",
        default=Path("."),
        metavar="DIR",
        help="the folder to write the app into; created if missing, must be empty (default: the current folder)",
    )
    command.add_argument("--force", action="store_true", help="write into a folder that is not empty")


def _eval_step(target: Path) -> tuple[str, str]:
    """The eval command to suggest: its table needs rich (the `evals` extra); without it, say so."""
    if find_spec("rich") is not None:
        return f"eve-py eval {target} --model mock", "run the app's evals"
    return (
        f"pip install 'eve-py[evals]' && eve-py eval {target} --model mock",
        "run the app's evals (the extra draws their table; --json needs nothing more)",
    )


def run_init_command(args: argparse.Namespace) -> int:
    """Run `eve-py init` with parsed arguments; returns the exit code.

    Raises:
        UsageError: The folder is not empty (and no `--force`), or is a file.
    """
    target: Path = args.app_dir
    written = init_app(target, force=args.force)
    print(f"wrote an eve-py app to {target}:")
    for path in written:
        print(f"  {path.as_posix()}")
    print("\nnext:")
    for command, why in (
        (f"eve-py chat {target} --model mock", 'say "deploy the app": pick an environment, approve the deploy'),
        _eval_step(target),
        (f"eve-py build {target}", "check every tool and write the manifest"),
    ):
        print(f"  {command}    # {why}")
    return 0
