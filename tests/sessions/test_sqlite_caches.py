"""The SQLite store keeps row ids, records and bases for recent sessions only, and finds the others again."""

from __future__ import annotations

from pathlib import Path

import pytest

from eve_py import Runtime, load_agent
from eve_py.agent import load_mock_model
from eve_py.sessions import SQLiteSessionStore, _sqlite
from tests.conftest import HITL_APP

pytestmark = pytest.mark.anyio


async def test_sessions_beyond_the_kept_ones_still_load_and_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_sqlite, "_KEPT_SESSIONS", 4)
    store = SQLiteSessionStore(tmp_path / "s.db")
    runtime = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)
    ids = [(await runtime.create_session()).id for _ in range(12)]
    for session_id in ids:  # the first ones' row ids were dropped long ago
        record = await store.load(session_id)
        stored = await store.commit(record, [], durable=False)
        assert (await store.load(session_id)).version == stored.version == record.version + 1
    other = SQLiteSessionStore(tmp_path / "s.db")
    assert [(await other.load(i)).version for i in ids] == [2] * len(ids)
    await other.aclose()
    await store.aclose()
