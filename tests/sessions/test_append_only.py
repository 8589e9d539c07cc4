"""The append-only core: a write's cost does not grow with the conversation, and old files are refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from eve_py import InputResponse, Runtime, StoreSchemaError, load_agent
from eve_py.agent import load_mock_model
from eve_py.sessions import SessionStore, SQLiteSessionStore
from tests.conftest import HITL_APP

pytestmark = pytest.mark.anyio


def test_a_file_of_an_older_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, version INTEGER, record TEXT)")
        db.execute("INSERT INTO sessions VALUES ('ses_1', 3, '{\"messages\": []}')")
    before = path.read_bytes()

    with pytest.raises(StoreSchemaError, match=r"store schema 0.*reads schema 3"):
        SQLiteSessionStore(path)

    assert path.read_bytes() == before


async def test_the_record_stays_small_and_the_logs_only_grow(store: SessionStore) -> None:
    runtime = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)
    session = await runtime.create_session()
    sizes: list[int] = []
    seen_messages: list[str] = []
    for _ in range(30):
        parked = await session.send("help me pick a template")
        pick = InputResponse(request_id=parked.input_requests[0].request_id, value={"pickedIds": ["tpl_blue"]})
        await session.respond([pick])
        record = await store.load(session.id)
        sizes.append(len(record.model_dump_json()))
        stored = await store.read_messages(session.id)
        # Append-only: what was stored before is stored unchanged, in the same place.
        assert [m.model_dump_json() for m in stored[: len(seen_messages)]] == seen_messages
        seen_messages = [m.model_dump_json() for m in stored]
    assert record.message_count == len(stored) == 30 * 6
    assert max(sizes) - min(sizes) < 64, "the record does not grow with the conversation"
    assert [m.model_dump_json() for m in await session.messages()] == seen_messages
    await store.aclose()


async def test_a_cleared_history_stays_in_the_log_but_leaves_the_conversation(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "s.db")
    runtime = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)
    session = await runtime.create_session()
    await session.send("hello")
    await session.clear()
    await session.send("hello again")

    other = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)  # another process
    conversation = await (await other.get_session(session.id)).messages()
    assert [m.role for m in conversation] == ["user", "assistant"]
    assert conversation[0].content == "hello again"  # type: ignore[union-attr]
    assert len(await store.read_messages(session.id)) == 4
    await store.aclose()
