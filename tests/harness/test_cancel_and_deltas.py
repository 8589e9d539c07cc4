"""Cancelling a running turn, timeouts around it, and streamed deltas."""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import pytest

from eve_py import Agent, Runtime, check_pairing, define_tool
from eve_py.events import Event
from eve_py.models import ModelDelta, ModelRequest, ModelResponse, ModelToolCall
from eve_py.testing import MockModel

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
    check_pairing(session.messages)


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


async def test_streamed_deltas_reach_listeners_but_not_the_stored_log() -> None:
    seen: list[Event] = []

    def listen(events: Sequence[Event]) -> None:
        seen.extend(events)

    def note(text: str) -> str:
        return text

    runtime = Runtime(
        Agent.from_definitions({"note": define_tool(description="Note.", execute=note)}),
        model=StreamingModel(),
        on_event=listen,
    )
    session = await runtime.create_session()

    done = await session.send("go")

    deltas = [e.data for e in seen if e.type == "message.delta"]
    assert [(d["kind"], d["text"], d.get("callId")) for d in deltas] == [
        ("tool-call", '{"text":', "c1"),
        ("tool-call", ' "x"}', "c1"),
        ("text", "Do", None),
        ("text", "ne", None),
    ]
    assert deltas[0]["toolName"] == "note" and deltas[2]["stepIndex"] == 1
    assert [d["deltaIndex"] for d in deltas] == [0, 1, 0, 1], "numbered from 0 in each step"
    assert not any(e.type == "message.delta" for e in await session.events())
    assert done.message == "Done"


async def test_a_mock_model_emits_no_deltas() -> None:
    seen: list[str] = []
    runtime = Runtime(
        Agent.from_definitions({}), model=MockModel(lambda r: "hi"), on_event=lambda es: seen.extend(e.type for e in es)
    )
    session = await runtime.create_session()
    await session.send("x")
    assert "message.delta" not in seen


class GarbledModel:
    name = "garbled"

    async def request(self, request: ModelRequest) -> ModelResponse:
        if request.messages[-1].role == "tool":
            return ModelResponse(text=str(request.messages[-1].content[0].output))  # type: ignore[union-attr]
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
    check_pairing(session.messages)
