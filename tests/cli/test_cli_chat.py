"""`eve-py chat APP_DIR`: an interactive terminal chat that asks the person every parked question."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest

from eve_py.cli._main import main
from tests.reporting_app import reporting_app

RunEve = Callable[..., "subprocess.CompletedProcess[str]"]

REPO = Path(__file__).resolve().parents[2]


def session_id_in(text: str) -> str:
    match = re.search(r"ses_[0-9A-Z]+", text)
    assert match, text
    return match.group(0)


def chat_in_process(monkeypatch: pytest.MonkeyPatch, app: Path, store: Path, typed: str, *extra: str) -> int:
    """Run `eve-py chat` in this process with `typed` as everything the person types."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    return main(["chat", str(app), "--store", str(store), *extra])


def test_chat_runs_the_template_flow_re_asking_an_invalid_pick_then_an_approval(
    eve: RunEve, hitl_app: Path, store: Path
) -> None:
    typed = "help me pick a template\n9\n2\nrun the guarded echo\ny\n"

    done = eve("chat", hitl_app, "--model", "mock", "--store", store, input=typed)

    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "? Which template should the page use?" in out
    assert "1. Blue - Calm, lots of white space" in out
    assert "2. Red - Bold headings" in out
    assert "3. Green - Friendly and rounded" in out
    assert "'9' is not one of the options; answer with a number from 1 to 3" in out
    assert out.count("Pick (1-3, several: 1,3): ") == 2, "the invalid pick is asked again"
    assert re.search(r"<- note: .*\"picked tpl_red\"", out)
    assert "agent > Recorded your pick: tpl_red." in out
    assert "? Approve tool call: guarded_echo" in out
    assert "guarded_echo will run with: text: hello" in out
    assert "Let guarded_echo run? [y/n]" in out
    assert "agent > The guarded echo ran and returned the token guarded-echo-ok-T4Q9." in out
    assert out.index("Recorded your pick") < out.index("Approve tool call")


def test_chat_edits_an_editable_approval_field_by_field_re_asking_a_bad_edit(
    eve: RunEve, hitl_app: Path, store: Path
) -> None:
    # e: edit; a bad address is refused and the approval asked again; then Enter keeps the subject.
    typed = "send the newsletter\ne\nnot-an-address\n\ne\nnews@example.org\n\n"

    done = eve("chat", hitl_app, "--model", "mock", "--store", store, input=typed)

    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "send_newsletter will run with: to: team@example.com; subject: Weekly news" in out
    assert out.count("Let send_newsletter run? [y/n/e] ") == 2
    assert "To [team@example.com]: " in out and "Subject [Weekly news]: " in out
    assert "! To: 'not-an-address' is not a valid email" in out  # the field as its prompt named it
    assert "editedInput" not in out
    assert '<- send_newsletter: {"sent": "yes", "to": "news@example.org", "subject": "Weekly news"}' in out
    assert "agent > Sent 'Weekly news' to news@example.org (you changed it before approving)." in out


def test_an_approval_that_is_not_editable_offers_no_edit(eve: RunEve, hitl_app: Path, store: Path) -> None:
    done = eve("chat", hitl_app, "--model", "mock", "--store", store, input="run the guarded echo\ne\ny\n")

    assert done.returncode == 0, done.stderr
    assert "! type y to approve or n to deny" in done.stdout
    assert "[y/n/e]" not in done.stdout
    assert "agent > The guarded echo ran" in done.stdout


