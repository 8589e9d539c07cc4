"""An eval report lists each request its sessions parked: how it ended and who answered it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from eve_py import Agent, InputResponse, Runtime, define_tool
from eve_py.agent import Agent as LoadedAgent
from eve_py.evals import InProcessBackend, discover_evals, run_evals
from eve_py.evals._runner import EvalResult
from eve_py.evals.console import ConsoleReporter
from eve_py.evals.report import EvalRun, result_record, write_artifacts
from eve_py.models._base import Model
from eve_py.protocol import AnyEvent, new_event
from eve_py.protocol.payloads import InputRequestedData, InputResolution, InputResolvedData, SessionStartedData
from eve_py.protocol.requests import InputRequest, ToolCallAction
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.conftest import HITL_APP

pytestmark = pytest.mark.anyio


def printed(result: EvalResult) -> list[str]:
    """The lines `eve-py eval` prints for `result` as it finishes (a pipe: no live bar)."""
    out = io.StringIO()
    with ConsoleReporter(Console(file=out, width=200), total=1) as reporter:
        reporter.finished(result)
    return [line for line in out.getvalue().splitlines() if line.strip()]


def result_of(sessions: list[str], events: list[AnyEvent]) -> EvalResult:
    """A passed eval's result holding `events` of `sessions` (as `run_evals` returns it)."""
    case = discover_evals(HITL_APP).cases[0]
    return EvalResult(
        case=case, status="passed", duration_s=0.1, timeout_s=10, steps=3, sessions=sessions, events=events
    )


async def test_each_evals_line_lists_its_requests_and_who_answered_them(
    hitl_agent: LoadedAgent, hitl_model: Model, app_copy: Path
) -> None:
    evals = await run_evals(discover_evals(HITL_APP).cases, lambda: InProcessBackend(hitl_agent, hitl_model))
    results = {result.id: result for result in evals}
    run = EvalRun(
        app_dir=app_copy,
        model="mock",
        backend="in-process",
        started_at="2026-09-12T10:15:00Z",
        duration_s=0.5,
        results=list(results.values()),
    )

    folder = write_artifacts(run)

    lines = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    approval = next(line for line in lines if line["id"] == "hitl/approval_vs_client_resolved")
    requests = approval["requests"]
    assert [(r["toolName"], r["kind"], r["outcome"], r["answeredBy"], r["expiresAt"]) for r in requests] == [
        ("guarded_echo", "tool-approval", "approved", "local", None),
        ("ask_question", "question", "answered", "local", None),
    ]
    guarded, question = requests
    assert guarded["session"] == question["session"] == approval["sessions"][0]
    assert guarded["prompt"] == "Approve tool call: guarded_echo"
    shown = printed(results["hitl/approval_vs_client_resolved"])
    assert shown[0].startswith("PASS  hitl/approval_vs_client_resolved")
    assert shown[1:] == [
        f"      guarded_echo {guarded['requestId']} [tool-approval]: approved by local",
        f"      ask_question {question['requestId']} [question]: answered by local",
    ]


def publish(version: str) -> dict[str, str]:
    """Publish a release."""
    return {"published": version}


def respond(request: MockModelRequest) -> str | MockResponse:
    if not request.tool_results_since_last_user_message:
        return MockResponse(tool_calls=[MockToolCall("publish", {"version": "1.4.0"})])
    return "published"


async def test_an_answer_from_a_named_principal_is_reported_with_its_name() -> None:
    agent = Agent.from_definitions(
        {"publish": define_tool(description="Publish a release.", execute=publish, needs_approval=True)}
    )
    runtime = Runtime(agent, model=MockModel(respond))
    session = await runtime.create_session()
    [request] = (await session.send("publish 1.4.0")).input_requests
    await session.respond([InputResponse(request_id=request.request_id, option_id="approve")], by="alice")
    events: list[AnyEvent] = list(await session.events())
    await runtime.aclose()
    result = result_of([session.id], events)

    records = result_record(result)["requests"]

    assert records == [
        {
            "session": session.id,
            "requestId": request.request_id,
            "toolName": "publish",
            "kind": "tool-approval",
            "prompt": "Approve tool call: publish",
            "expiresAt": None,
            "outcome": "approved",
            "answeredBy": "alice",
        }
    ]
    assert f"      publish {request.request_id} [tool-approval]: approved by alice" in printed(result)


def deploy_request(request_id: str, expires_at: str) -> InputRequest:
    return InputRequest(
        request_id=request_id,
        kind="tool-approval",
        action=ToolCallAction(call_id=request_id, tool_name="deploy", input={"env": "prod"}),
        prompt="Approve tool call: deploy",
        display="confirmation",
        expires_at=expires_at,
    )


async def test_an_expired_request_and_one_left_open_are_reported_as_such() -> None:
    expired = deploy_request("call-1", "2026-11-25T10:05:00.000Z")
    still_open = deploy_request("call-2", "2026-11-26T10:05:00.000Z")
    nobody = InputResolution(kind="tool-approval", outcome="expired", request_id="call-1")
    events: list[AnyEvent] = [
        new_event(SessionStartedData()),
        new_event(InputRequestedData.of([expired], sequence=0, turn_id="turn_1", step_index=0)),
        new_event(InputResolvedData(sequence=0, turn_id="turn_1", step_index=0, resolutions=[nobody])),
        new_event(InputRequestedData.of([still_open], sequence=0, turn_id="turn_1", step_index=1)),
    ]
    result = result_of(["ses_1"], events)

    records = result_record(result)["requests"]

    assert records == [
        {
            "session": "ses_1",
            "requestId": "call-1",
            "toolName": "deploy",
            "kind": "tool-approval",
            "prompt": "Approve tool call: deploy",
            "expiresAt": "2026-11-25T10:05:00.000Z",
            "outcome": "expired",
            "answeredBy": None,
        },
        {
            "session": "ses_1",
            "requestId": "call-2",
            "toolName": "deploy",
            "kind": "tool-approval",
            "prompt": "Approve tool call: deploy",
            "expiresAt": "2026-11-26T10:05:00.000Z",
            "outcome": None,
            "answeredBy": None,
        },
    ]
    shown = printed(result)
    assert "      deploy call-1 [tool-approval]: expired: nobody answered by 2026-11-25T10:05:00.000Z" in shown
    assert "      deploy call-2 [tool-approval]: still open" in shown
