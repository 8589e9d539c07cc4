"""Fixtures for the eval tests: the fixture app's agent and mock model, drivers, app copies."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from eve_py import load_agent
from eve_py.agent import Agent, load_mock_model
from eve_py.evals import EvalDriver, InProcessBackend
from eve_py.models._base import Model
from tests.conftest import HITL_APP, REPO

RunEve = Callable[..., "subprocess.CompletedProcess[str]"]
WriteEval = Callable[[str, str], Path]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def hitl_agent() -> Agent:
    """The fixture app `agent-tools-hitl`, compiled once."""
    return load_agent(HITL_APP)


@pytest.fixture
def hitl_model() -> Model:
    """A fresh instance of the fixture's scripted mock model."""
    return load_mock_model(HITL_APP)


@pytest.fixture
def driver(hitl_agent: Agent, hitl_model: Model) -> EvalDriver:
    """A driver on in-process sessions of the fixture app, as the eval `demo/driver`."""
    return EvalDriver(InProcessBackend(hitl_agent, hitl_model), eval_id="demo/driver")


@pytest.fixture
def app_copy(tmp_path: Path) -> Path:
    """A private copy of the fixture app (its evals included), for runs that write artifacts."""
    target = tmp_path / "agent-tools-hitl"
    shutil.copytree(HITL_APP, target, ignore=shutil.ignore_patterns(".eve", "__pycache__"))
    return target


@pytest.fixture
def write_eval(app_copy: Path) -> WriteEval:
    """Write `evals/<relative>` in the app copy from dedented source; returns its path."""

    def write(relative: str, source: str) -> Path:
        path = app_copy / "evals" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
        return path

    return write


@pytest.fixture
def eve() -> RunEve:
    """Run `python -m eve_py ARGS...` in a real subprocess from the repository root."""

    def run(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "eve_py", *map(str, args)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env=env,
        )

    return run
