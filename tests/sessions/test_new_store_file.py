"""A new SQLite store file is made all at once: a process killed halfway leaves a file the next one accepts."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import anyio
import pytest

from eve_py import Runtime, load_agent
from eve_py.agent import load_mock_model
from eve_py.sessions import SQLiteSessionStore
from tests.conftest import HITL_APP, REPO

pytestmark = pytest.mark.anyio

# Opens a store on a new file and dies (no clean-up, as a kill would) when the store's connection
# is about to create its second table: the first one, `sessions`, has been created by then.
KILLED_WHILE_CREATING = """
import os, sqlite3, sys
from pathlib import Path

connect = sqlite3.connect

def dying(*args, **kwargs):
    db = connect(*args, **kwargs)
    def trace(statement):
        if "CREATE TABLE IF NOT EXISTS secrets" in statement:
            os._exit(3)
    db.set_trace_callback(trace)
    return db

sqlite3.connect = dying
from eve_py.sessions import SQLiteSessionStore
SQLiteSessionStore(Path(sys.argv[1]))
"""


async def test_a_process_killed_while_making_a_new_store_file_leaves_one_the_next_process_uses(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with anyio.fail_after(60):
        command = [sys.executable, "-c", KILLED_WHILE_CREATING, str(path)]
        killed = await anyio.run_process(command, cwd=REPO, check=False)
    assert killed.returncode == 3, killed.stderr.decode()
    with sqlite3.connect(path) as db:  # nothing of the half-made schema was kept
        assert db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall() == []

    store = SQLiteSessionStore(path)
    try:
        session = await Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store).create_session()
        parked = await session.send("help me pick a template")
        assert parked.status == "waiting"
    finally:
        await store.aclose()
