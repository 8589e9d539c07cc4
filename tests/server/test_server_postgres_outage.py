"""The HTTP API on PostgreSQL when the database restarts or stops: the first request after a restart
succeeds, and while it is down every request is a 503 with `Retry-After`, never a 500.

The real app (`create_app`) on a real uvicorn, on a PostgreSQL server of this module's own
(`own_server`): it is restarted and stopped, which the session's shared server must never be.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import anyio
import httpx
import pytest

from eve_py.agent import Agent
from eve_py.sessions.postgres import PostgresSessionStore
from tests.postgres import PostgresServer, fill, own_server
from tests.server.helpers import Served, hitl_runtime, read_stream, serve

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def server() -> Iterator[PostgresServer]:
    with own_server() as server:
        yield server


@pytest.fixture
async def store(server: PostgresServer) -> AsyncIterator[PostgresSessionStore]:
    store = await PostgresSessionStore.open(server.database(), max_size=4, timeout_s=2.0)
    try:
        yield store
    finally:
        await store.aclose()


async def new_session(http: httpx.AsyncClient) -> str:
    """A session whose first turn ("hello") completed."""
    created = await http.post("/session", json={"message": "hello"})
    assert created.status_code == 202, created.text
    session_id: str = created.json()["sessionId"]
    assert (await read_stream(http, session_id))[-1]["type"] == "session.waiting"
    return session_id


async def restart(served: Served, store: PostgresSessionStore, server: PostgresServer) -> None:
    """Fill the pool as a busy worker's is, then `pg_ctl restart -m fast` (returns once PostgreSQL is back)."""
    await fill(store, 4)
    await anyio.to_thread.run_sync(server.restart)


async def test_the_first_request_after_a_postgresql_restart_succeeds(
    hitl_agent: Agent, store: PostgresSessionStore, server: PostgresServer
) -> None:
    async with serve(hitl_runtime(hitl_agent, store)) as served, served.client() as http:
        session_id = await new_session(http)

        await restart(served, store, server)
        with anyio.fail_after(5):
            state = await http.get(f"/session/{session_id}")
        assert state.status_code == 200, state.text
        assert state.json()["status"] == "idle"

        await restart(served, store, server)
        with anyio.fail_after(5):
            sent = await http.post(f"/session/{session_id}", json={"message": "hello again"})
        assert sent.status_code == 202, sent.text
        events = await read_stream(http, session_id, sent.json()["startIndex"])
        assert [e["type"] for e in events][-2:] == ["turn.completed", "session.waiting"]

        await restart(served, store, server)
        with anyio.fail_after(5):
            created = await http.post("/session", json={})
        assert created.status_code == 202, created.text


async def test_while_postgresql_is_down_the_api_answers_503_with_retry_after(
    hitl_agent: Agent, store: PostgresSessionStore, server: PostgresServer
) -> None:
    async with serve(hitl_runtime(hitl_agent, store)) as served, served.client() as http:
        session_id = await new_session(http)
        await fill(store, 4)

        await anyio.to_thread.run_sync(server.halt)
        try:
            with anyio.fail_after(10):
                answers = [
                    await http.get(f"/session/{session_id}"),
                    await http.post(f"/session/{session_id}", json={"message": "are you there?"}),
                    await http.post("/session", json={"message": "hello"}),
                    await http.get("/session/ses_never_made"),
                ]
        finally:
            await anyio.to_thread.run_sync(server.resume)

        for answer in answers:
            assert answer.status_code == 503, (answer.request.url, answer.text)
            assert answer.headers["retry-after"] == "5"
            assert answer.json()["code"] == "store_unavailable"
            assert "postgres" not in answer.text and "127.0.0.1" not in answer.text, "no database details"

        with anyio.fail_after(5):
            again = await http.get(f"/session/{session_id}")
        assert again.status_code == 200, again.text
