"""A store's secrets: made once, then the same for every process (store object) on it."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from eve_py.sessions import SessionStore, SQLiteSessionStore
from eve_py.sessions.postgres import PostgresSessionStore

pytestmark = pytest.mark.anyio


async def test_a_secret_is_made_once_and_kept(store: SessionStore) -> None:
    first = await store.secret("links")

    assert len(first) == 32
    assert await store.secret("links") == first
    assert await store.secret("other") != first


async def test_every_process_on_a_sqlite_file_gets_the_same_secret(tmp_path: Path) -> None:
    one, two = SQLiteSessionStore(tmp_path / "s.db"), SQLiteSessionStore(tmp_path / "s.db")
    try:
        assert await one.secret("links") == await two.secret("links")
    finally:
        await one.aclose()
        await two.aclose()


async def test_racing_first_callers_on_postgres_agree(postgres_url: str) -> None:
    stores = [await PostgresSessionStore.open(postgres_url, max_size=2) for _ in range(4)]
    got: list[bytes] = []

    async def ask(store: PostgresSessionStore) -> None:
        got.append(await store.secret("links"))

    try:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                for store in stores:
                    group.start_soon(ask, store)
        assert len(got) == 4 and len(set(got)) == 1
    finally:
        for store in stores:
            await store.aclose()
