"""Import one of an app's Python files in isolation, within a time bound (tools, agent.py, mock models, evals)."""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import sys
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from eve_py.errors import UsageError

__all__ = (
    "DEFAULT_IMPORT_TIMEOUT_S",
    "IMPORT_TIMEOUT_ENV",
    "ImportTimedOut",
    "LoadFailure",
    "import_timeout",
    "load_module",
)

DEFAULT_IMPORT_TIMEOUT_S = 5.0
"""How long one file may take to import when neither the caller nor the environment says."""

IMPORT_TIMEOUT_ENV = "EVE_IMPORT_TIMEOUT"
"""The environment variable that sets the bound (seconds) for every command that loads an app."""


@dataclass(frozen=True, slots=True)
class LoadFailure:
    """A module that raised while being imported."""

    error: BaseException
    """What it raised: any `BaseException`, `SystemExit`, `KeyboardInterrupt` and `CancelledError` included."""
    location: str
    """`file:line` of the innermost frame inside the module, when known."""


@dataclass(frozen=True, slots=True)
class ImportTimedOut:
    """A module still importing when its time bound ran out.

    Its import goes on in an abandoned daemon thread: Python cannot stop a thread, so the
    code keeps running (a busy loop keeps its CPU) until it ends or the process exits.
    """

    timeout_s: float


def import_timeout(value: float | None) -> float:
    """The import bound to use: `value`, else `$EVE_IMPORT_TIMEOUT`, else 5 seconds.

    Raises:
        UsageError: `value` or the environment variable is not a finite number of seconds > 0.
    """
    if value is not None:
        if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
            raise UsageError(f"import_timeout_s must be a finite number of seconds > 0, got {value!r}")
        return float(value)
    raw = os.environ.get(IMPORT_TIMEOUT_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_IMPORT_TIMEOUT_S
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise UsageError(f"{IMPORT_TIMEOUT_ENV} must be a finite number of seconds > 0, got {raw!r}")
    return seconds


class _Import:
    """One file's import, run on its own thread so that the caller can stop waiting for it."""

    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self.name = name
        self.outcome: ModuleType | LoadFailure | None = None
        self.done = threading.Event()
        self.abandoned = False
        # Deciding "finished" versus "abandoned" under one lock means the caller never gets a
        # module that the worker has just taken out of sys.modules, nor leaves one behind.
        self.lock = threading.Lock()

    def run(self) -> None:
        outcome = self._execute()
        with self.lock:
            if self.abandoned and isinstance(outcome, ModuleType):
                self._unregister(outcome)
            self.outcome = outcome
            self.done.set()

    def give_up(self) -> bool:
        """Abandon the import unless it has just finished; True when it was abandoned."""
        with self.lock:
            if self.done.is_set():
                return False
            self.abandoned = True
            sys.modules.pop(self.name, None)
            return True

    def _execute(self) -> ModuleType | LoadFailure:
        module: ModuleType | None = None
        try:
            spec = importlib.util.spec_from_file_location(self.name, self.path)
            if spec is None or spec.loader is None:
                return LoadFailure(ImportError(f"cannot load {self.path}"), str(self.path))
            module = importlib.util.module_from_spec(spec)
            sys.modules[self.name] = module
            spec.loader.exec_module(module)
        # This thread is never the main thread, so a real Ctrl-C cannot land here: any
        # BaseException (KeyboardInterrupt, SystemExit, CancelledError) came from the file itself.
        except BaseException as exc:
            if module is not None:
                self._unregister(module)
            resolved = self.path.resolve()
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == resolved]
            location = f"{self.path.name}:{frames[-1].lineno}" if frames else self.path.name
            return LoadFailure(exc, location)
        return module

    def _unregister(self, module: ModuleType) -> None:
        if sys.modules.get(self.name) is module:
            del sys.modules[self.name]


def load_module(path: Path, *, app_dir: Path, timeout_s: float) -> ModuleType | LoadFailure | ImportTimedOut:
    """Import one file as its own module, so one broken file cannot hide another's problems.

    The module is registered in `sys.modules` under a name unique to the app and file, which
    dataclasses and pydantic models defined in the file need. The import runs on a daemon
    thread: a file that is still importing after `timeout_s` seconds is abandoned (it cannot be
    killed) and reported as `ImportTimedOut`, instead of hanging the caller.

    Returns:
        The module; a `LoadFailure` for any exception the file raised (`BaseException`s too);
        or `ImportTimedOut`.
    """
    digest = hashlib.sha256(str(app_dir.resolve()).encode()).hexdigest()[:12]
    relative = path.relative_to(app_dir).with_suffix("")
    name = f"_eve_app_{digest}." + ".".join(part.replace("-", "_") for part in relative.parts)
    job = _Import(path, name)
    threading.Thread(target=job.run, name=f"eve-py import {relative.as_posix()}", daemon=True).start()
    if not job.done.wait(timeout_s) and job.give_up():
        return ImportTimedOut(timeout_s)
    assert job.outcome is not None  # set before done, under the lock
    return job.outcome
