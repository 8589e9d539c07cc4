"""Concurrent clients, slow models, cancel, and a server restart between park and answer."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from eve_py.agent import Agent
from eve_py.harness._runtime import Runtime
from eve_py.protocol import Event
from eve_py.protocol.messages import Message, ToolMessage
from eve_py.sessions import SessionRecord, SQLiteSessionStore
from tests.server.helpers import ALICE, BOB, PICK_BLUE, GatedModel, hitl_runtime, read_stream, serve

pytestmark = pytest.mark.anyio


def final_text(events: list[dict[str, Any]]) -> str:
    """The last assistant text among `events`."""
    return str([e for e in events if e["type"] == "message.completed"][-1]["data"]["message"])


class CommitRendezvousStore(SQLiteSessionStore):
    """A SQLite store whose commits, once armed, wait until two have arrived: both racers hold the
    same version when they write, so exactly one wins the compare-and-set."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.armed = False
        self.arrived = 0
        self.both = anyio.Event()

    async def commit(
        self,
        record: SessionRecord,
        events: Sequence[Event],
        messages: Sequence[Message] = (),
        *,
        durable: bool = True,
    ) -> SessionRecord:
        if self.armed and any(event.type == "input.resolved" for event in events):
            self.arrived += 1
            if self.arrived == 2:
                self.both.set()
            with anyio.fail_after(5):
                await self.both.wait()
        return await super().commit(record, events, messages, durable=durable)


def tool_results(messages: Sequence[Message], call_id: str) -> list[Any]:
    return [
        part.output
        for message in messages
        if isinstance(message, ToolMessage)
        for part in message.content
        if part.tool_call_id == call_id
    ]


async def park(client: httpx.AsyncClient) -> tuple[str, str]:
    created = (await client.post("/session", json={"message": "help me pick a template"})).json()
    parked = await read_stream(client, created["sessionId"], created["startIndex"])
    return created["sessionId"], parked[-2]["data"]["requests"][0]["requestId"]


async def test_two_clients_answering_at_once_one_wins_one_409_one_tool_result(
    hitl_agent: Agent, tmp_path: Path
) -> None:
    store = CommitRendezvousStore(tmp_path / "race.db")
    try:
        async with serve(hitl_runtime(hitl_agent, store=store)) as served:
            async with served.client() as first, served.client() as second:
                session_id, request_id = await park(first)
                store.armed = True
                statuses: dict[str, httpx.Response] = {}

                async def answer(name: str, client: httpx.AsyncClient, pick: str) -> None:
                    body = {"inputResponses": [{"requestId": request_id, "value": {"pickedIds": [pick]}}]}
                    statuses[name] = await client.post(f"/session/{session_id}", json=body)

                with anyio.fail_after(10):
                    async with anyio.create_task_group() as group:
                        group.start_soon(answer, "first", first, "tpl_blue")
                        group.start_soon(answer, "second", second, "tpl_red")
                store.armed = False
                codes = sorted(response.status_code for response in statuses.values())
                assert codes == [202, 409]
                [winner] = [name for name, response in statuses.items() if response.status_code == 202]
                [loser] = [response for response in statuses.values() if response.status_code == 409]
                assert loser.json()["code"] in ("conflict", "request_already_answered")
                events = await read_stream(first, session_id, statuses[winner].json()["startIndex"])
                assert events[-1]["type"] == "session.waiting"
            record = await store.read_messages(session_id)
    finally:
        await store.aclose()
    expected = PICK_BLUE if winner == "first" else {"pickedIds": ["tpl_red"]}
    assert tool_results(record, request_id) == [expected]
    log = [event.type for event in await events_of(tmp_path / "race.db", session_id)]
    assert log.count("input.resolved") == 1


async def events_of(path: Path, session_id: str) -> list[Event]:
    store = SQLiteSessionStore(path)
    try:
        return await store.read_events(session_id)
    finally:
        await store.aclose()