def test_chat_resumes_a_session_parked_by_a_killed_process(eve: RunEve, hitl_app: Path, store: Path) -> None:
    command = [sys.executable, "-m", "eve_py", "chat", str(hitl_app), "--model", "mock", "--store", str(store)]
    with subprocess.Popen(command, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as first:
        assert first.stdin is not None and first.stdout is not None
        first.stdin.write(b"help me pick a template\n")
        first.stdin.flush()
        seen = b""
        while b"Pick (1-3, several: 1,3): " not in seen:
            chunk = cast(io.BufferedReader, first.stdout).read1(4096)
            assert chunk, f"chat ended before asking: {seen.decode()}"
            seen += chunk
        first.kill()
        first.wait()
    assert b"? Which template should the page use?" in seen
    session_id = session_id_in(seen.decode())

    done = eve("chat", hitl_app, "--model", "mock", "--session", session_id, "--store", store, input="3\n")

    assert done.returncode == 0, done.stderr
    assert f"session {session_id}" in done.stdout
    assert "? Which template should the page use?" in done.stdout
    assert "agent > Recorded your pick: tpl_green." in done.stdout


def test_chat_skipping_a_question_with_slash_skip_lets_the_turn_go_on_without_a_pick(
    monkeypatch: pytest.MonkeyPatch, hitl_app: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = chat_in_process(monkeypatch, hitl_app, store, "help me pick a template\n/skip\n", "--model", "mock")

    assert code == 0
    out = capsys.readouterr().out
    assert "agent > Recorded your pick: nothing (the question was skipped)." in out


def test_chat_accepts_several_picks_by_number_and_id_in_one_answer(
    monkeypatch: pytest.MonkeyPatch, hitl_app: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = chat_in_process(monkeypatch, hitl_app, store, "help me pick a template\n1, tpl_green\n", "--model", "mock")

    assert code == 0
    assert "agent > Recorded your pick: tpl_blue, tpl_green." in capsys.readouterr().out


def test_chat_denying_an_approval_passes_the_reason_to_the_model(
    monkeypatch: pytest.MonkeyPatch, hitl_app: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = chat_in_process(monkeypatch, hitl_app, store, "run the guarded echo\nn\nnot now\n", "--model", "mock")

    assert code == 0
    out = capsys.readouterr().out
    assert "x guarded_echo:" in out
    assert "agent > The guarded echo did not run: Tool execution was denied. Reason: not now" in out
    assert "guarded-echo-ok" not in out


def test_chat_asks_both_questions_of_one_batch_before_continuing(
    monkeypatch: pytest.MonkeyPatch, hitl_app: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = chat_in_process(monkeypatch, hitl_app, store, "compare two layouts\n1\nblue\n", "--model", "mock")

    assert code == 0
    out = capsys.readouterr().out
    assert out.index("? Which template for the first layout?") < out.index("? Which accent colour for the second")
    assert "agent > First layout: tpl_blue; second layout: blue." in out


def test_chat_quits_on_slash_quit(
    monkeypatch: pytest.MonkeyPatch, hitl_app: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = chat_in_process(monkeypatch, hitl_app, store, "/quit\nhelp me pick a template\n", "--model", "mock")

    assert code == 0
    assert "Which template" not in capsys.readouterr().out


def test_chat_with_an_unknown_provider_exits_2_with_a_clear_message(
    monkeypatch: pytest.MonkeyPatch, hitl_app: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = chat_in_process(monkeypatch, hitl_app, store, "hi\n", "--model", "nosuchprovider:model-9")

    assert code == 2
    assert "error: No provider is available for model 'nosuchprovider:model-9'" in capsys.readouterr().err


def test_chat_with_the_apps_own_model_string_and_no_provider_exits_2(
    monkeypatch: pytest.MonkeyPatch, hitl_app: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = chat_in_process(monkeypatch, hitl_app, store, "hi\n")

    assert code == 2
    assert "'anthropic/claude-sonnet-4.6'" in capsys.readouterr().err


def test_chat_with_the_mock_model_on_an_app_without_mock_model_py_exits_2(
    eve: RunEve, tmp_path: Path, store: Path
) -> None:
    (tmp_path / "app" / "agent").mkdir(parents=True)

    done = eve("chat", tmp_path / "app", "--model", "mock", "--store", store, input="hi\n")

    assert done.returncode == 2
    assert "--model mock needs" in done.stderr
    assert "Traceback" not in done.stderr


def test_chat_with_an_unknown_session_id_says_so_without_a_traceback(eve: RunEve, hitl_app: Path, store: Path) -> None:
    done = eve("chat", hitl_app, "--model", "mock", "--session", "ses_missing", "--store", store, input="hi\n")

    assert done.returncode != 0
    assert "No session with id 'ses_missing'" in done.stderr
    assert "Traceback" not in done.stderr


def test_chat_shows_a_tools_progress_and_log_lines_once(eve: RunEve, tmp_path: Path, store: Path) -> None:
    app = reporting_app(tmp_path)
    (app / "gate").write_text("open", encoding="utf-8")  # the echo need not wait for anyone here

    done = eve("chat", app, "--model", "mock", "--store", store, input="run the guarded echo\ny\n")

    assert done.returncode == 0, done.stderr
    out = done.stdout
    lines = [".. guarded_echo 1/2: echoing", '.. guarded_echo info echo: {"chars": 5}', ".. guarded_echo 2/2: done"]
    assert [out.count(line) for line in lines] == [1, 1, 1]  # shown live, not again when committed
    assert out.index(lines[0]) < out.index(lines[1]) < out.index(lines[2]) < out.index("<- guarded_echo")
