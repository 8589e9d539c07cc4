"""Keys used once (`SessionStore.use_once`): one caller wins per key, on every store and every process on it."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from eve_py.sessions import SessionStore, SQLiteSessionStore
from eve_py.sessions.postgres import PostgresSessionStore

pytestmark = pytest.mark.anyio


async def test_a_key_is_used_once_until_its_record_lapses(store: SessionStore) -> None:
    assert await store.use_once("mcp:a", now=100.0, expires_at=200.0)
    assert not await store.use_once("mcp:a", now=150.0, expires_at=300.0)
    assert await store.use_once("mcp:b", now=150.0, expires_at=300.0)
    assert await store.use_once("mcp:a", now=200.0, expires_at=400.0)  # lapsed: recorded afresh
    assert not await store.use_once("mcp:a", now=300.0, expires_at=500.0)


async def test_a_forgotten_key_is_a_first_use_again(store: SessionStore) -> None:
    assert await store.use_once("http:a", now=100.0, expires_at=200.0)
    await store.forget_once("http:a")
    await store.forget_once("http:never-used")  # nothing to drop: no error
    assert await store.use_once("http:a", now=110.0, expires_at=200.0)
    assert not await store.use_once("http:a", now=120.0, expires_at=200.0)


async def test_two_processes_on_a_sqlite_file_share_the_keys(tmp_path: Path) -> None:
    one, two = SQLiteSessionStore(tmp_path / "s.db"), SQLiteSessionStore(tmp_path / "s.db")
    try:
        assert await one.use_once("k", now=0.0, expires_at=10.0)
        assert not await two.use_once("k", now=1.0, expires_at=11.0)
    finally:
        await one.aclose()
        await two.aclose()


async def test_racing_users_of_one_key_on_postgres_one_wins(postgres_url: str) -> None:
    stores = [await PostgresSessionStore.open(postgres_url, max_size=2) for _ in range(4)]
    won: list[bool] = []

    async def use(store: PostgresSessionStore) -> None:
        won.append(await store.use_once("raced", now=0.0, expires_at=10.0))

    try:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                for store in stores:
                    group.start_soon(use, store)
        assert sorted(won) == [False, False, False, True]
    finally:
        for store in stores:
            await store.aclose()
