"""An answer's `202` goes out before the turn it resumes takes its next step."""

from __future__ import annotations

import anyio
import pytest

from eve_py.agent import Agent
from eve_py.models._base import ModelRequest, ModelResponse
from eve_py.protocol import InputResponse
from eve_py.server._hub import Hub
from eve_py.server._operations import Answer
from eve_py.server._turns import TurnRunner
from tests.server.helpers import PICK_BLUE, GatedModel, hitl_runtime

pytestmark = pytest.mark.anyio


class WatchedModel(GatedModel):
    """The fixture's model; each step notes whether the request that resumed the turn had its answer yet."""

    def __init__(self) -> None:
        super().__init__()
        self.answered = False
        self.steps_before_answer = 0

    async def request(self, request: ModelRequest) -> ModelResponse:
        if not self.answered:
            self.steps_before_answer += 1
        return await super().request(request)


async def test_the_answer_is_acknowledged_before_the_resumed_turn_calls_the_model(hitl_agent: Agent) -> None:
    model = WatchedModel()
    runtime = hitl_runtime(hitl_agent, model=model)
    runner = TurnRunner(runtime, Hub())
    session = await runtime.create_session()
    parked = await session.send("help me pick a template")
    request_id = parked.input_requests[0].request_id
    steps = model.steps_before_answer
    with anyio.fail_after(10):
        async with runner.running(grace_s=5):
            answer = Answer([InputResponse(request_id=request_id, value=PICK_BLUE)], None, None, "local")
            started = await runner.start(session, answer)
            # What the route answers with: the accepted answer's own commit, nothing of the turn after it.
            model.answered = True
            assert [event.type for event in started.events] == ["input.resolved"]
            assert model.steps_before_answer == steps
        # Leaving `running` lets the turn finish first.
    assert (await runtime.get_session(session.id)).status == "idle"
    assert model.steps_before_answer == steps
