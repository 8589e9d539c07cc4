"""Requests that expire: a deadline on each request, `expired` when it passes, one INPUT_EXPIRED result.

Time moves forward by a shifted `time.time` (`tests.clock`): no test sleeps.
"""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from eve_py import (
    Agent,
    RequestExpiredError,
    Runtime,
    Session,
    SessionConflictError,
    ToolDefinitionError,
    define_agent,
    define_client_tool,
    define_tool,
)
from eve_py.authoring import AgentDefinition
from eve_py.errors import UsageError
from eve_py.protocol.events import ActionResult, InputRequested, InputResolved, TurnCompleted
from eve_py.protocol.messages import ToolMessage
from eve_py.protocol.requests import parse_deadline
from eve_py.sessions import MemorySessionStore, SessionStore, SQLiteSessionStore
from eve_py.sessions._forwarding import ForwardingStore
from eve_py.sessions._record import SessionRecord
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.clock import Clock

pytestmark = pytest.mark.anyio


def make_agent(ran: list[dict[str, Any]], *, default_s: float | None = None) -> tuple[Agent, MockModel]:
    """`refund` needs approval (60 s to answer); `pick` is a client tool (300 s); the model calls what it is told."""

    def refund(amount_cents: int) -> str:
        ran.append({"amount_cents": amount_cents})
        return f"refunded {amount_cents}"

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            said = request.last_user_message or ""
            calls = [MockToolCall("refund", {"amount_cents": 1500})] if "refund" in said else []
            calls += [MockToolCall("pick", {"prompt": "Which colour?"})] if "pick" in said else []
            calls += [MockToolCall("ask_question", {"prompt": "Name?"})] if "ask" in said else []
            return MockResponse(tool_calls=calls)
        return "after: " + " | ".join(str(result.output) for result in request.tool_results)

    tools = {
        "refund": define_tool(description="Refund.", execute=refund, needs_approval=True, expires_after=60),
        "pick": define_client_tool(
            description="Pick.",
            input_schema={"type": "object", "properties": {"prompt": {"type": "string"}}},
            expires_after=timedelta(minutes=5),
        ),
    }
    definition = AgentDefinition() if default_s is None else define_agent(input_expires_after=default_s)
    return Agent.from_definitions(tools, definition=definition), MockModel(respond)


async def parked(store: SessionStore, message: str, ran: list[dict[str, Any]]) -> tuple[Runtime, Session]:
    agent, model = make_agent(ran)
    runtime = Runtime(agent, model=model, store=store)
    session = await runtime.create_session()
    result = await session.send(message)
    assert result.status == "waiting"
    return runtime, session


async def test_each_request_carries_its_deadline_on_the_wire(store: SessionStore, clock: Clock) -> None:
    before = time.time()
    _, session = await parked(store, "refund and pick", [])

    [requested] = [e for e in await session.events() if isinstance(e, InputRequested)]
    deadlines = {ext.kind: ext.expires_at for ext in (requested.data.extensions or {}).values()}
    assert set(deadlines) == {"tool-approval", "client-tool"}
    assert deadlines["tool-approval"] is not None and deadlines["tool-approval"].endswith("Z")
    assert 59 <= parse_deadline(deadlines["tool-approval"]) - before <= 61
    assert deadlines["client-tool"] is not None
    assert 299 <= parse_deadline(deadlines["client-tool"]) - before <= 301


async def test_an_approval_nobody_answered_expires_when_the_session_is_next_opened(
    store: SessionStore, clock: Clock
) -> None:
    ran: list[dict[str, Any]] = []
    _, session = await parked(store, "refund it", ran)
    [request] = session.input_requests
    clock.set(61)

    agent, model = make_agent(ran)  # a new process: nobody ran at the deadline
    opened = await Runtime(agent, model=model, store=store).get_session(session.id)

    assert opened.status == "idle" and ran == []
    events = await opened.events()
    [resolved] = [e for e in events if isinstance(e, InputResolved)]
    assert [(r.request_id, r.outcome, r.response) for r in resolved.data.resolutions] == [
        (request.request_id, "expired", None)
    ]
    [rejected] = [e for e in events if isinstance(e, ActionResult)]
    assert rejected.data.error is not None and rejected.data.error.code == "INPUT_EXPIRED"
    [result] = [p for m in await opened.messages() if isinstance(m, ToolMessage) for p in m.content]
    assert result.is_error and isinstance(result.output, str)
    assert result.output.startswith("INPUT_EXPIRED:") and str(request.expires_at) in result.output
    assert (await opened.refresh()).record.turn is not None


