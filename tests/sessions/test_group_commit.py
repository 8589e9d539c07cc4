"""SQLite group commit: concurrent writes share a transaction and a sync, and each still wins or loses alone."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest

from eve_py import Runtime, SessionConflictError, load_agent
from eve_py.agent import load_mock_model
from eve_py.sessions import SessionRecord, SQLiteSessionStore
from tests.conftest import HITL_APP

pytestmark = pytest.mark.anyio


async def _sessions(store: SQLiteSessionStore, count: int) -> list[SessionRecord]:
    runtime = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)
    return [await store.load((await runtime.create_session()).id) for _ in range(count)]


async def test_many_durable_writes_at_once_all_land_and_a_second_store_reads_them(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "s.db")
    records = await _sessions(store, 48)
    stored: dict[str, SessionRecord] = {}

    async def write(record: SessionRecord) -> None:
        stored[record.id] = await store.commit(record, [], durable=True)

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tasks:
            for record in records:
                tasks.start_soon(write, record)
    reader = SQLiteSessionStore(tmp_path / "s.db")
    for record in records:
        assert stored[record.id].version == record.version + 1
        assert await reader.load(record.id) == stored[record.id]
    await reader.aclose()
    await store.aclose()


async def test_a_conflict_inside_a_shared_transaction_fails_that_write_alone(tmp_path: Path) -> None:
    """Two writes of one version and a third session's write queue behind a lock, then commit together."""
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(path)
    first, second, third = await _sessions(store, 3)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock: the writer queues everything
    outcomes: dict[str, object] = {}

    async def write(name: str, record: SessionRecord) -> None:
        try:
            outcomes[name] = await store.commit(record, [], durable=True)
        except SessionConflictError as exc:
            outcomes[name] = exc

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(write, "third", third)
            await anyio.wait_all_tasks_blocked()
            for name, record in (("first", first), ("again", first), ("second", second)):
                tasks.start_soon(write, name, record)
            await anyio.wait_all_tasks_blocked()
            assert not outcomes  # nothing is acknowledged while the lock is held elsewhere
            other.execute("COMMIT")
    other.close()
    assert isinstance(outcomes["again"], SessionConflictError)
    for name, record in (("first", first), ("second", second), ("third", third)):
        assert isinstance(outcomes[name], SessionRecord)
        assert (await store.load(record.id)).version == record.version + 1
    await store.aclose()


async def test_writes_that_need_no_sync_keep_the_wal_bounded(tmp_path: Path) -> None:
    """With `synchronous=NORMAL` writes run on the loop's connection, which never checkpoints: the writer does."""
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(path, synchronous="NORMAL")
    (record,) = await _sessions(store, 1)
    with anyio.fail_after(60):
        for _ in range(3000):
            record = await store.commit(record, [], durable=True)
    wal = path.with_name(path.name + "-wal").stat().st_size
    assert wal < 8 * 1024 * 1024, wal  # about 3 pages a write: 36 MiB if nothing were checkpointed
    await store.aclose()
    reopened = SQLiteSessionStore(path)
    assert (await reopened.load(record.id)).version == record.version
    await reopened.aclose()
