"""Artifacts (summary.json, results.jsonl, events.ndjson) and JUnit XML of an eval run."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from eve_py.agent import Agent
from eve_py.evals import InProcessBackend, discover_evals, run_evals
from eve_py.evals.report import EvalRun, junit_xml, write_artifacts, write_junit
from eve_py.models._base import Model
from tests.evals.conftest import WriteEval

pytestmark = pytest.mark.anyio

FAILING = """
from eve_py.evals import define_eval


async def test(t):
    turn = await t.send("hello")
    t.check(turn.status == "waiting", "expected the turn to wait \\x1b[31m(in red)")


evaluation = define_eval(test=test, tags=["extra"], metadata={"ticket": "EVE-1"})
"""

ERRORING = """
from eve_py.evals import define_eval


async def test(t):
    raise KeyError("missing")


evaluation = define_eval(test=test, tags=["extra"])
"""


@pytest.fixture
async def run(hitl_agent: Agent, hitl_model: Model, app_copy: Path, write_eval: WriteEval) -> EvalRun:
    write_eval("extra/failing_eval.py", FAILING)
    write_eval("extra/erroring_eval.py", ERRORING)
    cases = discover_evals(app_copy).cases
    results = await run_evals(cases, lambda: InProcessBackend(hitl_agent, hitl_model))
    return EvalRun(
        app_dir=app_copy,
        model="mock",
        backend="in-process",
        started_at="2026-09-12T10:15:00.123Z",
        duration_s=0.5,
        results=results,
    )


async def test_artifacts_hold_the_summary_one_line_per_eval_and_each_evals_events(run: EvalRun) -> None:
    folder = write_artifacts(run)

    assert folder == run.app_dir / ".eve" / "evals" / "20260912T101500Z"
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["total"] == 4
    assert (summary["passed"], summary["failed"], summary["errored"]) == (2, 1, 1)
    assert (summary["status"], summary["exitCode"], summary["model"]) == ("failed", 1, "mock")
    assert summary["artifacts"] == str(folder)
    lines = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    by_id = {line["id"]: line for line in lines}
    assert list(by_id) == [
        "extra/erroring",
        "extra/failing",
        "hitl/approval_vs_client_resolved",
        "hitl/client_resolved_question",
    ]
    failing = by_id["extra/failing"]
    assert failing["status"] == "failed"
    assert failing["metadata"] == {"ticket": "EVE-1"}
    assert failing["failure"]["step"] == 2 and failing["failure"]["label"].startswith("check('expected the turn")
    assert failing["file"] == "evals/extra/failing_eval.py"
    assert by_id["extra/erroring"]["failure"]["type"] == "KeyError"
    assert by_id["extra/erroring"]["eventCount"] == 0
    question = by_id["hitl/client_resolved_question"]
    assert question["failure"] is None and question["steps"] > 10
    events = [json.loads(line) for line in (folder / question["events"]).read_text().splitlines()]
    assert len(events) == question["eventCount"]
    assert events[0]["type"] == "session.started"
    assert events[0]["data"]["runtime"]["eveVersion"].startswith("eve-py/")
    assert {"input.requested", "input.resolved", "action.result", "turn.completed"} <= {e["type"] for e in events}


async def test_a_second_run_in_the_same_second_gets_its_own_folder(run: EvalRun, tmp_path: Path) -> None:
    first = write_artifacts(run, root=tmp_path / "out")
    second = write_artifacts(run, root=tmp_path / "out")

    assert first.name == "20260912T101500Z"
    assert second.name == "20260912T101500Z-2"
    assert (second / "summary.json").is_file()


async def test_junit_xml_has_a_testcase_per_eval_with_failures_and_errors(run: EvalRun, tmp_path: Path) -> None:
    path = tmp_path / "reports" / "junit.xml"
    write_junit(run, path)

    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "1", "1")
    [suite] = root.findall("testsuite")
    assert suite.get("name") == "agent-tools-hitl"
    assert {p.get("name"): p.get("value") for p in suite.iter("property")}["model"] == "mock"
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert set(cases) == {"erroring", "failing", "approval_vs_client_resolved", "client_resolved_question"}
    assert cases["client_resolved_question"].get("classname") == "agent-tools-hitl.hitl"
    assert list(cases["client_resolved_question"]) == []
    failure = cases["failing"].find("failure")
    assert failure is not None and failure.get("type") == "EvalAssertionError"
    assert (failure.get("message") or "").startswith("expected the turn to wait \ufffd[31m(in red)")
    assert "failed at step 2 `check(" in (failure.text or "")
    failed = run.results[1].failure
    assert failed is not None and "\x1b" in failed.reason  # the report has it; XML 1.0 cannot hold it
    assert "\x1b" not in junit_xml(run)
    error = cases["erroring"].find("error")
    assert error is not None and error.get("type") == "KeyError" and "traceback:" in (error.text or "")