async def test_many_racing_answers_across_sessions_never_duplicate_a_result(hitl_agent: Agent, tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "many.db")
    try:
        async with serve(hitl_runtime(hitl_agent, store=store)) as served, served.client() as client:
            parked = [await park(client) for _ in range(5)]
            outcomes: list[int] = []

            async def answer(session_id: str, request_id: str) -> None:
                body = {"inputResponses": [{"requestId": request_id, "value": PICK_BLUE}]}
                outcomes.append((await client.post(f"/session/{session_id}", json=body)).status_code)

            with anyio.fail_after(20):
                async with anyio.create_task_group() as group:
                    for session_id, request_id in parked:
                        for _ in range(3):
                            group.start_soon(answer, session_id, request_id)
                for session_id, _ in parked:
                    events = await read_stream(client, session_id, -1)
                    assert events[-1]["type"] == "session.waiting"
            records = [await store.read_messages(session_id) for session_id, _ in parked]
    finally:
        await store.aclose()
    assert sorted(outcomes) == [202] * 5 + [409] * 10
    for record, (_, request_id) in zip(records, parked, strict=True):
        assert tool_results(record, request_id) == [PICK_BLUE]


async def test_a_slow_model_does_not_block_other_sessions(hitl_agent: Agent) -> None:
    model = GatedModel()
    async with serve(hitl_runtime(hitl_agent, model=model)) as served, served.client() as client:
        slow = (await client.post("/session", json={"message": "be slow"})).json()
        with anyio.fail_after(5):
            await model.entered.wait()
            # While that model step waits, another session parks, is answered and completes.
            session_id, request_id = await park(client)
            body = {"inputResponses": [{"requestId": request_id, "value": PICK_BLUE}]}
            answered = (await client.post(f"/session/{session_id}", json=body)).json()
            done = await read_stream(client, session_id, answered["startIndex"])
        assert final_text(done) == "Recorded your pick: tpl_blue."
        assert (await client.get(f"/session/{slow['sessionId']}")).json()["status"] == "running"
        model.release.set()
        with anyio.fail_after(5):
            finished = await read_stream(client, slow["sessionId"], slow["startIndex"])
    assert final_text(finished) == "Finally done."


async def test_cancel_a_running_turn_returns_the_session_to_idle(hitl_agent: Agent) -> None:
    model = GatedModel()
    async with serve(hitl_runtime(hitl_agent, model=model)) as served, served.client() as client:
        created = (await client.post("/session", json={"message": "be slow"})).json()
        session_id = created["sessionId"]
        with anyio.fail_after(5):
            await model.entered.wait()
        wrong_turn = await client.post(f"/session/{session_id}/cancel", json={"turnId": "turn_other"})
        assert wrong_turn.status_code == 200
        assert wrong_turn.json() == {"ok": True, "status": "no_active_turn"}

        cancelled = await client.post(f"/session/{session_id}/cancel", json={"turnId": created["turnId"]})
        assert cancelled.status_code == 202
        assert cancelled.json() == {"ok": True, "sessionId": session_id, "status": "accepted"}
        with anyio.fail_after(5):
            events = await read_stream(client, session_id, created["startIndex"])
        assert [e["type"] for e in events][-2:] == ["turn.cancelled", "session.waiting"]
        info = (await client.get(f"/session/{session_id}")).json()
        assert info["status"] == "idle"
        assert info["turn"]["status"] == "failed"

        again = await client.post(f"/session/{session_id}/cancel")
        assert again.status_code == 200 and again.json() == {"ok": True, "status": "no_active_turn"}
        follow_up = await client.post(f"/session/{session_id}", json={"message": "hello again"})
        assert follow_up.status_code == 202
        tail = await read_stream(client, session_id, follow_up.json()["startIndex"])
        assert tail[-1]["type"] == "session.waiting"


