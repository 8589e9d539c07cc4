"""Cancelling a running turn, timeouts around it, and streamed deltas."""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import pytest

from eve_py import Agent, Runtime, check_pairing, define_tool
from eve_py.harness import Committed
from eve_py.models import ModelDelta, ModelRequest, ModelResponse, ModelToolCall
from eve_py.protocol import ActionInputAppended, Event, MessageAppended, MessageCompleted
from eve_py.protocol.messages import Message
from eve_py.protocol.turns import TurnResult
from eve_py.sessions import MemorySessionStore, SessionRecord
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio


class BlockingModel:
    """Answers the first request only after `release` is set; tells `started` when it waits."""

    name = "blocking"

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.release = anyio.Event()

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.started.set()
        await self.release.wait()
        return ModelResponse(text="late")


async def test_cancel_stops_a_running_turn_and_the_session_can_send_again() -> None:
    model = BlockingModel()
    runtime = Runtime(Agent.from_definitions({}), model=model)
    session = await runtime.create_session()
    results = []

    async def run() -> None:
        results.append(await session.send("slow please"))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            await model.started.wait()
            assert await session.cancel() is True

    [result] = results
    assert (result.status, result.error) == ("failed", "The turn was cancelled.")
    events = [e.type for e in await session.events()]
    assert events[-2:] == ["turn.cancelled", "session.waiting"]
    assert session.status == "idle"
    assert await session.cancel() is False, "nothing runs any more"

    model.release.set()
    assert (await session.send("again")).message == "late"
    check_pairing(await session.messages())


async def test_a_timeout_around_send_leaves_the_session_usable() -> None:
    model = BlockingModel()
    session = await Runtime(Agent.from_definitions({}), model=model).create_session()

    with anyio.move_on_after(0.05):
        await session.send("slow")

    await session.refresh()
    assert session.status == "idle"
    model.release.set()
    assert (await session.send("again")).status == "completed"


class StreamingModel:
    name = "streaming"

    async def request(self, request: ModelRequest) -> ModelResponse:
        if request.messages[-1].role == "tool":
            for piece in ("Do", "ne"):
                if request.on_delta is not None:
                    await request.on_delta(ModelDelta(kind="text", text=piece))
            return ModelResponse(text="Done")
        if request.on_delta is not None:
            await request.on_delta(ModelDelta(kind="tool-call", call_id="c1", tool_name="note", text='{"text":'))
            await request.on_delta(ModelDelta(kind="tool-call", call_id="c1", text=' "x"}'))
        return ModelResponse(tool_calls=[ModelToolCall(id="c1", name="note", input={"text": "x"})])


async def test_streamed_deltas_are_stored_in_order_and_reach_listeners_as_they_are_committed() -> None:
    seen: list[Event] = []

    def listen(committed: Committed) -> None:
        seen.extend(committed.events)

    def note(text: str) -> str:
        return text

    runtime = Runtime(
        Agent.from_definitions({"note": define_tool(description="Note.", execute=note)}),
        model=StreamingModel(),
        on_event=listen,
    )
    session = await runtime.create_session()

    done = await session.send("go")

    stored = await session.events()
    assert [e.meta.id for e in stored] == [e.meta.id for e in seen], "listeners see exactly the stored log"
    inputs = [e for e in stored if isinstance(e, ActionInputAppended)]
    texts = [e for e in stored if isinstance(e, MessageAppended)]
    assert "".join(e.data.input_text_delta for e in inputs) == '{"text": "x"}'
    assert {(e.data.call_id, e.data.tool_name, e.data.step_index) for e in inputs} == {("c1", "note", 0)}
    assert "".join(e.data.message_delta for e in texts) == "Done"
    assert {e.data.step_index for e in texts} == {1}
    types = [e.type for e in stored]
    # Each step's deltas come after its `step.started` and before its `step.completed`.
    for step_events in (inputs, texts):
        first, last = stored.index(step_events[0]), stored.index(step_events[-1])
        assert types[first - 1] == "step.started" or types[first - 1].endswith(".appended")
        assert "step.completed" in types[last + 1 :]
    completed = [e for e in stored if isinstance(e, MessageCompleted)]
    assert [e.data.message for e in completed] == ["Done"]
    assert done.message == "Done"


async def test_a_mock_model_emits_no_deltas() -> None:
    seen: list[str] = []
    runtime = Runtime(
        Agent.from_definitions({}),
        model=MockModel(lambda r: "hi"),
        on_event=lambda c: seen.extend(e.type for e in c.events),
    )
    session = await runtime.create_session()
    await session.send("x")
    assert "message.appended" not in seen and "action.input.appended" not in seen


class GarbledModel:
    name = "garbled"

    async def request(self, request: ModelRequest) -> ModelResponse:
        if request.messages[-1].role == "tool":
            return ModelResponse(text=str(request.messages[-1].content[0].output))
        return ModelResponse(
            tool_calls=[ModelToolCall(id="c1", name="note", input={}, input_error="Expecting value: line 1 column 9")]
        )


async def test_arguments_that_are_not_json_get_an_error_result_so_the_model_can_correct_itself() -> None:
    ran: list[str] = []

    def note(text: str) -> str:
        ran.append(text)
        return text

    runtime = Runtime(
        Agent.from_definitions({"note": define_tool(description="Note.", execute=note)}), model=GarbledModel()
    )
    session = await runtime.create_session()

    done = await session.send("go")

    assert ran == []
    assert done.message == (
        "The arguments for tool 'note' are not a valid JSON object (Expecting value: line 1 column 9). "
        "Call it again with valid JSON arguments."
    )
    check_pairing(await session.messages())


class ParkPausingStore(MemorySessionStore):
    """Holds the turn that parks right after its parking write (`parked`) until `go_on` is set:
    the moment a server's client sees `turn.waiting` while the turn's runner is still finishing."""

    def __init__(self) -> None:
        super().__init__()
        self.parked = anyio.Event()
        self.go_on = anyio.Event()

    async def commit(
        self, record: SessionRecord, events: Sequence[Event], messages: Sequence[Message] = (), *, durable: bool = True
    ) -> SessionRecord:
        stored = await super().commit(record, events, messages, durable=durable)
        if any(e.type == "turn.waiting" for e in events) and not self.parked.is_set():
            self.parked.set()
            await self.go_on.wait()
        return stored


async def test_cancel_right_after_a_park_cancels_the_parked_turn_even_while_its_runner_finishes() -> None:
    def ask(request: MockModelRequest) -> str | MockResponse:
        if request.tool_results_since_last_user_message:
            return "done"
        return MockResponse(tool_calls=[MockToolCall("send", {"to": "all"})])

    def send(to: str) -> str:
        return f"sent to {to}"

    agent = Agent.from_definitions({"send": define_tool(description="Send.", execute=send, needs_approval=True)})
    store = ParkPausingStore()
    runtime = Runtime(agent, model=MockModel(ask), store=store)
    session = await runtime.create_session()
    results: list[TurnResult] = []

    async def run() -> None:
        results.append(await session.send("pick one"))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            await store.parked.wait()  # parked and stored; the runner has not returned yet
            other = await runtime.get_session(session.id)
            assert await other.cancel() is True
            store.go_on.set()

    events = [e.type for e in await session.events()]
    assert events[-3:] == ["input.resolved", "turn.cancelled", "session.waiting"]  # the question is withdrawn
    await session.refresh()
    assert session.status == "idle" and session.input_requests == []
    assert results[0].status == "waiting"  # what the send saw: it parked before the cancel
    check_pairing(await session.messages())
