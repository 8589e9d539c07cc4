"""Requests that expire, over eve's HTTP wire: `expiresAt` beside each request, the server's own sweep, 409 late.

Time moves forward by a shifted `time.time` (`tests.clock`): no test sleeps.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from eve_py import Agent, Runtime, define_tool
from eve_py.protocol.requests import parse_deadline
from eve_py.sessions import SessionStore, SQLiteSessionStore
from eve_py.sessions.postgres import PostgresSessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.clock import Clock
from tests.server.helpers import read_stream, serve

pytestmark = pytest.mark.anyio


def runtime(store: SessionStore) -> Runtime:
    """`wire` needs approval within 60 s; the model wires money when asked, then reports what it got."""

    def wire(amount_cents: int) -> str:
        return f"wired {amount_cents}"

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("wire", {"amount_cents": 900})])
        return f"got: {request.tool_results[-1].output}"

    tool = define_tool(description="Wire money.", execute=wire, needs_approval=True, expires_after=60)
    return Runtime(Agent.from_definitions({"wire": tool}), model=MockModel(respond), store=store)


async def park(client: httpx.AsyncClient) -> tuple[str, dict[str, Any], str, int]:
    """A new session parked on its approval: its id, the request, its `expiresAt`, the stream's next index."""
    created = await client.post("/session", json={"message": "wire it"})
    session_id = created.json()["sessionId"]
    events = await read_stream(client, session_id, created.json()["startIndex"])
    [requested] = [e for e in events if e["type"] == "input.requested"]
    [request] = requested["data"]["requests"]
    extension = requested["data"]["extensions"][request["requestId"]]
    return session_id, request, extension["expiresAt"], created.json()["startIndex"] + len(events)


def outcome_of(events: list[dict[str, Any]]) -> tuple[list[str], str]:
    """The resolutions' outcomes and the model's reply in a stretch of the stream."""
    outcomes = [r["outcome"] for e in events if e["type"] == "input.resolved" for r in e["data"]["resolutions"]]
    [reply] = [e["data"]["message"] for e in events if e["type"] == "message.completed"]
    return outcomes, reply


async def test_the_server_expires_a_request_on_its_own_and_a_late_answer_is_a_409(tmp_path: Path, clock: Clock) -> None:
    store = SQLiteSessionStore(tmp_path / "s.db")
    try:
        async with serve(runtime(store)) as served, served.client() as client:
            session_id, request, expires_at, after = await park(client)
            assert "expiresAt" not in request, "eve's shape stays eve's"
            clock.set(parse_deadline(expires_at) - time.time() + 0.1)

            events = await read_stream(client, session_id, after)  # the sweep, with nobody asking

            late = await client.post(
                f"/session/{session_id}",
                json={"inputResponses": [{"requestId": request["requestId"], "optionId": "approve"}]},
            )
    finally:
        await store.aclose()
    outcomes, reply = outcome_of(events)
    assert outcomes == ["expired"]
    assert reply.startswith("got: INPUT_EXPIRED:") and expires_at in reply
    [rejected] = [e for e in events if e["type"] == "action.result"]
    assert rejected["data"]["error"]["code"] == "INPUT_EXPIRED"
    assert late.status_code == 409 and late.json()["code"] == "request_expired"


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_deadline_that_passed_while_no_server_ran_is_met_when_one_starts(
    kind: str, tmp_path: Path, clock: Clock, request: pytest.FixtureRequest
) -> None:
    async def open_store() -> SessionStore:
        if kind == "sqlite":
            return SQLiteSessionStore(tmp_path / "s.db")
        return await PostgresSessionStore.open(request.getfixturevalue("postgres_url"), max_size=2)

    store = await open_store()
    try:
        async with serve(runtime(store)) as served, served.client() as client:
            session_id, wire_request, _, after = await park(client)
    finally:
        await store.aclose()
    clock.set(120)  # nobody runs while the deadline passes

    store = await open_store()
    try:
        async with serve(runtime(store)) as served, served.client() as client:
            events = await read_stream(client, session_id, after)
            late = await client.post(
                f"/session/{session_id}",
                json={"inputResponses": [{"requestId": wire_request["requestId"], "optionId": "approve"}]},
            )
    finally:
        await store.aclose()
    assert outcome_of(events)[0] == ["expired"]
    assert late.status_code == 409 and late.json()["code"] == "request_expired"


async def test_an_answer_in_time_is_accepted(tmp_path: Path, clock: Clock) -> None:
    store = SQLiteSessionStore(tmp_path / "s.db")
    try:
        async with serve(runtime(store)) as served, served.client() as client:
            session_id, request, _, _ = await park(client)
            clock.set(50)
            accepted = await client.post(
                f"/session/{session_id}",
                json={"inputResponses": [{"requestId": request["requestId"], "optionId": "approve"}]},
            )
            events = await read_stream(client, session_id, accepted.json()["startIndex"])
    finally:
        await store.aclose()
    assert accepted.status_code == 202
    assert outcome_of(events) == (["approved"], "got: wired 900")
