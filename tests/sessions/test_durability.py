"""Parked sessions survive restarts, races and crashes without losing an answer or duplicating a result."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from eve_py import (
    Agent,
    InputRequest,
    InputResponse,
    PairingError,
    RequestAlreadyAnsweredError,
    Runtime,
    SessionConflictError,
    SessionError,
    SessionStateError,
    check_pairing,
    define_tool,
    load_agent,
)
from eve_py.agent import load_mock_model
from eve_py.protocol import Event, MessageCompleted, TurnFailed
from eve_py.protocol.messages import AssistantMessage, Message, ToolCallPart, ToolMessage
from eve_py.sessions import ForwardingStore, SessionRecord, SessionStore, SQLiteSessionStore
from eve_py.sessions.postgres import PostgresSessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.conftest import HITL_APP, REPO

pytestmark = pytest.mark.anyio

PICK = {"pickedIds": ["tpl_green"]}


def runtime_on(store: SessionStore, lease_s: float = 120.0) -> Runtime:
    return Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store, lease_s=lease_s)


def results_for(messages: Sequence[Message], call_id: str) -> list[Any]:
    return [
        part
        for message in messages
        if isinstance(message, ToolMessage)
        for part in message.content
        if part.tool_call_id == call_id
    ]


PARK_SCRIPT = """
import anyio, json, sys
from eve_py import Runtime, load_agent
from eve_py.agent import load_mock_model
from eve_py.sessions import SQLiteSessionStore

async def main() -> None:
    app = sys.argv[1]
    store = SQLiteSessionStore(sys.argv[2])
    runtime = Runtime(load_agent(app), model=load_mock_model(app), store=store)
    session = await runtime.create_session()
    result = await session.send("help me pick a template")
    print(json.dumps({"sessionId": session.id, "status": result.status,
                      "requestId": result.input_requests[0].request_id}))
    await store.aclose()

