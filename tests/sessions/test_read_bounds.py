"""Reading a session's logs with any integer bounds gives a slice, never a store error."""

from __future__ import annotations

from pathlib import Path

import pytest

from eve_py import Agent, Runtime
from eve_py.sessions import MemorySessionStore, SessionStore, SQLiteSessionStore
from eve_py.testing import MockModel

pytestmark = pytest.mark.anyio

HUGE = 10**30
"""Far beyond SQLite's 64-bit integers."""


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize(
    ("start", "stop", "whole"),
    [(HUGE, None, False), (0, HUGE, True), (-HUGE, None, True), (0, -HUGE, False), (HUGE, HUGE, False)],
)
async def test_huge_or_negative_bounds_read_a_slice(
    kind: str, tmp_path: Path, start: int, stop: int | None, whole: bool
) -> None:
    store: SessionStore = MemorySessionStore() if kind == "memory" else SQLiteSessionStore(tmp_path / "s.db")
    session = await Runtime(Agent.from_definitions({}), model=MockModel(lambda r: "hi"), store=store).create_session()
    await session.send("hello")
    total = len(await session.events())

    assert len(await session.events(start, stop)) == (total if whole else 0)
    assert len(await store.read_messages(session.id, start, stop)) == (2 if whole else 0)
    await store.aclose()