async def test_cancel_of_a_parked_turn_withdraws_its_question_as_eve_does(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session_id, request_id = await park(client)
        bad = await client.post(f"/session/{session_id}/cancel", json={"turn": 1})
        assert bad.status_code == 400
        before = await served.runtime.store.load(session_id)
        cancelled = await client.post(f"/session/{session_id}/cancel", json={})
        assert cancelled.status_code == 202
        assert cancelled.json() == {"ok": True, "sessionId": session_id, "status": "accepted"}
        events = await read_stream(client, session_id, before.event_count)
        assert [e["type"] for e in events] == ["input.resolved", "turn.cancelled", "session.waiting"]
        [resolution] = events[0]["data"]["resolutions"]
        assert (resolution["requestId"], resolution["outcome"]) == (request_id, "cancelled")
        record = await served.runtime.store.load(session_id)
        assert record.status == "idle"
        conversation = await served.runtime.store.read_messages(session_id)
        assert tool_results(conversation, request_id) == ["The turn was cancelled before this call finished."]

        body = {"inputResponses": [{"requestId": request_id, "value": PICK_BLUE}]}
        late = await client.post(f"/session/{session_id}", json=body)
        assert (late.status_code, late.json()["code"]) == (409, "request_already_answered")
        again = await client.post(f"/session/{session_id}/cancel")
        assert again.json() == {"ok": True, "status": "no_active_turn"}
        follow_up = await client.post(f"/session/{session_id}", json={"message": "hello"})
        events = await read_stream(client, session_id, follow_up.json()["startIndex"])
    assert [e["type"] for e in events][-2:] == ["turn.completed", "session.waiting"]


async def test_server_restart_between_park_and_answer(hitl_agent: Agent, tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store = SQLiteSessionStore(path)
    try:
        async with serve(hitl_runtime(hitl_agent, store=store)) as served, served.client() as client:
            session_id, request_id = await park(client)
    finally:
        await store.aclose()

    # A new process in all but name: new store connection, new runtime, new app, new port.
    store = SQLiteSessionStore(path)
    try:
        async with serve(hitl_runtime(hitl_agent, store=store)) as served:
            async with served.client(BOB) as bob:
                assert (await bob.get(f"/session/{session_id}")).status_code == 404  # ownership survived
            async with served.client(ALICE) as alice:
                info = (await alice.get(f"/session/{session_id}")).json()
                assert info["status"] == "waiting"
                assert [r["requestId"] for r in info["inputRequests"]] == [request_id]
                body = {"inputResponses": [{"requestId": request_id, "value": PICK_BLUE}]}
                answered = await alice.post(f"/session/{session_id}", json=body)
                assert answered.status_code == 202
                events = await read_stream(alice, session_id, answered.json()["startIndex"])
            record = await store.read_messages(session_id)
    finally:
        await store.aclose()
    assert final_text(events) == "Recorded your pick: tpl_blue."
    assert tool_results(record, request_id) == [PICK_BLUE]


class _Crash(BaseException):
    """The worker process dying (nothing in eve-py catches a BaseException)."""


class _CrashOnSettle(SQLiteSessionStore):
    """Dies before writing the settled step: the answer is stored, the turn never finished."""

    async def commit(
        self,
        record: SessionRecord,
        events: Sequence[Event],
        messages: Sequence[Message] = (),
        *,
        durable: bool = True,
    ) -> SessionRecord:
        # The settled step is written with the next step (the turn's second): die before that write.
        if record.pending is None and record.status == "running" and record.turn and record.turn.steps == 2:
            raise _Crash
        return await super().commit(record, events, messages, durable=durable)


async def test_a_turn_whose_worker_died_is_finished_when_a_restarted_server_is_asked_about_it(
    hitl_agent: Agent, tmp_path: Path
) -> None:
    path = tmp_path / "sessions.db"
    store = SQLiteSessionStore(path)
    try:
        async with serve(hitl_runtime(hitl_agent, store=store)) as served, served.client() as client:
            session_id, request_id = await park(client)
    finally:
        await store.aclose()

    # A worker accepts the answer and dies before the turn goes on; its lease is already over.
    dying = _CrashOnSettle(path)
    runtime = Runtime(hitl_agent, model=hitl_runtime(hitl_agent).model, store=dying, lease_s=0)
    with pytest.raises(_Crash):
        await (await runtime.get_session(session_id)).respond([{"requestId": request_id, "value": PICK_BLUE}])
    await dying.aclose()
    check = SQLiteSessionStore(path)
    assert (await check.load(session_id)).status == "running"
    await check.aclose()

    store = SQLiteSessionStore(path)
    try:
        async with serve(hitl_runtime(hitl_agent, store=store)) as served, served.client() as alice:
            # A message now would race the recovery: it is refused, and recovery starts.
            refused = await alice.post(f"/session/{session_id}", json={"message": "hello again"})
            events = await read_stream(alice, session_id, -1)  # from the accepted answer on
            info = (await alice.get(f"/session/{session_id}")).json()
            later = await alice.post(f"/session/{session_id}", json={"message": "hello again"})
        record = await store.read_messages(session_id)
    finally:
        await store.aclose()
    assert (refused.status_code, refused.json()["code"]) == (409, "session_not_ready")
    assert later.status_code == 202
    assert info["status"] == "idle"
    assert final_text(events) == "Recorded your pick: tpl_blue."
    assert tool_results(record, request_id) == [PICK_BLUE]