anyio.run(main)
"""


async def test_a_session_parked_in_another_process_resumes_here(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    with anyio.fail_after(60):
        completed = await anyio.run_process([sys.executable, "-c", PARK_SCRIPT, str(HITL_APP), str(db)], cwd=REPO)
    parked = json.loads(completed.stdout)
    assert parked["status"] == "waiting"

    store = SQLiteSessionStore(db)
    session = await runtime_on(store).get_session(parked["sessionId"])
    assert session.status == "waiting"
    assert [r.request_id for r in session.input_requests] == [parked["requestId"]]

    done = await session.respond([InputResponse(request_id=parked["requestId"], value=PICK)])

    assert done.status == "completed"
    assert done.message == "Recorded your pick: tpl_green."
    assert len(results_for(await session.messages(), parked["requestId"])) == 1
    events = [e.type for e in await session.events()]
    assert events.count("turn.waiting") == 1 and events[-2:] == ["turn.completed", "session.waiting"]
    await store.aclose()


async def test_a_parked_session_resumes_from_a_new_runtime_on_the_same_store(reopen: Reopen) -> None:
    first_store = await reopen()
    session = await runtime_on(first_store).create_session()
    [request] = (await session.send("help me pick a template")).input_requests
    await first_store.aclose()

    store = await reopen()
    again = await runtime_on(store).get_session(session.id)
    done = await again.respond([InputResponse(request_id=request.request_id, value=PICK)])

    assert done.status == "completed"
    assert (await again.events())[0].type == "session.started"
    await store.aclose()


class BarrierStore(ForwardingStore):
    """Delegates to a real store; `load` (or `commit`, `at="commit"`) waits until `parties` callers got
    there (forces a race: each acts on what it read before any of them wrote)."""

    def __init__(self, inner: SessionStore, parties: int, *, at: str = "load") -> None:
        super().__init__(inner)
        self.parties = parties
        self.at = at
        self.arrived = 0
        self.all_arrived = anyio.Event()
        self.armed = False

    async def _arrive(self, where: str) -> None:
        if self.armed and where == self.at:
            self.arrived += 1
            if self.arrived >= self.parties:
                self.all_arrived.set()
                self.armed = False
            await self.all_arrived.wait()

    async def load(self, session_id: str) -> SessionRecord:
        record = await self.inner.load(session_id)
        await self._arrive("load")
        return record

    async def commit(
        self, record: SessionRecord, events: Sequence[Event], messages: Sequence[Message] = (), *, durable: bool = True
    ) -> SessionRecord:
        await self._arrive("commit")
        return await self.inner.commit(record, events, messages, durable=durable)


async def test_two_concurrent_answers_to_one_batch_one_wins_and_one_result_is_written(store: SessionStore) -> None:
    inner = store
    barrier = BarrierStore(inner, parties=2, at="commit")  # both answers checked before either is written
    runtime = runtime_on(barrier)
    session = await runtime.create_session()
    [request] = (await session.send("help me pick a template")).input_requests
    outcomes: list[object] = []

    handles = [await runtime.get_session(session.id) for _ in range(2)]

    async def answer(pick: str) -> None:
        handle = handles.pop()
        try:
            outcomes.append(
                await handle.respond([InputResponse(request_id=request.request_id, value={"pickedIds": [pick]})])
            )
        except SessionError as exc:
            outcomes.append(exc)

    barrier.armed = True
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(answer, "tpl_red")
            group.start_soon(answer, "tpl_blue")

    errors = [o for o in outcomes if isinstance(o, Exception)]
    assert len(outcomes) == 2 and len(errors) == 1
    # The loser's write fails the compare-and-set; read again, its request has its answer.
    assert isinstance(errors[0], RequestAlreadyAnsweredError) and isinstance(errors[0], SessionConflictError)
    record = await inner.load(session.id)
    assert record.status == "idle"
    conversation = await inner.read_messages(record.id)
    [result] = results_for(conversation, request.request_id)
    assert result.output["pickedIds"][0] in ("tpl_red", "tpl_blue")
    check_pairing(conversation)
    await inner.aclose()


Reopen = Callable[[], Awaitable[SessionStore]]
"""Opens a new store on the same database, as a restarted process would."""


@pytest.fixture(params=["sqlite", "postgres"])
def reopen(request: pytest.FixtureRequest, tmp_path: Path) -> Reopen:
    """A durable store that can be opened again after a "crash": a SQLite file or a PostgreSQL database."""
    if request.param == "sqlite":

        async def sqlite() -> SessionStore:
            return SQLiteSessionStore(tmp_path / "s.db")

        return sqlite
    url = request.getfixturevalue("postgres_url")

    async def postgres() -> SessionStore:
        return await PostgresSessionStore.open(url, max_size=2)

    return postgres


class Crash(BaseException):
    """Stands in for the process dying (not an Exception, so nothing in eve-py catches it)."""


class CrashingStore(ForwardingStore):
    """A real store that dies before the `crash_on`-th commit after arming (nothing is written)."""

    def __init__(self, inner: SessionStore, crash_on: int) -> None:
        super().__init__(inner)
        self.crash_on = crash_on
        self.commits = 0
        self.armed = False

    async def commit(
        self,
        record: SessionRecord,
        events: Sequence[Event],
        messages: Sequence[Message] = (),
        *,
        durable: bool = True,
    ) -> SessionRecord:
        if self.armed:
            self.commits += 1
            if self.commits == self.crash_on:
                raise Crash
        return await self.inner.commit(record, events, messages, durable=durable)


async def die_answering(reopen: Reopen, crash_on: int, *, lease_s: float = 120.0) -> tuple[str, InputRequest]:
    """Park the template question, then answer it in a worker that dies before its `crash_on`-th
    write after the answer (write 1 accepts the answer). Returns the session id and the request."""
    crashing = CrashingStore(await reopen(), crash_on)
    session = await runtime_on(crashing, lease_s=lease_s).create_session()
    [request] = (await session.send("help me pick a template")).input_requests
    crashing.armed = True
    with pytest.raises(Crash):
        await session.respond([InputResponse(request_id=request.request_id, value=PICK)])
    await crashing.aclose()
    return session.id, request


@pytest.mark.parametrize("crash_on", [2, 3])
async def test_a_crash_after_the_answer_is_stored_loses_nothing_and_duplicates_nothing(
    reopen: Reopen, crash_on: int
) -> None:
    """Commit 1 stores the answer; 2 the parked step's results with the `note` step; 3 the final text."""
    # The dying worker's lease is over at once, so a restarted worker may take the turn over.
    session_id, request = await die_answering(reopen, crash_on, lease_s=0)

    store = await reopen()
    restarted = await runtime_on(store).get_session(session_id)
    assert restarted.status == "running"
    with pytest.raises(RequestAlreadyAnsweredError, match=r"call resume\(\)"):
        await restarted.respond([InputResponse(request_id=request.request_id, value={"pickedIds": ["tpl_red"]})])

    done = await restarted.resume()

    assert done.status == "completed"
    assert done.message == "Recorded your pick: tpl_green.", "the stored answer is used, not lost"
    [result] = results_for(await restarted.messages(), request.request_id)
    assert result.output == PICK
    conversation = await restarted.messages()
    note_results = [p for m in conversation if isinstance(m, ToolMessage) for p in m.content if p.tool_name == "note"]
    assert len(note_results) == 1
    check_pairing(await restarted.messages())
    await store.aclose()


