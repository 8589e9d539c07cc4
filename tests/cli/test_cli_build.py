"""`eve-py build APP_DIR`: compile an app and write its manifest, or print every problem."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eve_py.cli._main import main

BROKEN_TOOLS = {
    "not_a_tool.py": 'tool = {"description": "a dict"}\n',
    "no_export.py": "helper = 1\n",
    "explodes.py": 'raise RuntimeError("no database")\n',
    "mixed.py": (
        "import dataclasses\n\nfrom eve_py import define_tool\n\n\n"
        "def run(text: str) -> str:\n    return text\n\n\n"
        'tool = dataclasses.replace(define_tool(description="Mixed.", execute=run), client_resolved=True)\n'
    ),
}


def broken_app(root: Path) -> Path:
    tools = root / "agent" / "tools"
    tools.mkdir(parents=True)
    for name, source in BROKEN_TOOLS.items():
        (tools / name).write_text(source, encoding="utf-8")
    return root


def test_build_on_the_fixture_exits_0_and_writes_the_manifest(
    hitl_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["build", str(hitl_copy)])

    assert code == 0
    manifest = json.loads((hitl_copy / ".eve" / "build" / "manifest.json").read_text(encoding="utf-8"))
    tools = {tool["name"]: tool for tool in manifest["tools"]}
    assert sorted(tools) == ["ask_question", "guarded_echo", "note", "send_newsletter"]
    assert [name for name, tool in sorted(tools.items()) if tool["editable"]] == ["send_newsletter"]
    out = capsys.readouterr().out
    assert "compiled 4 tool(s)" in out
    assert "tools/ask_question.py" in out
    assert "guarded_echo" in out
    assert "send_newsletter          tools/send_newsletter.py  [approval, editable]" in out


def test_build_in_a_real_process_with_the_installed_command_writes_the_manifest(hitl_copy: Path) -> None:
    command = Path(sys.executable).parent / "eve-py"

    done = subprocess.run(
        [str(command), "build", str(hitl_copy)], capture_output=True, text=True, timeout=30, check=False
    )

    assert done.returncode == 0, done.stderr
    manifest = json.loads((hitl_copy / ".eve" / "build" / "manifest.json").read_text(encoding="utf-8"))
    entry = next(tool for tool in manifest["tools"] if tool["name"] == "ask_question")
    assert entry["clientResolved"] is True
    assert entry["outputSchema"]["required"] == ["pickedIds"]


def test_build_on_a_broken_app_exits_1_and_prints_every_diagnostic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = broken_app(tmp_path / "broken")

    code = main(["build", str(app)])

    assert code == 1
    err = capsys.readouterr().err
    assert "4 error(s)" in err
    shape = 'Expected the tool export "tool" from "{}" to match the public eve shape.'
    assert shape.format("tools/not_a_tool.py") in err
    assert shape.format("tools/no_export.py") in err
    assert "RuntimeError: no database" in err
    assert 'A client-resolved tool must not define an "execute" function' in err
    assert not (app / ".eve" / "build" / "manifest.json").exists()


def test_build_in_a_real_process_reports_errors_on_stderr_without_a_traceback(tmp_path: Path) -> None:
    app = broken_app(tmp_path / "broken")

    done = subprocess.run(
        [sys.executable, "-m", "eve_py", "build", str(app)], capture_output=True, text=True, timeout=30, check=False
    )

    assert done.returncode == 1
    assert "tools/explodes.py" in done.stderr
    assert "Traceback" not in done.stderr


def test_build_on_a_folder_without_an_agent_folder_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["build", str(tmp_path)])

    assert code == 1
    assert "no agent/ folder" in capsys.readouterr().err


def test_build_shows_warnings_such_as_disabling_a_tool_that_does_not_exist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = tmp_path / "app" / "agent" / "tools"
    tools.mkdir(parents=True)
    (tools / "web_search.py").write_text("from eve_py import disable_tool\n\ntool = disable_tool()\n", encoding="utf-8")

    code = main(["build", str(tmp_path / "app")])

    assert code == 0
    captured = capsys.readouterr()
    output = captured.out + captured.err
    assert "tools/web_search.py" in output
    assert "nothing is disabled" in output


def test_build_reports_aborting_and_hanging_tool_files_and_every_other_problem(tmp_path: Path) -> None:
    app = broken_app(tmp_path / "broken")
    tools = app / "agent" / "tools"
    (tools / "cancelled.py").write_text("import asyncio\n\nraise asyncio.CancelledError()\n", encoding="utf-8")
    (tools / "interrupted.py").write_text("raise KeyboardInterrupt\n", encoding="utf-8")
    (tools / "spins.py").write_text("while True:\n    pass\n", encoding="utf-8")
    (tools / "sleeps.py").write_text("import time\n\ntime.sleep(3600)\n", encoding="utf-8")

    done = subprocess.run(
        [sys.executable, "-m", "eve_py", "build", str(app), "--import-timeout", "0.5"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )

    assert done.returncode == 1, done.stderr
    assert "8 error(s)" in done.stderr
    assert 'tools/cancelled.py: error E101: Failed to import the tool file "tools/cancelled.py": CancelledError' in (
        done.stderr
    )
    assert "tools/interrupted.py: error E101:" in done.stderr
    for hanging in ("tools/spins.py", "tools/sleeps.py"):
        assert f'{hanging}: error E111: The tool file "{hanging}" did not finish importing within 0.5 s' in done.stderr
    assert "RuntimeError: no database" in done.stderr
    assert "Traceback" not in done.stderr
    assert "parked sessions stay parked" not in done.stderr  # the tool's KeyboardInterrupt is no Ctrl-C
    assert not (app / ".eve" / "build" / "manifest.json").exists()


def test_build_takes_the_import_timeout_from_eve_import_timeout(tmp_path: Path) -> None:
    tools = tmp_path / "app" / "agent" / "tools"
    tools.mkdir(parents=True)
    (tools / "spins.py").write_text("while True:\n    pass\n", encoding="utf-8")
    env = {**os.environ, "EVE_IMPORT_TIMEOUT": "0.3"}

    done = subprocess.run(
        [sys.executable, "-m", "eve_py", "build", str(tmp_path / "app")],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env=env,
    )

    assert done.returncode == 1
    assert "did not finish importing within 0.3 s" in done.stderr


@pytest.mark.parametrize("value", ["0", "-2", "soon", "nan"])
def test_build_rejects_an_import_timeout_that_is_not_a_positive_number(
    hitl_copy: Path, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["build", str(hitl_copy), "--import-timeout", value])

    assert exited.value.code == 2
    assert "--import-timeout" in capsys.readouterr().err


def test_a_bad_eve_import_timeout_exits_2_with_a_clear_error(
    hitl_copy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("EVE_IMPORT_TIMEOUT", "soon")

    code = main(["build", str(hitl_copy)])

    assert code == 2
    assert "error: EVE_IMPORT_TIMEOUT must be a finite number of seconds > 0, got 'soon'" in capsys.readouterr().err