async def test_an_answer_after_the_deadline_is_refused_before_any_write_and_expire_goes_on_without_it(
    store: SessionStore, clock: Clock
) -> None:
    ran: list[dict[str, Any]] = []
    _, session = await parked(store, "refund it", ran)
    [request] = session.input_requests
    clock.set(60.5)
    before = (await session.refresh()).record

    with pytest.raises(RequestExpiredError, match="expired") as caught:
        await session.respond([{"requestId": request.request_id, "optionId": "approve"}])

    assert caught.value.request_id == request.request_id and ran == []
    after = (await session.refresh()).record
    assert (after.version, after.event_count, after.status) == (before.version, before.event_count, "waiting")
    assert await session.expire() is not None
    assert session.status == "idle"
    resolutions = [r for e in await session.events() if isinstance(e, InputResolved) for r in e.data.resolutions]
    assert [r.outcome for r in resolutions] == ["expired"]
    with pytest.raises(RequestExpiredError):  # and later still: the history says it expired
        await session.respond([{"requestId": request.request_id, "optionId": "approve"}])


async def test_an_answer_in_time_is_taken_as_ever(store: SessionStore, clock: Clock) -> None:
    ran: list[dict[str, Any]] = []
    _, session = await parked(store, "refund it", ran)
    clock.set(59)

    result = await session.respond([{"requestId": session.input_requests[0].request_id, "optionId": "approve"}])

    assert result.status == "completed" and ran == [{"amount_cents": 1500}]
    assert result.message == "after: refunded 1500"


async def test_a_batch_waits_for_what_is_still_open_when_one_request_expires(store: SessionStore, clock: Clock) -> None:
    ran: list[dict[str, Any]] = []
    runtime, session = await parked(store, "refund and pick", ran)
    approval, pick = session.input_requests
    clock.set(61)  # the approval's deadline passed; the pick has four minutes left

    assert await runtime.expire_due() == 1
    await session.refresh()
    assert session.status == "waiting" and [r.request_id for r in session.input_requests] == [pick.request_id]

    result = await session.respond([{"requestId": pick.request_id, "value": "blue"}])

    assert result.status == "completed" and ran == []
    assert result.message is not None and "INPUT_EXPIRED" in result.message and "blue" in result.message


async def test_the_agents_default_bounds_every_request_and_a_message_expires_what_is_due(
    store: SessionStore, clock: Clock
) -> None:
    agent, model = make_agent([], default_s=30)
    runtime = Runtime(agent, model=model, store=store)
    session = await runtime.create_session()
    [question] = (await session.send("ask my name")).input_requests
    assert question.kind == "question" and question.expires_at is not None
    clock.set(31)
    runtime.sweeper.running = True  # as if a sweep ran elsewhere: the message meets the deadline first

    result = await session.send("never mind")

    resolutions = [r for e in result.events if isinstance(e, InputResolved) for r in e.data.resolutions]
    assert [(r.request_id, r.outcome) for r in resolutions] == [(question.request_id, "expired")]


@pytest.mark.parametrize("passed", ["while it runs", "before it started"])
async def test_the_sweep_expires_a_parked_session_on_its_own(store: SessionStore, clock: Clock, passed: str) -> None:
    ran: list[dict[str, Any]] = []
    agent, model = make_agent(ran)
    done = anyio.Event()

    def listen(committed: Any) -> None:
        if any(isinstance(e, TurnCompleted) for e in committed.events):
            done.set()

    runtime = Runtime(agent, model=model, store=store, on_event=listen)
    session = await runtime.create_session()
    await session.send("refund it")
    runtime.sweeper.interval_s = 0.05
    if passed == "before it started":
        clock.set(61)
    async with runtime.expiring():
        clock.set(61)
        with anyio.fail_after(10):
            await done.wait()
    await session.refresh()
    assert session.status == "idle" and ran == []
    resolutions = [r for e in await session.events() if isinstance(e, InputResolved) for r in e.data.resolutions]
    assert [r.outcome for r in resolutions] == ["expired"]


