"""A `--store` that is not a session store is one `error:` line and exit 2, and stays untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from eve_py.cli._main import main
from tests.cli.conftest import RunEve

NOT_A_DATABASE = b"name,amount\nada,30\n" * 50
"""A CSV someone passed as --store by mistake."""

COMMANDS = {
    "run": ["run", "{app}", "help me pick a template", "--model", "mock"],
    "chat": ["chat", "{app}", "--model", "mock"],
    "serve": ["serve", "{app}", "--model", "mock", "--port", "0"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_store_that_is_not_a_sqlite_database_is_refused_and_left_untouched(
    command: str, hitl_app: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "sales.csv"
    store.write_bytes(NOT_A_DATABASE)
    args = [arg.format(app=hitl_app) for arg in COMMANDS[command]]

    code = main([*args, "--store", str(store)])

    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.startswith("error: ") and "not a database" in captured.err and str(store) in captured.err
    assert len(captured.err.strip().splitlines()) == 1 and "Traceback" not in captured.err
    assert store.read_bytes() == NOT_A_DATABASE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sales.csv"], "no -wal or -shm file beside it"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_store_that_cannot_be_opened_is_an_error_line(
    command: str, hitl_app: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [arg.format(app=hitl_app) for arg in COMMANDS[command]]

    code = main([*args, "--store", str(tmp_path)])  # a folder

    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.startswith("error: cannot open ") and "Traceback" not in captured.err
    assert list(tmp_path.iterdir()) == []


def test_a_bad_store_in_a_real_process_prints_no_traceback(eve: RunEve, hitl_app: Path, tmp_path: Path) -> None:
    store = tmp_path / "sales.csv"
    store.write_bytes(NOT_A_DATABASE)

    done = eve("run", hitl_app, "hello", "--model", "mock", "--store", store)

    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr
    assert store.read_bytes() == NOT_A_DATABASE


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_store_url_of_an_unknown_scheme_is_refused_naming_the_schemes_eve_py_has(
    command: str, hitl_app: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a URL taken for a path would become a file under here
    args = [arg.format(app=hitl_app) for arg in COMMANDS[command]]

    code = main([*args, "--store", "mysql://eve:s3cret@db.example/sessions"])

    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.startswith("error: ") and "'mysql'" in captured.err
    assert "postgresql://" in captured.err and "memory" in captured.err and "SQLite" in captured.err
    assert "s3cret" not in captured.err and "Traceback" not in captured.err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["serve", "{app}", "--port", "99999"], "--port: expected a port from 0 to 65535"),
        (["serve", "{app}", "--port", "-1"], "--port: expected a port from 0 to 65535"),
        (["mcp", "{app}", "--http", "--port", "99999"], "--port: expected a port from 0 to 65535"),
        (["serve", "{app}", "--lease-s", "-1"], "--lease-s: expected a number of seconds > 0"),
        (["serve", "{app}", "--recheck-s", "0"], "--recheck-s: expected a number of seconds > 0"),
        (["serve", "{app}", "--workers", "0"], "--workers: must be at least 1"),
    ],
)
def test_a_number_option_out_of_its_range_is_refused_before_anything_starts(
    args: list[str], problem: str, hitl_app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([arg.format(app=hitl_app) for arg in args])

    assert exited.value.code == 2
    assert problem in capsys.readouterr().err


def test_store_copy_from_a_url_is_refused_and_never_taken_for_a_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a URL taken for a path would be looked for, or made, under here

    code = main(["store", "copy", "postgresql://eve:s3cret@db.example/sessions", str(tmp_path / "out.db")])

    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.startswith("error: store copy reads from a SQLite file, and FROM is a postgresql:// URL")
    assert "postgresql:/eve" not in captured.err and "s3cret" not in captured.err
    assert list(tmp_path.iterdir()) == []
