"""The PostgreSQL store on a real server: explicit schema, one winner per version, notices, copy from SQLite."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import psycopg
import pytest

from eve_py import InputResponse, Runtime, SessionConflictError, StoreSchemaError, load_agent
from eve_py.agent import load_mock_model
from eve_py.cli._main import main
from eve_py.errors import StoreUnavailableError
from eve_py.protocol.messages import UserMessage
from eve_py.sessions import MemorySessionStore, SQLiteSessionStore
from eve_py.sessions._feed import Notice
from eve_py.sessions._opening import open_store
from eve_py.sessions.postgres import POSTGRES_SCHEMA_VERSION, PostgresSessionStore, migrate
from tests.conftest import HITL_APP, REPO
from tests.postgres import PostgresServer

PICK = {"pickedIds": ["tpl_green"]}


def runtime_on(store: PostgresSessionStore | SQLiteSessionStore | MemorySessionStore) -> Runtime:
    return Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)


def test_a_database_without_the_schema_is_refused_until_migrate_creates_it(
    postgres_server: PostgresServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = postgres_server.database(migrated=False)

    with pytest.raises(StoreSchemaError, match=r"has no eve-py schema; create it first with: eve-py store migrate"):
        anyio.run(PostgresSessionStore.open, url)
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regclass('eve_sessions')").fetchone() == (None,), "opening created nothing"
    assert main(["run", str(HITL_APP), "hello", "--model", "mock", "--store", url]) == 2
    assert "eve-py store migrate" in capsys.readouterr().err

    assert main(["serve", str(HITL_APP), "--model", "mock", "--port", "0", "--store", url]) == 2
    assert "has no eve-py schema" in capsys.readouterr().err, "serve refuses before it listens"

    assert main(["store", "migrate", url]) == 0
    assert main(["store", "migrate", url]) == 0
    out = capsys.readouterr().out
    assert f"schema none -> {POSTGRES_SCHEMA_VERSION}" in out and "up to date" in out
    first = out.splitlines()[0]
    for page in ("cli.md", "deploy.md"):  # the pages show what migrate prints on a new database
        assert f"\n{first}\n" in (REPO / "docs" / page).read_text(), (page, first)

    assert main(["run", str(HITL_APP), "hello", "--model", "mock", "--store", url]) == 0


@pytest.mark.anyio
async def test_a_schema_3_database_is_refused_until_migrate_upgrades_it_keeping_its_sessions(postgres_url: str) -> None:
    store = await PostgresSessionStore.open(postgres_url)
    parked = await runtime_on(store).create_session()
    [request] = (await parked.send("help me pick a template")).input_requests
    await store.aclose()
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as conn:  # schema 3's logs
        for table in ("events", "messages"):
            await conn.execute(f"ALTER TABLE eve_{table} ADD FOREIGN KEY (session) REFERENCES eve_sessions (key)")
        await conn.execute("UPDATE eve_schema SET version = 3")

    with pytest.raises(StoreSchemaError, match="holds eve-py schema 3; .* eve-py store migrate"):
        await PostgresSessionStore.open(postgres_url)
    assert await migrate(postgres_url) == (3, POSTGRES_SCHEMA_VERSION)

    store = await PostgresSessionStore.open(postgres_url)
    again = await runtime_on(store).get_session(parked.id)
    done = await again.respond([InputResponse(request_id=request.request_id, value=PICK)])
    assert done.message == "Recorded your pick: tpl_green."
    await store.aclose()
    async with await psycopg.AsyncConnection.connect(postgres_url) as conn:
        found = await conn.execute("SELECT count(*) FROM pg_constraint WHERE contype = 'f'")
        assert await found.fetchone() == (0,)


def test_a_database_of_a_newer_schema_is_refused(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("UPDATE eve_schema SET version = version + 1")

    with pytest.raises(StoreSchemaError, match="written by a newer eve-py"):
        anyio.run(PostgresSessionStore.open, postgres_url)
    assert main(["store", "migrate", postgres_url]) == 2


def test_eve_store_picks_postgresql_for_run(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVE_STORE", postgres_url)

    assert main(["run", str(HITL_APP), "help me pick a template", "--model", "mock"]) == 3

    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT status FROM eve_sessions").fetchall() == [("waiting",)]


@pytest.mark.anyio
async def test_two_processes_writing_one_version_one_wins(postgres_url: str) -> None:
    first = await PostgresSessionStore.open(postgres_url, max_size=2)
    second = await PostgresSessionStore.open(postgres_url, max_size=2)
    session = await runtime_on(first).create_session()
    record = await second.load(session.id)
    outcomes: list[object] = []

    async def write(store: PostgresSessionStore, status: str) -> None:
        try:
            outcomes.append(await store.commit(record.model_copy(update={"status": status}), []))
        except SessionConflictError as exc:
            outcomes.append(exc)

    async with anyio.create_task_group() as group:
        group.start_soon(write, first, "waiting")
        group.start_soon(write, second, "ended")

    assert sum(isinstance(o, SessionConflictError) for o in outcomes) == 1
    assert (await first.load(session.id)).version == 2
    await first.aclose()
    await second.aclose()


@pytest.mark.anyio
async def test_a_commit_notifies_every_listener_with_the_session_and_the_log_s_new_end(postgres_url: str) -> None:
    writer = await PostgresSessionStore.open(postgres_url, max_size=2, feed=True)
    listener = await PostgresSessionStore.open(postgres_url, max_size=1)
    received: list[Notice] = []
    with anyio.fail_after(10):
        async with listener.notices() as notices:
            session = await runtime_on(writer).create_session()
            await writer.request_cancel(session.id)
            async for notice in notices:
                received.append(notice)
                if len(received) == 2:
                    break
    assert received == [Notice("events", session.id, 1), Notice("cancel", session.id)]
    await writer.aclose()
    await listener.aclose()


@pytest.mark.anyio
async def test_a_store_notifies_of_its_commits_only_once_it_listens_itself(postgres_url: str) -> None:
    writer = await PostgresSessionStore.open(postgres_url, max_size=2)
    listener = await PostgresSessionStore.open(postgres_url, max_size=1)
    with anyio.fail_after(10):
        async with listener.notices() as notices:
            unheard = await runtime_on(writer).create_session()
            await writer.request_cancel(unheard.id)  # notices arrive in commit order: none came before this one
            assert await anext(notices) == Notice("cancel", unheard.id)
            async with writer.notices():
                heard = await runtime_on(writer).create_session()
                assert await anext(notices) == Notice("events", heard.id, 1)
            again = await runtime_on(writer).create_session()  # it stays a feeding store
            assert await anext(notices) == Notice("events", again.id, 1)
    await writer.aclose()
    await listener.aclose()


@pytest.mark.anyio
async def test_store_copy_moves_parked_sessions_and_they_resume_on_postgresql(
    tmp_path: Path, postgres_url: str
) -> None:
    sqlite = SQLiteSessionStore(tmp_path / "s.db")
    parked = await runtime_on(sqlite).create_session()
    [request] = (await parked.send("help me pick a template")).input_requests
    idle = await runtime_on(sqlite).create_session()
    await idle.send("hello")
    events = {s.id: await sqlite.read_events(s.id) for s in (parked, idle)}
    messages = {s.id: await sqlite.read_messages(s.id) for s in (parked, idle)}
    await sqlite.aclose()

    assert await anyio.to_thread.run_sync(main, ["store", "copy", str(tmp_path / "s.db"), postgres_url]) == 0
    assert await anyio.to_thread.run_sync(main, ["store", "copy", str(tmp_path / "s.db"), postgres_url]) == 0

    store = await open_store(postgres_url)
    assert isinstance(store, PostgresSessionStore)
    for session_id in events:
        assert await store.read_events(session_id) == events[session_id]
        assert await store.read_messages(session_id) == messages[session_id]
    again = await runtime_on(store).get_session(parked.id)
    done = await again.respond([InputResponse(request_id=request.request_id, value=PICK)])
    assert done.message == "Recorded your pick: tpl_green."
    await store.aclose()


@pytest.mark.anyio
async def test_callers_beyond_the_pool_s_connections_wait_their_turn_or_get_store_unavailable(
    postgres_url: str,
) -> None:
    store = await PostgresSessionStore.open(postgres_url, max_size=1, timeout_s=0.5)
    session = await runtime_on(store).create_session()
    loaded = anyio.Event()

    async def load_meanwhile() -> None:
        await store.load(session.id)
        loaded.set()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            async with store.connection():  # the only connection, held
                group.start_soon(load_meanwhile)
                await anyio.wait_all_tasks_blocked()
                assert not loaded.is_set()
            await loaded.wait()  # the waiting load got the connection once it was given back
        async with store.connection():
            started = time.monotonic()
            with pytest.raises(StoreUnavailableError, match="no connection came free within 0.50 s"):
                await store.load(session.id)
            assert time.monotonic() - started < 5
    await store.aclose()


@pytest.mark.anyio
async def test_text_holding_the_log_separator_character_is_stored_and_read_back_as_written(
    postgres_url: str,
) -> None:
    store = await PostgresSessionStore.open(postgres_url)
    memory = MemorySessionStore()
    for each in (store, memory):
        session = await runtime_on(each).create_session(session_id="ses_separator")
        await session.send("one\x1etwo\x1e")
    messages = await store.read_messages("ses_separator")
    assert messages[0] == UserMessage(content="one\x1etwo\x1e")
    assert len(messages) == len(await memory.read_messages("ses_separator"))
    events = await store.read_events("ses_separator")
    assert [e.type for e in events] == [e.type for e in await memory.read_events("ses_separator")]
    await store.aclose()