async def test_resume_on_a_waiting_or_idle_session_changes_nothing(store: SessionStore) -> None:
    runtime = runtime_on(store)
    session = await runtime.create_session()
    parked = await session.send("help me pick a template")
    count = len(await session.events())

    waiting = await session.resume()
    assert waiting.status == "waiting" and waiting.input_requests == parked.input_requests
    await session.respond([InputResponse(request_id=parked.input_requests[0].request_id, value=PICK)])
    idle = await session.resume()
    assert idle.status == "completed" and idle.message == "Recorded your pick: tpl_green."
    assert idle.events == [] and waiting.events == []
    assert len(await session.events()) > count
    await store.aclose()


async def test_a_conversation_that_breaks_pairing_is_never_sent(store: SessionStore) -> None:
    model = MockModel(lambda request: "unreachable")
    runtime = Runtime(load_agent(HITL_APP), model=model, store=store)
    session = await runtime.create_session()
    record = await store.load(session.id)
    dangling = AssistantMessage(content=[ToolCallPart(tool_call_id="call_1", tool_name="note", input={"text": "x"})])
    await store.commit(record, [], [dangling])

    with pytest.raises(PairingError) as caught:
        await session.send("hello")

    assert caught.value.call_ids == ["call_1"]
    assert model.requests == []
    events = [e.type for e in await session.events()]
    assert events[-3:] == ["step.failed", "turn.failed", "session.waiting"]
    [failed] = [e for e in await session.events() if isinstance(e, TurnFailed)]
    assert failed.data.code == "PAIRING" and "call_1" in failed.data.message
    await store.aclose()


async def test_a_crash_while_a_new_message_dismisses_a_batch_leaves_the_batch_parked(reopen: Reopen) -> None:
    crashing = CrashingStore(await reopen(), crash_on=1)
    session = await runtime_on(crashing).create_session()
    parked = await session.send("help me pick a template")
    crashing.armed = True

    with pytest.raises(Crash):
        await session.send("run the guarded echo")
    await crashing.aclose()

    store = await reopen()
    restarted = await runtime_on(store).get_session(session.id)
    assert restarted.status == "waiting"
    assert restarted.input_requests == parked.input_requests

    retried = await restarted.send("run the guarded echo")

    assert retried.status == "waiting" and retried.input_requests[0].kind == "tool-approval"
    [ignored] = results_for(await restarted.messages(), parked.input_requests[0].request_id)
    assert ignored.output == {"status": "ignored"}
    check_pairing(await restarted.messages())
    await store.aclose()


async def test_resume_does_not_take_over_a_turn_whose_worker_still_holds_its_lease(reopen: Reopen) -> None:
    session_id, request = await die_answering(reopen, crash_on=2)

    store = await reopen()
    other = await runtime_on(store).get_session(session_id)
    before = len(await other.events())

    with pytest.raises(SessionStateError, match="whose lease ends in"):
        await other.resume()
    assert len(await other.events()) == before

    done = await other.resume(force=True)
    assert done.status == "completed"
    assert len(results_for(await other.messages(), request.request_id)) == 1
    assert other.record.lease is None
    await store.aclose()


async def test_a_message_to_a_session_whose_worker_died_finishes_the_old_turn_first(reopen: Reopen) -> None:
    session_id, request = await die_answering(reopen, crash_on=2, lease_s=0)

    store = await reopen()
    restarted = await runtime_on(store).get_session(session_id)
    assert restarted.status == "running"

    done = await restarted.send("run the guarded echo")

    assert done.status == "waiting" and done.input_requests[0].kind == "tool-approval"
    [result] = results_for(await restarted.messages(), request.request_id)
    assert result.output == PICK, "the answer the dead worker accepted was used"
    assert "Recorded your pick: tpl_green." in [e.data.message for e in done.events if isinstance(e, MessageCompleted)]
    check_pairing(await restarted.messages())
    await store.aclose()


async def test_creating_a_session_with_a_taken_id_is_a_conflict_and_changes_nothing(store: SessionStore) -> None:
    runtime = runtime_on(store)
    await runtime.create_session("ses_taken")

    with pytest.raises(SessionConflictError, match="already exists"):
        await runtime.create_session("ses_taken")

    assert [e.type for e in await store.read_events("ses_taken")] == ["session.started"]
    await store.aclose()


async def test_a_store_opened_from_async_code_keeps_sessions_like_one_built_directly(tmp_path: Path) -> None:
    store = await SQLiteSessionStore.open(tmp_path / "s.db", synchronous="NORMAL")
    session = await runtime_on(store).create_session()
    await store.aclose()

    again = SQLiteSessionStore(tmp_path / "s.db")
    assert (await again.load(session.id)).status == "idle"
    await again.aclose()


