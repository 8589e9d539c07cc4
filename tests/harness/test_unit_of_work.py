"""The unit of work's guarantees a caller sees: checked transitions, one acknowledgement, added listeners."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from eve_py import Agent, Runtime, define_client_tool
from eve_py.errors import SessionEndedError, SessionStateError
from eve_py.harness import Committed
from eve_py.protocol import InputResolved, TurnCompleted, TurnStarted
from eve_py.protocol.pending import PendingStep
from eve_py.protocol.turns import TurnInput, TurnState
from eve_py.sessions import MemorySessionStore, SessionRecord
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio

PICK = define_client_tool(description="Ask the person to pick.", input_schema={"type": "object"})


def _model(request: MockModelRequest) -> MockResponse:
    if not request.tool_results:
        return MockResponse(tool_calls=[MockToolCall(name="pick", input={})])
    return MockResponse(text="Thanks.")


def _runtime() -> Runtime:
    return Runtime(Agent.from_definitions({"pick": PICK}), model=MockModel(_model), store=MemorySessionStore())


def _idle() -> SessionRecord:
    return SessionRecord(id="ses_t", created_at="2026-12-08T00:00:00.000Z", updated_at="2026-12-08T00:00:00.000Z")


def test_each_transition_refuses_a_state_it_does_not_start_from() -> None:
    idle = _idle()
    sent = TurnInput(parts=["hi"], delivery_id="dlv_t")
    running = idle.start_turn(TurnState.begin("turn_t", 0, sent))
    pending = PendingStep.trusted(turn_id="turn_t", step_index=0, assistant=None, results={}, requests=[])
    refused: list[Callable[[], object]] = [
        lambda: idle.park(pending),  # no turn runs
        lambda: idle.answer(pending, settled=True),
        lambda: idle.complete(),
        lambda: idle.fail("no"),
        lambda: idle.cancel(),
        lambda: running.start_turn(TurnState.begin("turn_u", 1, sent)),  # one turn at a time
        lambda: running.clear(),
        lambda: running.end(),
        lambda: running.settle([], answered=False),  # no batch is settling
        lambda: running.answer(pending, settled=True),  # not waiting
    ]
    for transition in refused:
        with pytest.raises(SessionStateError, match="cannot"):
            transition()
    ended = idle.end()
    with pytest.raises(SessionEndedError):
        ended.start_turn(TurnState.begin("turn_v", 0, sent))
    assert running.complete().status == "idle" and idle.clear().status == "idle"


async def test_an_answer_is_acknowledged_once_before_the_turn_goes_on_and_added_listeners_hear_every_write() -> None:
    runtime = _runtime()
    heard: list[Committed] = []
    runtime.add_listener(on_event=heard.append)
    session = await runtime.create_session()
    acknowledged: list[Committed] = []

    async def acknowledge(committed: Committed) -> None:
        acknowledged.append(committed)
        assert not any(isinstance(e, TurnCompleted) for c in heard for e in c.events), "the turn has not gone on"

    with anyio.fail_after(10):
        parked = await session.send("help me pick", acknowledge=acknowledge)
        [started] = acknowledged
        assert isinstance(started.events[0], TurnStarted) and started.first_index == 1
        [request] = parked.input_requests
        done = await session.respond(
            [{"requestId": request.request_id, "value": {"ok": True}}], acknowledge=acknowledge
        )
    assert done.status == "completed" and len(acknowledged) == 2
    assert isinstance(acknowledged[1].events[0], InputResolved)
    assert [c.first_index for c in heard] == sorted(c.first_index for c in heard)  # every write, in order
    assert sum(len(c.events) for c in heard) == len(await session.events())


async def test_a_refused_answer_is_not_acknowledged_and_writes_nothing() -> None:
    runtime = _runtime()
    session = await runtime.create_session()
    [request] = (await session.send("help me pick")).input_requests
    before = (await session.refresh()).record
    acknowledged: list[Committed] = []

    async def acknowledge(committed: Committed) -> None:
        acknowledged.append(committed)

    with pytest.raises(Exception, match="no-such-request"):
        await session.respond([{"requestId": "no-such-request", "value": {}}], acknowledge=acknowledge)
    after = (await session.refresh()).record
    assert acknowledged == [] and (after.version, after.event_count) == (before.version, before.event_count)
    assert request.request_id in {r.request_id for r in session.input_requests}
