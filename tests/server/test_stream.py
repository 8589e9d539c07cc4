"""The NDJSON stream: replay from startIndex (negative from the tail), live events and deltas, reconnects, leases."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, MutableMapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from eve_py.agent import Agent
from eve_py.server._hub import Subscriber
from eve_py.sessions import MemorySessionStore, SessionStore, SQLiteSessionStore
from tests.server.helpers import ALICE, PICK_BLUE, GatedModel, hitl_runtime, read_stream, serve

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def store_of(kind: str, tmp_path: Path) -> AsyncIterator[SessionStore]:
    store: SessionStore = SQLiteSessionStore(tmp_path / "s.db") if kind == "sqlite" else MemorySessionStore()
    try:
        yield store
    finally:
        await store.aclose()


async def completed_session(client: httpx.AsyncClient) -> tuple[str, list[dict[str, Any]]]:
    """A session taken through the picker flow to completion; its id and whole log."""
    created = (await client.post("/session", json={"message": "help me pick a template"})).json()
    session_id = created["sessionId"]
    parked = await read_stream(client, session_id, created["startIndex"])
    request_id = parked[-2]["data"]["requests"][0]["requestId"]
    answered = await client.post(
        f"/session/{session_id}", json={"inputResponses": [{"requestId": request_id, "value": PICK_BLUE}]}
    )
    await read_stream(client, session_id, answered.json()["startIndex"])
    return session_id, await read_stream(client, session_id, 0, follow=False)


async def test_replay_from_any_start_index_positive_or_negative(hitl_agent: Agent, store: SessionStore) -> None:
    async with serve(hitl_runtime(hitl_agent, store=store)) as served, served.client() as client:
        session_id, everything = await completed_session(client)
        count = len(everything)
        assert count == (await store.load(session_id)).event_count == 17
        assert everything[-1]["type"] == "session.waiting"
        ids = [event["meta"]["id"] for event in everything]

        for start in (0, 1, 5, count - 1):
            replay = await read_stream(client, session_id, start, follow=False)
            assert [e["meta"]["id"] for e in replay] == ids[start:]
        for back in (1, 3, count):
            replay = await read_stream(client, session_id, -back, follow=False)
            assert [e["meta"]["id"] for e in replay] == ids[-back:]
        assert await read_stream(client, session_id, -(count + 50), follow=False) == everything  # from the start
        assert await read_stream(client, session_id, count, follow=False) == []  # nothing after the tail
        assert await read_stream(client, session_id, count + 10, follow=False) == []

        params: dict[str, str | int] = {"startIndex": -3, "includeTailIndex": "1"}
        async with client.stream("GET", f"/session/{session_id}/stream", params=params) as response:
            assert response.headers["x-eve-start-index"] == str(count - 3)
            assert response.headers["x-eve-stream-tail-index"] == str(count - 1)

        for bad_start in ("two", "1.5", str(2**63), str(-(2**53))):
            bad = await client.get(f"/session/{session_id}/stream", params={"startIndex": bad_start})
            assert bad.status_code == 400, bad_start
            assert bad.json() == {
                "ok": False,
                "error": "Expected startIndex to be an integer.",
                "code": "bad_request",
            }


async def test_store_read_events_agree_on_negative_start(store: SessionStore) -> None:
    """Every store reads `[start, stop)` by index; a negative start means index 0, not Python slicing."""
    from eve_py.protocol import TurnStarted, new_event
    from eve_py.protocol.payloads import TurnStartedData
    from eve_py.sessions import SessionRecord

    events = [new_event(TurnStartedData(sequence=n, turn_id=f"t{n}")) for n in range(5)]
    await store.create(SessionRecord(id="s-1", created_at="t", updated_at="t"), events)

    async def numbers(*window: int) -> list[int]:
        return [e.data.sequence for e in await store.read_events("s-1", *window) if isinstance(e, TurnStarted)]

    assert await numbers(-2) == [0, 1, 2, 3, 4]
    assert await numbers(1, 3) == [1, 2]
    assert await numbers(3, 10) == [3, 4]


async def follow(lines: AsyncIterator[str], until: str = "session.waiting") -> list[dict[str, Any]]:
    """Events of an open stream's lines up to (and with) the first event of type `until`."""
    seen: list[dict[str, Any]] = []
    async for line in lines:
        seen.append(json.loads(line))
        if seen[-1]["type"] == until:
            break
    return seen