def _charging_agent(charges: list[int], gate: anyio.Event | None = None) -> tuple[Any, Any]:
    async def charge(cents: int) -> dict[str, int]:
        charges.append(cents)
        if gate is not None:
            with anyio.fail_after(5):
                await gate.wait()
        return {"charged": cents}

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("charge", {"cents": 500})])
        return f"done: {request.tool_results[-1].output}"

    agent = Agent.from_definitions({"charge": define_tool(description="Charge.", execute=charge, needs_approval=True)})
    return agent, respond


async def test_an_approved_executor_runs_once_even_if_the_worker_dies_right_after_it(reopen: Reopen) -> None:
    charges: list[int] = []
    agent, respond = _charging_agent(charges)
    # Commit 1 accepts the approval, 2 stores the executor's result, 3 would append the step.
    crashing = CrashingStore(await reopen(), crash_on=3)
    session = await Runtime(agent, model=MockModel(respond), store=crashing).create_session()
    [request] = (await session.send("charge me")).input_requests
    crashing.armed = True

    with pytest.raises(Crash):
        await session.respond([InputResponse(request_id=request.request_id, option_id="approve")])
    await crashing.aclose()
    assert charges == [500]

    store = await reopen()
    restarted = await Runtime(agent, model=MockModel(respond), store=store).get_session(session.id)
    done = await restarted.resume(force=True)

    assert done.message == "done: {'charged': 500}"
    assert charges == [500], "the stored result was used; the approved charge did not run again"
    assert len(results_for(await restarted.messages(), request.request_id)) == 1
    await store.aclose()


async def test_two_workers_taking_over_a_dead_turn_at_once_run_it_once(reopen: Reopen) -> None:
    charges: list[int] = []
    agent, respond = _charging_agent(charges)
    crashing = CrashingStore(await reopen(), crash_on=2)  # dies after the approved charge ran, before storing it
    session = await Runtime(agent, model=MockModel(respond), store=crashing, lease_s=0).create_session()
    [request] = (await session.send("charge me")).input_requests
    crashing.armed = True
    with pytest.raises(Crash):
        await session.respond([InputResponse(request_id=request.request_id, option_id="approve")])
    await crashing.aclose()
    assert charges == [500]

    inner = await reopen()
    store = BarrierStore(inner, parties=2)
    runtime = Runtime(agent, model=MockModel(respond), store=store)
    handles = [await runtime.get_session(session.id) for _ in range(2)]
    outcomes: list[object] = []

    async def take_over(handle: Any) -> None:
        try:
            outcomes.append((await handle.resume()).status)
        except SessionError as exc:
            outcomes.append(type(exc).__name__)

    store.armed = True
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            for handle in handles:
                group.start_soon(take_over, handle)

    assert sorted(map(str, outcomes)) == ["SessionConflictError", "completed"]
    assert charges == [500, 500], "the result was never stored, so the winner ran it again; the loser ran nothing"
    await inner.aclose()


async def test_a_crash_while_a_message_dismisses_a_batch_still_starts_that_message_s_turn(reopen: Reopen) -> None:
    crashing = CrashingStore(await reopen(), crash_on=2)  # the dismissal is stored; settling it dies
    session = await runtime_on(crashing, lease_s=0).create_session()
    parked = await session.send("help me pick a template")
    crashing.armed = True
    with pytest.raises(Crash):
        await session.send("run the guarded echo")
    await crashing.aclose()

    store = await reopen()
    restarted = await runtime_on(store).get_session(session.id)
    done = await restarted.resume()

    assert done.status == "waiting" and done.input_requests[0].kind == "tool-approval"
    assert [m.content for m in (await restarted.messages()) if m.role == "user"] == [
        "help me pick a template",
        "run the guarded echo",
    ]
    [ignored] = results_for(await restarted.messages(), parked.input_requests[0].request_id)
    assert ignored.output == {"status": "ignored"}
    await store.aclose()


async def test_cancelling_a_turn_while_its_batch_settles_lets_it_be_finished_at_once() -> None:
    charges: list[int] = []
    gate = anyio.Event()
    agent, respond = _charging_agent(charges, gate)
    runtime = Runtime(agent, model=MockModel(respond))
    session = await runtime.create_session()
    [request] = (await session.send("charge me")).input_requests
    results: list[Any] = []

    async def approve() -> None:
        results.append(await session.respond([InputResponse(request_id=request.request_id, option_id="approve")]))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(approve)
            while not charges:
                await anyio.lowlevel.checkpoint()
            assert await session.cancel() is True

    assert results[0].error == "The turn was cancelled."
    record = await runtime.store.load(session.id)
    assert record.status == "running" and record.lease is None, "the batch is kept; nobody holds the turn"

    gate.set()
    done = await session.resume()
    assert done.status == "completed"
    assert len(results_for(await session.messages(), request.request_id)) == 1
