"""`eve-py run APP_DIR MESSAGE`: one message, non-interactive, answers from a file."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from eve_py import Runtime, Session, load_agent
from eve_py.agent import load_mock_model
from eve_py.cli._main import main
from eve_py.models import _http
from eve_py.sessions import SQLiteSessionStore

RunEve = Callable[..., "subprocess.CompletedProcess[str]"]
WriteAnswers = Callable[[list[dict[str, Any]]], Path]

TEMPLATE = "help me pick a template"


def events_from(stdout: str) -> list[dict[str, Any]]:
    """Parse NDJSON output, checking every line is one event object."""
    events = []
    for line in stdout.splitlines():
        event = json.loads(line)
        assert isinstance(event, dict)
        assert set(event) == {"type", "data", "meta"}
        assert {"id", "at"} <= set(event["meta"]) <= {"id", "at", "deliveryIds"}
        events.append(event)
    return events


def session_id_in(text: str) -> str:
    match = re.search(r"ses_[0-9A-Z]+", text)
    assert match, text
    return match.group(0)


async def _stored_session(app: Path, store: Path, session_id: str) -> tuple[str, list[str]]:
    """(status, open request ids) of a session, read back through a fresh runtime on the store."""
    sessions = SQLiteSessionStore(store)
    try:
        runtime = Runtime(load_agent(app), model=load_mock_model(app), store=sessions)
        session: Session = await runtime.get_session(session_id)
        return session.status, [request.request_id for request in session.input_requests]
    finally:
        await sessions.aclose()


def stored_session(app: Path, store: Path, session_id: str) -> tuple[str, list[str]]:
    return anyio.run(_stored_session, app, store, session_id)


def run_cli(app: Path, store: Path, message: str, *extra: str | Path) -> int:
    return main(["run", str(app), message, "--model", "mock", "--store", str(store), *map(str, extra)])


# --- answering from a file --------------------------------------------------------------------------


def test_run_json_prints_ndjson_events_ending_in_a_completed_turn(
    hitl_app: Path, store: Path, write_answers: WriteAnswers, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = write_answers([{"value": {"pickedIds": ["tpl_blue"]}}])

    code = run_cli(hitl_app, store, TEMPLATE, "--answers", answers, "--json")

    assert code == 0
    events = events_from(capsys.readouterr().out)
    types = [event["type"] for event in events]
    assert types[0] == "session.started"
    assert [event["type"] for event in events[-2:]] == ["turn.completed", "session.waiting"]
    [requested] = [event for event in events if event["type"] == "input.requested"]
    [request] = requested["data"]["requests"]
    assert request["action"]["toolName"] == "ask_question"
    assert [option["id"] for option in request["options"]] == ["tpl_blue", "tpl_red", "tpl_green"]
    results = [event["data"]["result"] for event in events if event["type"] == "action.result"]
    assert [(result["toolName"], result["output"]["text"]) for result in results] == [("note", "picked tpl_blue")]
    [completed] = [event for event in events if event["type"] == "message.completed"]
    assert completed["data"]["message"] == "Recorded your pick: tpl_blue."


def test_run_json_in_a_real_process_prints_one_event_per_line(
    eve: RunEve, hitl_app: Path, store: Path, write_answers: WriteAnswers
) -> None:
    answers = write_answers([{"value": {"pickedIds": ["tpl_green"]}}])

    done = eve("run", hitl_app, TEMPLATE, "--model", "mock", "--answers", answers, "--json", "--store", store)

    assert done.returncode == 0, done.stderr
    events = events_from(done.stdout)
    assert [event["type"] for event in events[-2:]] == ["turn.completed", "session.waiting"]
    assert any(e["type"] == "message.completed" and "tpl_green" in e["data"]["message"] for e in events)


def test_run_without_json_prints_the_tool_results_and_the_reply(
    hitl_app: Path, store: Path, write_answers: WriteAnswers, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = write_answers([{"value": {"pickedIds": ["tpl_red"]}}])

    code = run_cli(hitl_app, store, TEMPLATE, "--answers", answers)

    assert code == 0
    out = capsys.readouterr().out
    assert "<- note:" in out
    assert "agent > Recorded your pick: tpl_red." in out


def test_run_without_json_shows_each_question_and_the_answer_it_took_from_the_file(
    hitl_app: Path, store: Path, write_answers: WriteAnswers, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = write_answers([{"optionId": "approve"}, {"value": {"pickedIds": ["blue"]}}])

    code = run_cli(hitl_app, store, "review my page", "--answers", answers)

    assert code == 0
    out = capsys.readouterr().out
    assert f"? Approve tool call: guarded_echo\n  answer from {answers}: approved\n" in out
    assert f"? Which colour should the review use?\n  answer from {answers}: Blue\n" in out
    assert out.index("answer from") < out.index("agent > The guarded echo ran")


def test_run_answers_an_approval_from_the_file(
    hitl_app: Path, store: Path, write_answers: WriteAnswers, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = write_answers([{"optionId": "approve"}])

    code = run_cli(hitl_app, store, "run the guarded echo", "--answers", answers)

    assert code == 0
    assert "returned the token guarded-echo-ok-T4Q9" in capsys.readouterr().out


def test_run_denies_an_approval_with_the_reason_from_the_file(
    hitl_app: Path, store: Path, write_answers: WriteAnswers, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = write_answers([{"optionId": "deny", "text": "not today"}])

    code = run_cli(hitl_app, store, "run the guarded echo", "--answers", answers)

    assert code == 0
    out = capsys.readouterr().out
    assert "did not run: Tool execution was denied. Reason: not today" in out
    assert "guarded-echo-ok" not in out


def test_run_gives_the_answers_in_order_to_a_turn_that_parks_twice(
    hitl_app: Path, store: Path, write_answers: WriteAnswers, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = write_answers([{"value": {"pickedIds": ["tpl_blue"]}}, {"value": {"pickedIds": ["red"]}}])

    code = run_cli(hitl_app, store, "set up a palette", "--answers", answers)

    assert code == 0
    out = capsys.readouterr().out
    assert "agent > Your palette is set: template tpl_blue, accent red." in out


def test_a_skipped_palette_question_reads_as_text_not_a_dict(
    hitl_app: Path, store: Path, write_answers: WriteAnswers, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = write_answers([{"value": {"pickedIds": ["tpl_blue"]}}, {"action": "decline"}])

    assert run_cli(hitl_app, store, "set up a palette", "--answers", answers) == 0
    out = capsys.readouterr().out
    assert "agent > Your palette is set: template tpl_blue, accent nothing (the question was skipped)." in out
    assert "{'recorded'" not in out


def test_run_gives_the_answers_in_request_order_to_one_batch_of_two_requests(
    hitl_app: Path, store: Path, write_answers: WriteAnswers, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = write_answers([{"optionId": "approve"}, {"value": {"pickedIds": ["blue"]}}])

    code = run_cli(hitl_app, store, "review my page", "--answers", answers)

    assert code == 0
    assert "returned the token guarded-echo-ok-T4Q9. Colour: blue." in capsys.readouterr().out


# --- stopping when an answer is missing or wrong --------------------------------------------------


def test_run_without_enough_answers_exits_3_and_says_how_to_continue(
    hitl_app: Path, store: Path, write_answers: WriteAnswers, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = write_answers([])

    code = run_cli(hitl_app, store, TEMPLATE, "--answers", answers)

    assert code == 3
    err = capsys.readouterr().err
    session_id = session_id_in(err)
    assert "waiting for 1 answer(s)" in err
    assert f"--session {session_id}" in err
    status, open_requests = stored_session(hitl_app, store, session_id)
    assert status == "waiting"
    assert len(open_requests) == 1


def test_run_without_a_message_continues_a_parked_session_with_the_answers_file(
    hitl_app: Path, store: Path, write_answers: WriteAnswers, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(hitl_app, store, TEMPLATE) == 3
    session_id = session_id_in(capsys.readouterr().err)
    answers = write_answers([{"value": {"pickedIds": ["tpl_green"]}}])

    code = main(
        [
            "run",
            str(hitl_app),
            "--session",
            session_id,
            "--answers",
            str(answers),
            "--model",
            "mock",
            "--store",
            str(store),
        ]
    )

    assert code == 0
    assert "agent > Recorded your pick: tpl_green." in capsys.readouterr().out
    status, open_requests = stored_session(hitl_app, store, session_id)
    assert (status, open_requests) == ("idle", [])


def test_run_without_a_message_or_a_session_is_a_usage_error(
    hitl_app: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", str(hitl_app), "--model", "mock", "--store", str(store)])

    assert code == 2
    assert "give a MESSAGE, or --session ID" in capsys.readouterr().err


def test_run_takes_the_message_after_the_options_too(
    hitl_app: Path, store: Path, write_answers: WriteAnswers, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = write_answers([{"value": {"pickedIds": ["tpl_red"]}}])

    code = main(["run", str(hitl_app), "--model", "mock", "--store", str(store), "--answers", str(answers), TEMPLATE])

    assert code == 0, capsys.readouterr().err
    assert "agent > Recorded your pick: tpl_red." in capsys.readouterr().out


def test_run_session_id_then_a_message_starts_a_turn_on_that_session(
    hitl_app: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(hitl_app, store, "hello") == 0
    session_id = session_id_in(capsys.readouterr().out)

    code = main(
        ["run", str(hitl_app), "--session", session_id, "tell me a story", "--model", "mock", "--store", str(store)]
    )

    assert code == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert f"session {session_id}" in out
    assert "agent > " in out


def test_run_continuing_an_idle_session_says_there_is_nothing_to_continue(
    hitl_app: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(hitl_app, store, "hello") == 0
    session_id = session_id_in(capsys.readouterr().out)

    code = main(["run", str(hitl_app), "--session", session_id, "--model", "mock", "--store", str(store)])

    assert code == 2
    err = capsys.readouterr().err
    assert f"session {session_id} is idle (its last turn completed)" in err
    assert f"eve-py run {hitl_app} --session {session_id} --model mock --store {store} MESSAGE" in err


def test_run_with_no_answers_file_at_all_also_exits_3(
    hitl_app: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_cli(hitl_app, store, TEMPLATE)

    assert code == 3
    err = capsys.readouterr().err
    assert f"continue with: eve-py run {hitl_app} --session ses_" in err
    assert "--answers FILE" in err


def test_run_with_an_answer_failing_the_schema_exits_2_and_the_session_stays_parked(
    eve: RunEve, hitl_app: Path, store: Path, write_answers: WriteAnswers, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = write_answers([{"value": {"pickedIds": "tpl_blue"}}])

    code = run_cli(hitl_app, store, TEMPLATE, "--answers", answers, "--json")

    assert code == 2
    captured = capsys.readouterr()
    assert "rejected: value fails the schema at pickedIds: 'tpl_blue' is not of type 'array'" in captured.err
    session_id = session_id_in(captured.err)
    status, open_requests = stored_session(hitl_app, store, session_id)
    assert status == "waiting"
    [requested] = [e for e in events_from(captured.out) if e["type"] == "input.requested"]
    assert open_requests == [requested["data"]["requests"][0]["requestId"]]

    # Nothing was lost: the same question is still open, and chat --session answers it.
    done = eve("chat", hitl_app, "--model", "mock", "--session", session_id, "--store", store, input="1\n")

    assert done.returncode == 0, done.stderr
    assert "? Which template should the page use?" in done.stdout
    assert "agent > Recorded your pick: tpl_blue." in done.stdout
    status, open_requests = stored_session(hitl_app, store, session_id)
    assert (status, open_requests) == ("idle", [])


def test_run_session_with_a_new_message_dismisses_the_parked_question_and_runs_the_new_turn(
    hitl_app: Path, store: Path, write_answers: WriteAnswers, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(hitl_app, store, TEMPLATE, "--answers", write_answers([])) == 3
    session_id = session_id_in(capsys.readouterr().err)
    _, [parked_id] = stored_session(hitl_app, store, session_id)

    answers = write_answers([{"value": {"pickedIds": ["tpl_green"]}}])
    code = run_cli(hitl_app, store, TEMPLATE, "--session", session_id, "--answers", answers, "--json")

    assert code == 0
    events = events_from(capsys.readouterr().out)
    dismissal = next(e["data"] for e in events if e["type"] == "input.resolved")  # the first: the message's
    assert [(r["requestId"], r["outcome"]) for r in dismissal["resolutions"]] == [(parked_id, "ignored")]
    requested = [e["data"]["requests"][0]["requestId"] for e in events if e["type"] == "input.requested"]
    assert requested != [parked_id]
    assert [event["type"] for event in events[-2:]] == ["turn.completed", "session.waiting"]
    assert any(e["type"] == "message.completed" and "tpl_green" in e["data"]["message"] for e in events)


def test_run_with_an_answer_object_that_is_no_input_response_exits_2_with_a_clear_message(
    eve: RunEve, hitl_app: Path, store: Path, write_answers: WriteAnswers
) -> None:
    answers = write_answers([{"pick": "tpl_blue"}])

    done = eve("run", hitl_app, TEMPLATE, "--model", "mock", "--answers", answers, "--store", store)

    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "pick" in done.stderr


def test_run_with_an_answers_file_that_is_not_json_exits_2(
    hitl_app: Path, store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text("{not json", encoding="utf-8")

    code = run_cli(hitl_app, store, TEMPLATE, "--answers", answers)

    assert code == 2
    assert f"cannot read answers file {str(answers)!r}" in capsys.readouterr().err


def test_run_with_an_answers_file_that_is_not_an_array_of_objects_exits_2(
    hitl_app: Path, store: Path, write_answers: WriteAnswers, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = write_answers([{"optionId": "approve"}])
    answers.write_text('{"optionId": "approve"}', encoding="utf-8")

    code = run_cli(hitl_app, store, TEMPLATE, "--answers", answers)

    assert code == 2
    assert "must hold a JSON array of objects" in capsys.readouterr().err


# --- choosing a model ---------------------------------------------------------------------------------


def test_run_with_an_unknown_provider_exits_2_with_a_clear_message(
    hitl_app: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", str(hitl_app), "hi", "--model", "nosuchprovider:model-9", "--store", str(store)])

    assert code == 2
    err = capsys.readouterr().err
    assert "No provider is available for model 'nosuchprovider:model-9'" in err
    assert "--model mock" in err


def test_run_with_the_mock_model_on_an_app_without_mock_model_py_exits_2(
    tmp_path: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "app" / "agent").mkdir(parents=True)

    code = main(["run", str(tmp_path / "app"), "hi", "--model", "mock", "--store", str(store)])

    assert code == 2
    err = capsys.readouterr().err
    assert "--model mock needs" in err
    assert "mock_model.py" in err


def test_run_with_a_mock_model_py_raising_keyboard_interrupt_at_import_exits_2_naming_the_file(
    tmp_path: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mock = tmp_path / "app" / "agent" / "mock_model.py"
    mock.parent.mkdir(parents=True)
    mock.write_text("raise KeyboardInterrupt\n", encoding="utf-8")

    code = main(["run", str(tmp_path / "app"), "hi", "--model", "mock", "--store", str(store)])

    assert code == 2
    err = capsys.readouterr().err
    assert f"{mock} failed to import: KeyboardInterrupt" in err
    assert "parked sessions stay parked" not in err


def test_run_with_a_mock_model_py_that_never_finishes_importing_exits_2_naming_the_file(
    tmp_path: Path, store: Path, eve: RunEve
) -> None:
    mock = tmp_path / "app" / "agent" / "mock_model.py"
    mock.parent.mkdir(parents=True)
    mock.write_text("while True:\n    pass\n", encoding="utf-8")

    done = eve("run", tmp_path / "app", "hi", "--model", "mock", "--store", store, env={"EVE_IMPORT_TIMEOUT": "0.3"})

    assert done.returncode == 2, done.stderr
    assert f"{mock} did not finish importing within 0.3 s" in done.stderr


def test_run_on_an_app_without_any_model_exits_2_and_suggests_one(
    tmp_path: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "app" / "agent").mkdir(parents=True)

    code = main(["run", str(tmp_path / "app"), "hi", "--store", str(store)])

    assert code == 2
    assert "No model" in capsys.readouterr().err


def test_run_on_a_broken_app_exits_1_with_the_diagnostics(
    tmp_path: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = tmp_path / "app" / "agent" / "tools" / "bad.py"
    tool.parent.mkdir(parents=True)
    tool.write_text("tool = 1\n", encoding="utf-8")

    code = main(["run", str(tmp_path / "app"), "hi", "--model", "mock", "--store", str(store)])

    assert code == 1
    assert 'Expected the tool export "tool" from "tools/bad.py" to match the public eve shape.' in (
        capsys.readouterr().err
    )


def test_run_with_an_unknown_session_id_fails_with_a_clear_message(
    hitl_app: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_cli(hitl_app, store, "hi", "--session", "ses_missing")

    assert code == 2
    assert "No session with id 'ses_missing'" in capsys.readouterr().err


def test_a_model_that_never_answers_shows_waiting_lines_then_a_read_timeout(
    hitl_app: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    held: list[socket.socket] = []
    server = socket.create_server(("127.0.0.1", 0))
    accepting = threading.Thread(target=lambda: held.append(server.accept()[0]), daemon=True)
    accepting.start()
    monkeypatch.setattr(_http, "WAIT_NOTICE_S", (0.2, 0.3))
    monkeypatch.setenv("EVE_MODEL_READ_TIMEOUT_S", "1")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.getsockname()[1]}/v1")
    try:
        code = main(["run", str(hitl_app), "hello", "--model", "openai:llama", "--store", str(tmp_path / "s.db")])
    finally:
        for connection in held:
            connection.close()
        server.close()
    err = capsys.readouterr().err
    assert code != 0
    assert "  ... waiting for openai to answer (0.2 s so far; the read timeout is 1 s)" in err
    assert "took the request but sent nothing for 1 s (read timeout;" in err
