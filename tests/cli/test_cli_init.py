"""`eve-py init [DIR]` writes a working app; `--version` and `--help` tell a newcomer where to start.

The app `init` writes must build, pass its own eval on the mock model, run a whole turn
through the picker and the approval with `eve-py run`, and type-check with mypy --strict.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import eve_py
from eve_py.cli._main import main
from tests.cli.conftest import REPO, RunEve, WriteAnswers

APP_FILES = [
    ".gitignore",
    "README.md",
    "agent/agent.py",
    "agent/instructions.md",
    "agent/mock_model.py",
    "agent/tools/ask_question.py",
    "agent/tools/deploy.py",
    "evals/deploy_eval.py",
    "evals/evals_config.py",
]


@pytest.fixture
def new_app(tmp_path: Path, eve: RunEve) -> Path:
    """An app written by `eve-py init` into a fresh folder."""
    app = tmp_path / "my-app"
    done = eve("init", app)
    assert done.returncode == 0, done.stderr
    return app


def events_of(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


# --- version and help --------------------------------------------------------------------------------


def test_version_is_the_installed_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])

    assert exited.value.code == 0
    assert eve_py.__version__ == importlib.metadata.version("eve-py")
    assert capsys.readouterr().out.strip() == f"eve-py {eve_py.__version__}"


def test_version_falls_back_to_the_source_trees_pyproject_when_eve_py_is_not_installed() -> None:
    script = (
        "import importlib.metadata as metadata\n"
        "def missing(name):\n"
        "    raise metadata.PackageNotFoundError(name)\n"
        "metadata.version = missing\n"
        "import eve_py\n"
        "print(eve_py.__version__)\n"
    )

    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=30, check=True
    )

    assert done.stdout.strip() == importlib.metadata.version("eve-py")


def test_help_explains_app_dir_and_shows_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    top = capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    run = capsys.readouterr().out

    assert "init" in top
    assert "examples:" in top
    assert "eve-py init my-app" in top
    assert "eve-py chat my-app --model mock" in top
    assert "--version" in top
    assert "app_dir" in run
    assert "the app folder, holding agent/" in run


# --- init --------------------------------------------------------------------------------------------


def test_init_writes_the_app_and_says_what_to_do_next(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["init", str(tmp_path / "my-app")])

    assert code == 0
    written = sorted(p.relative_to(tmp_path / "my-app").as_posix() for p in (tmp_path / "my-app").rglob("*"))
    assert [p for p in written if (tmp_path / "my-app" / p).is_file()] == APP_FILES
    out = capsys.readouterr().out
    assert "agent/tools/deploy.py" in out
    assert f"eve-py chat {tmp_path / 'my-app'} --model mock" in out


def test_init_suggests_the_evals_extra_when_rich_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("eve_py.cli._init.find_spec", lambda name: None)  # as on a plain `pip install eve-py`

    assert main(["init", str(tmp_path / "my-app")]) == 0

    assert f"pip install 'eve-py[evals]' && eve-py eval {tmp_path / 'my-app'} --model mock" in capsys.readouterr().out


def test_init_without_dir_writes_into_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)

    code = main(["init"])

    assert code == 0
    assert (tmp_path / "agent" / "agent.py").is_file()
    assert (tmp_path / "evals" / "deploy_eval.py").is_file()


def test_init_refuses_a_folder_that_is_not_empty_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")

    code = main(["init", str(tmp_path)])

    assert code == 2
    err = capsys.readouterr().err
    assert "is not empty (notes.txt)" in err
    assert "--force" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_init_force_writes_into_a_folder_that_is_not_empty_and_keeps_other_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "agent.py").write_text("broken = True\n", encoding="utf-8")

    code = main(["init", str(tmp_path), "--force"])

    assert code == 0
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    assert "define_agent" in (tmp_path / "agent" / "agent.py").read_text(encoding="utf-8")


def test_init_on_a_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "app").write_text("", encoding="utf-8")

    code = main(["init", str(tmp_path / "app"), "--force"])

    assert code == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_init_under_a_file_is_a_usage_error_naming_that_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "junit.xml"
    report.write_text("<testsuite/>", encoding="utf-8")

    code = main(["init", str(report / "app")])

    err = capsys.readouterr().err
    assert code == 2
    assert err == f"error: {str(report)!r} is a file, not a folder (in {str(report / 'app')!r})\n"
    assert report.read_text(encoding="utf-8") == "<testsuite/>"


def test_the_new_app_builds(new_app: Path, eve: RunEve) -> None:
    done = eve("build", new_app)

    assert done.returncode == 0, done.stderr
    manifest = json.loads((new_app / ".eve" / "build" / "manifest.json").read_text(encoding="utf-8"))
    tools = {tool["name"]: tool for tool in manifest["tools"]}
    assert sorted(tools) == ["ask_question", "deploy"]
    assert tools["ask_question"]["source"] == "tools/ask_question.py"
    assert tools["ask_question"]["clientResolved"] is True
    assert tools["ask_question"]["outputSchema"]["required"] == ["pickedIds"]
    assert tools["deploy"]["needsApproval"] is True


def test_the_new_app_passes_its_own_eval_on_the_mock_model(new_app: Path, eve: RunEve) -> None:
    done = eve("eval", new_app, "--model", "mock", "--json")

    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert [(r["id"], r["status"]) for r in report["results"]] == [("deploy", "passed")]


def test_the_new_app_runs_a_turn_through_the_picker_and_the_approval(
    new_app: Path, eve: RunEve, write_answers: WriteAnswers
) -> None:
    answers = write_answers([{"optionId": "production"}, {"optionId": "approve"}])

    done = eve("run", new_app, "deploy the app", "--model", "mock", "--answers", answers, "--json")

    assert done.returncode == 0, done.stderr
    events = events_of(done.stdout)
    types = [event["type"] for event in events]
    assert types.count("input.requested") == 2
    assert types[-2:] == ["turn.completed", "session.waiting"]
    results = [event["data"]["result"] for event in events if event["type"] == "action.result"]
    assert [(r["toolName"], r["output"]["deployed"]) for r in results] == [("deploy", "production")]
    final = [event["data"] for event in events if event["type"] == "message.completed"][-1]
    assert final["message"] == "Deployed to production."


@pytest.mark.timeout(300)
def test_the_new_app_type_checks_with_mypy_strict(new_app: Path) -> None:
    env = {**os.environ, "MYPYPATH": str(new_app)}
    for folder in ("agent", "evals"):
        done = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--explicit-package-bases", "--no-incremental", folder],
            cwd=new_app,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
