"""The PostgreSQL store when its database goes away: a bad target fails at once, a restart costs no
request, an outage is `StoreUnavailableError`, and a write whose connection dies is stored once.

Every test here runs on a PostgreSQL server of this module's own (`own_server`): it is restarted
and stopped, which the session's shared server must never be.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio
import psycopg
import pytest

from eve_py import Runtime, load_agent
from eve_py.agent import load_mock_model
from eve_py.errors import StoreUnavailableError, UsageError
from eve_py.sessions.postgres import PostgresSessionStore
from tests.conftest import HITL_APP
from tests.postgres import PostgresServer, fill, free_port, own_server

pytestmark = pytest.mark.anyio

PASSWORD = "pw-right-7c1e"
WRONG = "pw-wrong-93ab"


@pytest.fixture(scope="module")
def server() -> Iterator[PostgresServer]:
    with own_server() as server:
        server.password_role("eve_pw", PASSWORD)
        yield server


def runtime_on(store: PostgresSessionStore) -> Runtime:
    return Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)


def bad_targets(server: PostgresServer) -> dict[str, tuple[str, str]]:
    """A URL per way of getting the target wrong, and what the error must say of it."""
    port = server.port
    return {
        "missing database": (f"postgresql://postgres:{WRONG}@127.0.0.1:{port}/no_such_db", 'database "no_such_db"'),
        "wrong password": (f"postgresql://eve_pw:{WRONG}@127.0.0.1:{port}/postgres", "password authentication"),
        "nothing listening": (f"postgresql://postgres:{WRONG}@127.0.0.1:{free_port()}/eve", "Connection refused"),
    }


@pytest.mark.parametrize("target", ["missing database", "wrong password", "nothing listening"])
async def test_a_bad_target_fails_within_seconds_with_one_line_and_no_password(
    server: PostgresServer, target: str, caplog: pytest.LogCaptureFixture
) -> None:
    url, cause = bad_targets(server)[target]
    began = time.monotonic()

    with anyio.fail_after(10), pytest.raises(UsageError) as refused:
        await PostgresSessionStore.open(url)

    assert time.monotonic() - began < 5
    message = str(refused.value)
    assert message.startswith("cannot connect to postgresql://") and cause in message
    assert "\n" not in message and WRONG not in message
    assert not [r for r in caplog.records if r.name.startswith("psycopg")], "no pool retries are logged"


async def test_the_right_password_opens_the_store(server: PostgresServer) -> None:
    database = server.database().rsplit("/", 1)[1]
    store = await PostgresSessionStore.open(f"postgresql://eve_pw:{PASSWORD}@127.0.0.1:{server.port}/{database}")
    await store.aclose()


async def test_the_first_read_and_the_first_write_after_a_restart_succeed(server: PostgresServer) -> None:
    store = await PostgresSessionStore.open(server.database(), max_size=4)
    runtime = runtime_on(store)
    session = await runtime.create_session()
    try:
        await fill(store, 4)
        await anyio.to_thread.run_sync(server.restart)

        with anyio.fail_after(5):
            assert (await store.load(session.id)).status == "idle"

        await fill(store, 4)
        await anyio.to_thread.run_sync(server.restart)

        with anyio.fail_after(5):
            result = await (await runtime.get_session(session.id)).send("hello")
        assert result.status == "completed"
        events = await store.read_events(session.id)
        assert [e.type for e in events].count("turn.started") == 1
    finally:
        await store.aclose()


async def test_while_the_database_is_down_the_store_raises_store_unavailable_then_recovers(
    server: PostgresServer,
) -> None:
    store = await PostgresSessionStore.open(server.database(), max_size=2, timeout_s=2.0)
    session = await runtime_on(store).create_session()
    try:
        await fill(store, 2)
        await anyio.to_thread.run_sync(server.halt)
        try:
            with anyio.fail_after(5):
                with pytest.raises(StoreUnavailableError, match=r"cannot reach postgresql://postgres@127\.0\.0\.1"):
                    await store.load(session.id)
                with pytest.raises(StoreUnavailableError):
                    await store.read_events(session.id)
        finally:
            await anyio.to_thread.run_sync(server.resume)

        with anyio.fail_after(5):
            assert (await store.load(session.id)).id == session.id
    finally:
        await store.aclose()


async def _terminate(server: PostgresServer, conn: psycopg.AsyncConnection[Any]) -> None:
    """End `conn`'s server process from outside, as a restart or an operator's pg_terminate_backend does."""
    async with await psycopg.AsyncConnection.connect(server.url(), autocommit=True) as admin:
        await admin.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))


@pytest.mark.parametrize("when", ["before", "after"])
async def test_a_write_whose_connection_dies_is_stored_exactly_once(
    server: PostgresServer, when: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`before`: the write never reached a live server, and is run again. `after`: it committed, and
    only the answer was lost: it is reported done, not run again and not reported as a conflict."""
    store = await PostgresSessionStore.open(server.database(), max_size=2)
    session = await runtime_on(store).create_session()
    real = store._execute
    killed: list[str] = []

    async def dies_once(cursor: psycopg.AsyncCursor[Any], query: str, *args: Any) -> list[tuple[Any, ...]]:
        if killed or "UPDATE eve_sessions" not in query:
            return await real(cursor, query, *args)
        killed.append(query)
        if when == "before":
            await _terminate(server, cursor.connection)
            return await real(cursor, query, *args)
        await real(cursor, query, *args)  # committed; its answer is what gets lost
        await _terminate(server, cursor.connection)
        raise psycopg.OperationalError("consuming input failed: server closed the connection unexpectedly")

    monkeypatch.setattr(store, "_execute", dies_once)
    try:
        with anyio.fail_after(10):
            result = await (await runtime_on(store).get_session(session.id)).send("hello")

        assert killed, "a write's connection died"
        assert result.status == "completed"
        types = [e.type for e in await store.read_events(session.id)]
        assert types.count("turn.started") == 1 and types.count("turn.completed") == 1
        assert len(await store.read_messages(session.id)) == 2
    finally:
        await store.aclose()
