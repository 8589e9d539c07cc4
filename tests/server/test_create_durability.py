"""A session created over HTTP is synced to disk before its `202`, by its own write or its first turn's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from eve_py.agent import Agent
from eve_py.protocol import Event
from eve_py.protocol.messages import Message
from eve_py.sessions import SessionRecord, SQLiteSessionStore
from tests.server.helpers import hitl_runtime, serve

pytestmark = pytest.mark.anyio


class RecordingStore(SQLiteSessionStore):
    """A SQLite store that notes each write's first event type and whether it was synced."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.writes: list[tuple[str, bool]] = []

    async def create(self, record: SessionRecord, events: Sequence[Event], *, durable: bool = True) -> SessionRecord:
        stored = await super().create(record, events, durable=durable)
        self.writes.append((events[0].type, durable))
        return stored

    async def commit(
        self, record: SessionRecord, events: Sequence[Event], messages: Sequence[Message] = (), *, durable: bool = True
    ) -> SessionRecord:
        stored = await super().commit(record, events, messages, durable=durable)
        self.writes.append((events[0].type if events else "", durable))
        return stored


async def test_a_session_created_with_a_message_is_synced_by_its_first_turns_write(
    hitl_agent: Agent, tmp_path: Path
) -> None:
    store = RecordingStore(tmp_path / "s.db")
    async with serve(hitl_runtime(hitl_agent, store=store)) as served, served.client() as client:
        created = await client.post("/session", json={"message": "help me pick a template"})
        assert created.status_code == 202, created.text
        acknowledged = list(store.writes)
        # The session's own write is not synced on its own; the turn's first write, synced before the
        # `202`, covers it (a store keeps writes in order): one sync fewer for the same guarantee.
        assert acknowledged[:2] == [("session.started", False), ("turn.started", True)], acknowledged

        bare = await client.post("/session", json={})
        assert bare.status_code == 202, bare.text
        assert store.writes[-1] == ("session.started", True)  # acknowledged alone: synced alone
    await store.aclose()
