"""The fixture's two HITL regression evals pass on the mock model, and catch the bugs they guard.

The bugs are simulated by backends that alter what the driver sees (a second tool result for a
parked call, server code run for a question, a model that never asks), which is exactly what
the evals would see if the runtime or the model regressed that way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from eve_py.agent import Agent
from eve_py.evals import EvalBackend, EvalResult, InProcessBackend, discover_evals, run_evals
from eve_py.evals._backend import InProcessSession
from eve_py.models._base import Model
from eve_py.protocol import ActionResult, AnyEvent, InputResolved, new_event
from eve_py.protocol.messages import Message, ToolMessage
from eve_py.protocol.payloads import ActionResultData, ToolResultAction
from eve_py.protocol.requests import InputResponse
from eve_py.protocol.turns import TurnResult
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.conftest import HITL_APP

pytestmark = pytest.mark.anyio


class Tampered:
    """An eval session that shows the driver a doctored conversation or doctored events."""

    def __init__(self, inner: InProcessSession, *, duplicate_results: bool, fake_execution: bool) -> None:
        self._inner = inner
        self._duplicate_results = duplicate_results
        self._fake_execution = fake_execution

    @property
    def id(self) -> str:
        return self._inner.id

    async def send(self, message: str) -> TurnResult:
        return await self._inner.send(message)

    async def respond(self, responses: Sequence[InputResponse]) -> TurnResult:
        return await self._inner.respond(responses)

    async def events(self, start: int) -> list[AnyEvent]:
        events = await self._inner.events(start)
        if not self._fake_execution:
            return events
        doctored: list[AnyEvent] = []
        for event in events:
            doctored.append(event)
            if isinstance(event, InputResolved):  # pretend server code ran for each answered question
                for resolution in event.data.resolutions:
                    result = ToolResultAction(call_id=resolution.request_id, tool_name="ask_question", output={})
                    coords = {"sequence": event.data.sequence, "turn_id": event.data.turn_id}
                    data = ActionResultData(
                        **coords, step_index=event.data.step_index, result=result, status="completed"
                    )
                    doctored.append(new_event(data))
        return doctored

    async def conversation(self) -> list[Message]:
        messages = await self._inner.conversation()
        if not self._duplicate_results:
            return messages
        return [
            ToolMessage(content=[*message.content, *(p for p in message.content if p.tool_name == "ask_question")])
            if isinstance(message, ToolMessage)
            else message
            for message in messages
        ]


class TamperedBackend:
    def __init__(self, agent: Agent, model: Model, **tamper: bool) -> None:
        self._inner = InProcessBackend(agent, model)
        self._tamper = tamper

    @property
    def label(self) -> str:
        return "tampered"

    async def create_session(self) -> Tampered:
        return Tampered(await self._inner.create_session(), **self._tamper)


async def _run(make_backend: Callable[[], EvalBackend]) -> dict[str, EvalResult]:
    results = await run_evals(discover_evals(HITL_APP).cases, make_backend)
    return {result.id: result for result in results}


async def test_both_regression_evals_pass_on_the_mock_model(hitl_agent: Agent, hitl_model: Model) -> None:
    results = await _run(lambda: InProcessBackend(hitl_agent, hitl_model))

    assert {eval_id: result.status for eval_id, result in results.items()} == {
        "hitl/approval_vs_client_resolved": "passed",
        "hitl/client_resolved_question": "passed",
    }
    approval = results["hitl/approval_vs_client_resolved"]
    assert len(approval.sessions) == 1  # both paths on one session
    echoes = [e for e in approval.events if isinstance(e, ActionResult) and e.data.result.tool_name == "guarded_echo"]
    assert len(echoes) == 1


async def test_a_second_result_for_the_parked_question_fails_both_evals(hitl_agent: Agent, hitl_model: Model) -> None:
    results = await _run(lambda: TamperedBackend(hitl_agent, hitl_model, duplicate_results=True, fake_execution=False))

    for result in results.values():
        assert result.status == "failed"
        assert result.failure is not None
        assert result.failure.label.startswith("single_result('mock-call-")
        assert "expected exactly one result per call in the conversation; found ask_question" in result.failure.reason


async def test_server_code_running_for_the_question_fails_both_evals(hitl_agent: Agent, hitl_model: Model) -> None:
    results = await _run(lambda: TamperedBackend(hitl_agent, hitl_model, duplicate_results=False, fake_execution=True))

    question = results["hitl/client_resolved_question"].failure
    assert question is not None
    assert question.reason == "the answer is the result: nothing executed"
    approval = results["hitl/approval_vs_client_resolved"].failure
    assert approval is not None
    assert approval.reason == "no server code ran for the question"


async def test_a_model_that_picks_for_the_person_fails_at_the_expected_question(hitl_agent: Agent) -> None:
    def eager(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results_since_last_user_message:
            return MockResponse(tool_calls=[MockToolCall("note", {"text": "picked tpl_blue"})])
        return "I picked tpl_blue for you."

    results = await _run(lambda: InProcessBackend(hitl_agent, MockModel(eager)))

    question = results["hitl/client_resolved_question"].failure
    assert question is not None
    assert question.step == 2 and question.label.startswith("expect_input_requests(tool_name='ask_question'")
    assert "expected the last turn to wait for input, but it is completed" in question.reason