async def test_stream_is_live_and_follows_past_the_turn_boundary(hitl_agent: Agent) -> None:
    model = GatedModel()
    async with serve(hitl_runtime(hitl_agent, model=model)) as served, served.client() as client:
        created = (await client.post("/session", json={"message": "be slow"})).json()
        session_id = created["sessionId"]
        seen: list[str] = []
        async with client.stream("GET", f"/session/{session_id}/stream") as response:
            lines = response.aiter_lines()
            with anyio.fail_after(5):
                while "message.received" not in seen:
                    seen.append(json.loads(await anext(lines))["type"])
                await model.entered.wait()
            assert seen == ["session.started", "turn.started", "message.received"]  # the model still runs
            model.release.set()
            with anyio.fail_after(5):
                seen += [e["type"] for e in await follow(lines)]
                assert seen[-5:] == [
                    "step.started",
                    "message.completed",
                    "step.completed",
                    "turn.completed",
                    "session.waiting",
                ]
                # The stream goes on after the boundary: the next turn arrives on the same response.
                await client.post(f"/session/{session_id}", json={"message": "hello"})
                more = await follow(lines)
            assert [e["type"] for e in more][0] == "turn.started"
    assert served.app.state.eve.hub.subscriber_count() == 0


class CountedStore(MemorySessionStore):
    """A memory store that counts the record loads and log reads asked of it."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    async def load(self, session_id: str) -> Any:
        self.reads += 1
        return await super().load(session_id)

    async def read_events(self, session_id: str, start: int = 0, stop: int | None = None) -> Any:
        self.reads += 1
        return await super().read_events(session_id, start, stop)


async def test_a_stream_of_the_turn_running_here_reads_nothing_from_the_store(hitl_agent: Agent) -> None:
    model, store = GatedModel(), CountedStore()
    async with serve(hitl_runtime(hitl_agent, store=store, model=model)) as served, served.client() as client:
        created = (await client.post("/session", json={"message": "be slow"})).json()
        with anyio.fail_after(5):
            await model.entered.wait()  # the turn runs here, waiting on its model
        reads = store.reads
        session_id, start = created["sessionId"], created["startIndex"]
        async with client.stream("GET", f"/session/{session_id}/stream", params={"startIndex": start}) as response:
            lines = response.aiter_lines()
            with anyio.fail_after(5):
                streamed = [json.loads(await anext(lines))]
                assert streamed[0]["type"] == "turn.started"
                assert store.reads == reads  # the events came from the hub, the log's length from the runner
                model.release.set()
                streamed += await follow(lines)
        stored = await read_stream(client, session_id, start, follow=False)
        assert [e["meta"]["id"] for e in streamed] == [e["meta"]["id"] for e in stored]  # in order, none missing


async def test_a_reader_whose_client_left_stops_at_once(hitl_agent: Agent) -> None:
    model = GatedModel()
    async with serve(hitl_runtime(hitl_agent, model=model)) as served, served.client() as client:
        hub = served.app.state.eve.hub
        left = anyio.Event()
        unsubscribe = hub.unsubscribe

        def unsubscribed(subscriber: Subscriber) -> None:
            unsubscribe(subscriber)
            left.set()

        hub.unsubscribe = unsubscribed
        created = (await client.post("/session", json={"message": "be slow"})).json()
        session_id = created["sessionId"]
        async with client.stream("GET", f"/session/{session_id}/stream") as response:
            await anext(response.aiter_lines())
            assert hub.subscriber_count(session_id) == 1
        # The client closed the connection while the turn waits on its model: nothing more will
        # wake the reader for a while (its lease is 10 s), yet it stops now.
        with anyio.fail_after(5):
            await left.wait()
        assert hub.subscriber_count(session_id) == 0
        model.release.set()


async def test_a_quiet_stream_ends_after_its_lease_with_eves_control_record_when_asked(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent), stream_lease_s=0.2) as served, served.client() as client:
        session_id = (await client.post("/session")).json()["sessionId"]
        with anyio.fail_after(5):
            plain = await client.get(f"/session/{session_id}/stream")
            leased = await client.get(
                f"/session/{session_id}/stream", params={"startIndex": 1, "streamControlVersion": "1"}
            )
    assert [json.loads(line)["type"] for line in plain.text.splitlines()] == ["session.started"]
    assert [json.loads(line) for line in leased.text.splitlines()] == [{"$eve": "stream.lease-ended", "version": 1}]


async def test_message_deltas_are_live_stored_and_replayed_alike(hitl_agent: Agent) -> None:
    model = GatedModel()
    async with serve(hitl_runtime(hitl_agent, model=model)) as served, served.client() as client:
        created = (await client.post("/session", json={"message": "stream it"})).json()
        session_id = created["sessionId"]
        live: list[dict[str, Any]] = []
        async with client.stream("GET", f"/session/{session_id}/stream") as response:
            lines = response.aiter_lines()
            with anyio.fail_after(5):
                while not live or live[-1]["type"] != "message.appended":
                    live.append(json.loads(await anext(lines)))
            assert live[-1]["data"]["messageDelta"] == "Hel"  # arrived while the step is still running
            model.release.set()
            with anyio.fail_after(5):
                live += await follow(lines)
        stored = await read_stream(client, session_id, follow=False)

    assert [e["type"] for e in live] == [
        "session.started",
        "turn.started",
        "message.received",
        "step.started",
        "message.appended",
        "message.appended",
        "message.completed",
        "step.completed",
        "turn.completed",
        "session.waiting",
    ]
    assert [e["data"]["messageDelta"] for e in live if e["type"] == "message.appended"] == ["Hel", "lo"]
    assert live[4]["data"]["turnId"] == created["turnId"] and live[4]["data"]["stepIndex"] == 0
    assert stored == live, "every line streamed is a stored event, counted by startIndex"


async def test_a_client_that_disconnects_mid_stream_loses_nothing(hitl_agent: Agent) -> None:
    model = GatedModel()
    async with serve(hitl_runtime(hitl_agent, model=model)) as served, served.client() as client:
        created = (await client.post("/session", json={"message": "be slow"})).json()
        session_id = created["sessionId"]
        first: list[dict[str, Any]] = []
        async with client.stream("GET", f"/session/{session_id}/stream") as response:
            lines = response.aiter_lines()
            with anyio.fail_after(5):
                first += [json.loads(await anext(lines)), json.loads(await anext(lines))]
        # Disconnected mid-turn; the turn goes on without any reader.
        model.release.set()
        with anyio.fail_after(5):
            rest = await read_stream(client, session_id, len(first))
        whole = await read_stream(client, session_id, 0, follow=False)
    assert [e["meta"]["id"] for e in first + rest] == [e["meta"]["id"] for e in whole]
    assert whole[-1]["type"] == "session.waiting"


async def test_several_readers_of_one_session_see_the_same_events(hitl_agent: Agent) -> None:
    model = GatedModel()
    async with serve(hitl_runtime(hitl_agent, model=model)) as served, served.client() as client:
        created = (await client.post("/session", json={"message": "be slow"})).json()
        session_id = created["sessionId"]
        results: list[list[str]] = []
        following: list[int] = []
        opened = anyio.Event()

        async def reader() -> None:
            async with client.stream("GET", f"/session/{session_id}/stream") as response:
                lines = response.aiter_lines()
                got = [json.loads(await anext(lines))["meta"]["id"]]  # this reader is subscribed now
                following.append(1)
                if len(following) == 3:
                    assert served.app.state.eve.hub.subscriber_count(session_id) == 3
                    opened.set()
                got += [event["meta"]["id"] for event in await follow(lines)]
                results.append(got)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                for _ in range(3):
                    group.start_soon(reader)
                await opened.wait()
                model.release.set()
    assert len(results) == 3
    assert results[0] == results[1] == results[2]
    assert len(results[0]) == 8


async def test_a_stream_whose_client_left_before_its_first_byte_stops_following(hitl_agent: Agent) -> None:
    # Some ASGI servers raise from `send` once the client is gone; the response's lines then never start.
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session_id = (await client.post("/session", json={"message": "hello"})).json()["sessionId"]
        path = f"/eve/v1/session/{session_id}/stream"
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {ALICE}".encode())],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 80),
        }
        messages = iter([{"type": "http.request", "body": b"", "more_body": False}])

        async def receive() -> dict[str, Any]:
            return next(messages, {"type": "http.disconnect"})

        async def send(message: MutableMapping[str, Any]) -> None:
            raise OSError("the client is gone")

        with anyio.fail_after(5), pytest.raises(OSError, match="the client is gone"):
            await served.app(scope, receive, send)
        assert served.app.state.eve.hub.subscriber_count(session_id) == 0
