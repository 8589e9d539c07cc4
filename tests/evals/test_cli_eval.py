"""`eve-py eval`: exit codes, output, artifacts, JUnit, `--list`, `--json` and `--url`."""

from __future__ import annotations

import json
import os
import socket
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
import uvicorn

from eve_py import Runtime
from eve_py.agent import Agent
from eve_py.cli._main import main
from eve_py.models._base import Model
from eve_py.server import create_app
from eve_py.sessions import MemorySessionStore
from tests.evals.conftest import RunEve, WriteEval

FAILING_EVAL = """
from eve_py.evals import define_eval


async def test(t):
    await t.send("help me pick a template")
    t.completed()


evaluation = define_eval(test=test, tags=["broken"])
"""


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without model or API credentials (so no real model can be reached)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("AI_GATEWAY_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "EVE_MODEL", "EVE_API_TOKEN")
    }
    return {**env, "COLUMNS": "160", **extra}


def only_run_folder(app: Path) -> Path:
    [folder] = (app / ".eve" / "evals").iterdir()
    return folder


def test_the_fixture_evals_pass_on_the_mock_model_with_progress_table_and_artifacts(
    eve: RunEve, app_copy: Path
) -> None:
    done = eve("eval", app_copy, "--model", "mock", env=clean_env())

    assert done.returncode == 0, done.stderr + done.stdout
    assert "PASS  hitl/approval_vs_client_resolved" in done.stdout
    assert "PASS  hitl/client_resolved_question" in done.stdout
    assert "(model mock, in-process)" in done.stdout
    assert "2 passed, 0 failed, 0 errored in" in done.stdout
    folder = only_run_folder(app_copy)
    assert f"artifacts: {folder}" in done.stdout
    assert json.loads((folder / "summary.json").read_text())["passed"] == 2
    assert (folder / "hitl" / "client_resolved_question" / "events.ndjson").is_file()


def test_json_output_and_a_junit_file(eve: RunEve, app_copy: Path, tmp_path: Path) -> None:
    junit = tmp_path / "reports" / "evals.xml"

    done = eve(
        "eval", app_copy, "--model", "mock", "--json", "--junit", junit, "--max-concurrency", "1", env=clean_env()
    )

    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["summary"]["status"] == "passed"
    assert document["summary"]["artifacts"] == str(only_run_folder(app_copy))
    assert [r["id"] for r in document["results"]] == [
        "hitl/approval_vs_client_resolved",
        "hitl/client_resolved_question",
    ]
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "0"


def test_a_failing_eval_exits_1_and_prints_its_report(eve: RunEve, app_copy: Path, write_eval: WriteEval) -> None:
    write_eval("broken/completes_eval.py", FAILING_EVAL)

    done = eve("eval", app_copy, "--model", "mock", env=clean_env())

    assert done.returncode == 1
    assert "FAIL  broken/completes" in done.stdout
    assert "eval 'broken/completes' failed at step 2 `completed()`" in done.stdout
    assert "1 failed" in done.stdout and "2 passed" in done.stdout


def test_tag_selects_evals_and_an_unknown_tag_is_a_configuration_error(
    eve: RunEve, app_copy: Path, write_eval: WriteEval
) -> None:
    write_eval("broken/completes_eval.py", FAILING_EVAL)

    selected = eve("eval", app_copy, "--model", "mock", "--tag", "regression", env=clean_env())
    assert selected.returncode == 0, selected.stdout
    assert "broken/completes" not in selected.stdout

    unknown = eve("eval", app_copy, "--model", "mock", "--tag", "nightly", env=clean_env())
    assert unknown.returncode == 2
    assert "no eval has the tag(s) nightly; the tags in" in unknown.stderr
    assert "are: broken, hitl, regression" in unknown.stderr


