"""Fixtures for the command-line tests: the fixture app, answers files and a subprocess runner."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURE_APP = REPO / "fixtures" / "agent-tools-hitl"

RunEve = Callable[..., "subprocess.CompletedProcess[str]"]
WriteAnswers = Callable[[list[dict[str, Any]]], Path]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def hitl_app() -> Path:
    """The fixture app itself (tests that only read it pass --store so nothing is written there)."""
    return FIXTURE_APP


@pytest.fixture
def hitl_copy(tmp_path: Path) -> Path:
    """A private copy of the fixture app, for commands that write into the app folder."""
    target = tmp_path / "agent-tools-hitl"
    shutil.copytree(FIXTURE_APP, target, ignore=shutil.ignore_patterns(".eve", "__pycache__"))
    return target


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A SQLite session store file in the test's own folder."""
    return tmp_path / "sessions.db"


@pytest.fixture
def write_answers(tmp_path: Path) -> WriteAnswers:
    """Write a `--answers` file holding the given JSON array; returns its path."""
    count = 0

    def write(answers: list[dict[str, Any]]) -> Path:
        nonlocal count
        count += 1
        path = tmp_path / f"answers-{count}.json"
        path.write_text(json.dumps(answers), encoding="utf-8")
        return path

    return write


@pytest.fixture
def eve() -> RunEve:
    """Run `python -m eve_py ARGS...` in a real subprocess, from the repository root (`env` adds variables)."""

    def run(
        *args: str | Path,
        input: str | None = None,  # noqa: A002
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "eve_py", *map(str, args)],
            cwd=REPO,
            input=input,
            env={**os.environ, **env} if env else None,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )

    return run
