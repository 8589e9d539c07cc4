"""A step longer than the lease keeps its lease through a heartbeat, and its turn finishes without a conflict."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Sequence

import anyio
import pytest

from eve_py import Agent, Runtime, SessionStateError, define_tool
from eve_py.protocol import Event
from eve_py.protocol.messages import Message
from eve_py.sessions import ForwardingStore, MemorySessionStore, SessionRecord, SessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio

LEASE_S = 0.3


class BeatCounter(ForwardingStore):
    """Delegates to a real store; `beaten` is set once `beats` writes without events or messages were made."""

    def __init__(self, inner: SessionStore, beats: int) -> None:
        super().__init__(inner)
        self.beats = beats
        self.beaten = anyio.Event()

    async def commit(
        self,
        record: SessionRecord,
        events: Sequence[Event],
        messages: Sequence[Message] = (),
        *,
        durable: bool = True,
    ) -> SessionRecord:
        stored = await self.inner.commit(record, events, messages, durable=durable)
        if not events and not messages and stored.status == "running":
            self.beats -= 1
            if self.beats <= 0:
                self.beaten.set()
        return stored


def slow_agent(entered: anyio.Event, release: anyio.Event) -> tuple[Agent, MockModel]:
    async def crunch(text: str) -> dict[str, str]:
        entered.set()
        await release.wait()
        return {"crunched": text}

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("crunch", {"text": "numbers"})])
        return f"done: {request.tool_results[-1].output}"

    agent = Agent.from_definitions({"crunch": define_tool(description="Crunch slowly.", execute=crunch)})
    return agent, MockModel(respond)


async def test_a_step_longer_than_the_lease_is_never_taken_over_and_finishes(store: SessionStore) -> None:
    entered, release = anyio.Event(), anyio.Event()
    agent, model = slow_agent(entered, release)
    counter = BeatCounter(store, beats=4)
    session = await Runtime(agent, model=model, store=counter, lease_s=LEASE_S).create_session()
    other = await Runtime(agent, model=model, store=store, lease_s=LEASE_S).get_session(session.id)
    results = []

    async def run() -> None:
        results.append(await session.send("crunch the numbers"))

    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            await entered.wait()
            first = await store.load(session.id)
            assert first.lease is not None
            await counter.beaten.wait()  # four beats, a third of the lease apart

            assert time.time() > first.lease.expires_at, "the lease the step started with has run out"
            with pytest.raises(SessionStateError, match="whose lease ends in"):
                await other.resume()
            release.set()

    [done] = results
    assert done.status == "completed" and done.message == "done: {'crunched': 'numbers'}"
    record = await store.load(session.id)
    assert record.status == "idle" and record.lease is None


def _beats_in_a_forked_child() -> None:
    """Run in a child forked after the parent ran a turn: a slow step must still get its beats."""

    async def slow_turn() -> None:
        entered, release = anyio.Event(), anyio.Event()
        agent, model = slow_agent(entered, release)
        counter = BeatCounter(MemorySessionStore(), beats=2)
        session = await Runtime(agent, model=model, store=counter, lease_s=LEASE_S).create_session()
        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(session.send, "crunch the numbers")
                await counter.beaten.wait()
                release.set()

    anyio.run(slow_turn)


def test_a_process_forked_after_a_turn_ran_still_renews_its_leases() -> None:
    async def quick_turn() -> None:
        release = anyio.Event()
        release.set()
        agent, model = slow_agent(anyio.Event(), release)
        session = await Runtime(agent, model=model, store=MemorySessionStore(), lease_s=LEASE_S).create_session()
        assert (await session.send("crunch the numbers")).status == "completed"

    anyio.run(quick_turn)  # the heartbeat thread now runs in this process

    child = multiprocessing.get_context("fork").Process(target=_beats_in_a_forked_child)
    child.start()
    child.join(timeout=30)
    assert child.exitcode == 0, "the forked child's slow step got no heartbeat"