def test_list_prints_the_selected_evals_without_running_them(eve: RunEve, app_copy: Path) -> None:
    table = eve("eval", app_copy, "--list", env=clean_env())
    listing = eve("eval", app_copy, "--list", "--json", env=clean_env())

    assert table.returncode == 0 and listing.returncode == 0
    assert "2 eval(s)" in table.stdout and "hitl/client_resolved_question" in table.stdout
    evals = json.loads(listing.stdout)["evals"]
    assert [e["id"] for e in evals] == ["hitl/approval_vs_client_resolved", "hitl/client_resolved_question"]
    assert evals[0]["tags"] == ["hitl", "regression"] and evals[0]["timeoutS"] == 180.0
    assert not (app_copy / ".eve" / "evals").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "nope"], "error: No provider is available for model 'nope'"),
        (["--model", "anthropic/claude-sonnet-4.6"], "AI_GATEWAY_API_KEY"),
        ([], "AI_GATEWAY_API_KEY"),  # the agent's own model, a gateway model, without a key
        (["--url", "http://127.0.0.1:9", "--model", "mock"], "--model does not apply with --url"),
        (["--url", "http://127.0.0.1:9"], "cannot reach the eve server at http://127.0.0.1:9"),
    ],
)
def test_configuration_errors_exit_2(eve: RunEve, app_copy: Path, args: list[str], message: str) -> None:
    done = eve("eval", app_copy, *args, env=clean_env())

    assert done.returncode == 2, done.stdout
    assert message in done.stderr
    assert not (app_copy / ".eve" / "evals").exists()


def test_a_bad_eval_file_or_an_app_that_does_not_compile_exits_2(
    eve: RunEve, app_copy: Path, write_eval: WriteEval, tmp_path: Path
) -> None:
    write_eval("bad_eval.py", "evaluation = 'not an eval'\n")
    bad_eval = eve("eval", app_copy, "--model", "mock", env=clean_env())
    assert bad_eval.returncode == 2
    assert "error: 1 problem(s) in" in bad_eval.stderr
    assert "evals/bad_eval.py: expected the export `evaluation = define_eval(...)`, found str" in bad_eval.stderr

    (app_copy / "evals" / "bad_eval.py").unlink()
    (app_copy / "agent" / "tools" / "broken.py").write_text("tool = 42\n")
    broken_app = eve("eval", app_copy, "--model", "mock", env=clean_env())
    assert broken_app.returncode == 2
    assert "error while compiling" in broken_app.stderr or "error(s) while compiling" in broken_app.stderr

    no_evals = eve("eval", tmp_path, "--model", "mock", env=clean_env())
    assert no_evals.returncode == 2
    assert "has no evals/ folder" in no_evals.stderr


def test_bad_numbers_are_usage_errors(eve: RunEve, app_copy: Path) -> None:
    done = eve("eval", app_copy, "--max-concurrency", "0", env=clean_env())

    assert done.returncode == 2
    assert "--max-concurrency: must be at least 1, got 0" in done.stderr


def test_without_rich_the_command_asks_for_the_evals_extra(
    app_copy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "rich.console", None)

    code = main(["eval", str(app_copy), "--model", "mock"])

    assert code == 2
    assert "pip install 'eve-py[evals]' (or pass --json)" in capsys.readouterr().err


@pytest.mark.anyio
async def test_url_runs_the_evals_on_a_running_server(
    app_copy: Path,
    hitl_agent: Agent,
    hitl_model: Model,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    token = "eval-token-5d1e"
    monkeypatch.setenv("EVE_API_TOKEN", token)
    runtime = Runtime(hitl_agent, model=hitl_model, store=MemorySessionStore())
    app = create_app(runtime, tokens=[token], chat_ui=False)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)  # requests queue until uvicorn accepts: no wait for start-up needed
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, lifespan="on"))
    try:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(server.serve, [sock])
                try:
                    code = await anyio.to_thread.run_sync(main, ["eval", str(app_copy), "--url", url, "--json"])
                finally:
                    server.should_exit = True
    finally:
        sock.close()

    assert code == 0
    document = json.loads(capsys.readouterr().out)
    assert document["summary"]["backend"] == url
    assert document["summary"]["model"] == "server"
    assert [r["status"] for r in document["results"]] == ["passed", "passed"]
    for result in document["results"]:  # the sessions ran on the server, in its store
        [session_id] = result["sessions"]
        session = await runtime.get_session(session_id)
        assert session.status == "idle"
        assert len(await session.events()) == result["eventCount"]