async def race_once(store: SessionStore, clock: Clock) -> str:
    """An answer (standing just before the deadline) and an expiry (just after) at once: who won."""
    runtime, session = await parked(store, "refund it", [])
    [request] = session.input_requests
    other = await runtime.get_session(session.id)
    outcomes: dict[str, str] = {}

    async def answer() -> None:
        try:
            await session.respond([{"requestId": request.request_id, "optionId": "approve"}])
            outcomes["answer"] = "won"
        except (SessionConflictError, RequestExpiredError):
            outcomes["answer"] = "lost"

    async def expire() -> None:
        clock.set_for_task(61)  # this task stands after the deadline; the answer's stands before it
        try:
            outcomes["expiry"] = "won" if await other.expire() is not None else "lost"
        except SessionConflictError:
            outcomes["expiry"] = "lost"

    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            group.start_soon(answer)
            group.start_soon(expire)
    assert sorted(outcomes.values()) == ["lost", "won"]
    events = await (await runtime.get_session(session.id)).events()
    resolutions = [r for e in events if isinstance(e, InputResolved) for r in e.data.resolutions]
    assert len(resolutions) == 1
    assert resolutions[0].outcome == ("approved" if outcomes["answer"] == "won" else "expired")
    return "answer" if outcomes["answer"] == "won" else "expiry"


async def test_an_answer_racing_the_deadline_one_of_them_wins(tmp_path: Path, clock: Clock) -> None:
    for attempt in range(5):
        store = SQLiteSessionStore(tmp_path / f"race{attempt}.db")
        try:
            assert await race_once(store, clock) in ("answer", "expiry")
        finally:
            await store.aclose()


async def test_the_store_finds_due_sessions_earliest_first(store: SessionStore, clock: Clock) -> None:
    ran: list[dict[str, Any]] = []
    _, late = await parked(store, "pick", ran)
    _, soon = await parked(store, "refund it", ran)
    _, unbounded = await parked(store, "ask me", ran)

    assert await store.due(time.time()) == []
    assert await store.due(time.time() + 61) == [soon.id]
    assert await store.due(time.time() + 301) == [soon.id, late.id]
    assert await store.due(time.time() + 301, limit=1) == [soon.id]
    assert unbounded.input_requests[0].expires_at is None


OBJECT: dict[str, Any] = {"type": "object"}


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda: define_tool(description="x", execute=lambda: 1, expires_after=5), "needs_approval"),
        (lambda: define_tool(description="x", execute=lambda: 1, needs_approval=True, expires_after=0), "positive"),
        (lambda: define_tool(description="x", execute=lambda: 1, needs_approval=True, expires_after=True), "positive"),
        (lambda: define_client_tool(description="x", input_schema=OBJECT, expires_after=cast(Any, "1h")), "positive"),
        (lambda: define_client_tool(description="x", input_schema=OBJECT, expires_after=-1), "positive"),
    ],
)
def test_a_bad_expires_after_is_refused_where_it_is_written(make: Any, problem: str) -> None:
    with pytest.raises(ToolDefinitionError, match=problem):
        make()


def test_a_bad_agent_default_is_refused() -> None:
    with pytest.raises(UsageError, match="input_expires_after"):
        define_agent(input_expires_after=float("inf"))


async def test_the_sweeper_reads_a_due_session_once_to_expire_it(clock: Clock) -> None:
    class Counting(ForwardingStore):
        def __init__(self) -> None:
            super().__init__(MemorySessionStore())
            self.loads: list[str] = []

        async def load(self, session_id: str) -> SessionRecord:
            self.loads.append(session_id)
            return await super().load(session_id)

    store = Counting()
    runtime, session = await parked(store, "refund it", [])
    clock.set(61)
    store.loads.clear()
    assert await runtime.expire_due() == 1
    assert store.loads.count(session.id) == 1
    await session.refresh()
    assert session.status != "waiting"
