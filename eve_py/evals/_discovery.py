"""Find an app's evals: `evals/**/*_eval.py` files exporting `evaluation`, and `evals/evals_config.py`.

The `evals/` folder is imported as a package of its own (a private name per app), so eval files
can share helpers with relative imports (`from .shared import guarded_echo_results`), and a
subfolder needs no `__init__.py`. Files and folders whose name starts with `_` are skipped.
An eval's id is its path under `evals/` without `_eval.py`: `hitl/client_resolved_question`.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from eve_py.errors import EvalConfigurationError
from eve_py.evals._definition import EvalConfig, EvalDefinition

__all__ = ("CONFIG_FILE", "EVALS_DIR", "EVAL_SUFFIX", "EvalCase", "EvalSuite", "discover_evals")

EVALS_DIR = "evals"
"""The folder of an app that holds its evals."""

EVAL_SUFFIX = "_eval.py"
"""How an eval file's name ends."""

CONFIG_FILE = "evals_config.py"
"""The optional settings file in `evals/`, exporting `config = define_eval_config(...)`."""


@dataclass(frozen=True, kw_only=True)
class EvalCase:
    """One discovered eval."""

    id: str
    """Its path under `evals/` without `_eval.py`, with `/` separators."""
    file: str
    """Its file, relative to the app folder (`evals/hitl/..._eval.py`)."""
    path: Path
    """Its file's full path."""
    definition: EvalDefinition


@dataclass(frozen=True, kw_only=True)
class EvalSuite:
    """Every eval of an app, and its settings."""

    app_dir: Path
    cases: list[EvalCase]
    config: EvalConfig

    def select(self, tags: Sequence[str] = ()) -> list[EvalCase]:
        """The evals carrying any of `tags` (all of them when no tag is given), in id order."""
        if not tags:
            return list(self.cases)
        wanted = set(tags)
        return [case for case in self.cases if wanted & set(case.definition.tags)]


def discover_evals(app_dir: str | Path) -> EvalSuite:
    """Import every eval file of an app and its `evals_config.py`.

    Every file is imported, so all problems are reported at once.

    Raises:
        EvalConfigurationError: There is no `evals/` folder or no eval file in it, a file fails
            to import, or it does not export what it should (`problems` lists each one).
    """
    app_dir = Path(app_dir)
    evals_dir = app_dir / EVALS_DIR
    if not app_dir.is_dir():
        raise EvalConfigurationError(f"{app_dir} is not a folder")
    if not evals_dir.is_dir():
        raise EvalConfigurationError(
            f"{app_dir} has no {EVALS_DIR}/ folder; eval files are {EVALS_DIR}/**/*{EVAL_SUFFIX}"
        )
    files = sorted(
        path
        for path in evals_dir.rglob(f"*{EVAL_SUFFIX}")
        if not any(part.startswith(("_", ".")) for part in path.relative_to(evals_dir).parts)
    )
    package = _fresh_package(evals_dir)
    problems: list[str] = []
    cases: list[EvalCase] = []
    for path in files:
        shown = path.relative_to(app_dir).as_posix()
        module = _import(package, evals_dir, path, problems, shown)
        if module is None:
            continue
        definition = getattr(module, "evaluation", None)
        if not isinstance(definition, EvalDefinition):
            got = "nothing" if definition is None else type(definition).__name__
            problems.append(f"{shown}: expected the export `evaluation = define_eval(...)`, found {got}")
            continue
        eval_id = path.relative_to(evals_dir).as_posix()[: -len(EVAL_SUFFIX)]
        cases.append(EvalCase(id=eval_id, file=shown, path=path.resolve(), definition=definition))

    config = EvalConfig()
    config_path = evals_dir / CONFIG_FILE
    if config_path.is_file():
        shown = config_path.relative_to(app_dir).as_posix()
        module = _import(package, evals_dir, config_path, problems, shown)
        if module is not None:
            exported = getattr(module, "config", None)
            if isinstance(exported, EvalConfig):
                config = exported
            else:
                got = "nothing" if exported is None else type(exported).__name__
                problems.append(f"{shown}: expected the export `config = define_eval_config(...)`, found {got}")
    if problems:
        listing = "\n".join(f"  - {problem}" for problem in problems)
        raise EvalConfigurationError(f"{len(problems)} problem(s) in {evals_dir}:\n{listing}", problems=problems)
    if not cases:
        raise EvalConfigurationError(f"no eval files in {evals_dir} (eval files are named *{EVAL_SUFFIX})")
    return EvalSuite(app_dir=app_dir, cases=sorted(cases, key=lambda case: case.id), config=config)


def _fresh_package(evals_dir: Path) -> str:
    """Register `evals/` as a package under a name private to this app; forget earlier imports of it."""
    name = "_eve_evals_" + hashlib.sha256(str(evals_dir.resolve()).encode()).hexdigest()[:12]
    for loaded in [key for key in sys.modules if key == name or key.startswith(name + ".")]:
        del sys.modules[loaded]
    spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
    spec.submodule_search_locations = [str(evals_dir)]
    sys.modules[name] = importlib.util.module_from_spec(spec)
    return name


def _import(package: str, evals_dir: Path, path: Path, problems: list[str], shown: str) -> ModuleType | None:
    relative = path.relative_to(evals_dir).with_suffix("")
    name = ".".join((package, *relative.parts))
    try:
        return importlib.import_module(name)
    except (Exception, SystemExit) as exc:
        resolved = path.resolve()
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == resolved]
        where = f":{frames[-1].lineno}" if frames else ""
        if isinstance(exc, SyntaxError) and exc.lineno is not None and Path(exc.filename or "").resolve() == resolved:
            where = f":{exc.lineno}"
        problems.append(f"{shown}{where}: {type(exc).__name__}: {exc}")
        return None
