"""Forced recovery runs a dead worker's turn once, however many processes race to recover it."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from eve_py import check_pairing
from eve_py.protocol.messages import ToolMessage
from eve_py.sessions import SQLiteSessionStore
from tests.crash.flows import FINAL_MESSAGES
from tests.crash.forks import ForkServer, fork_server

pytestmark = pytest.mark.anyio

ANSWER_COMMIT = 3
"""The approval flow's worker: commit 1 starts the turn, 2 parks it, 3 accepts the approval."""


async def died_after_approving(forks: ForkServer, db: Path, runs: Path) -> str:
    """A worker accepts the approval of `charge`, then is killed before the charge runs."""
    env = {"CRASH_RUNS": str(runs)}
    worker = await forks.fork(role="worker", flow="approval", db=str(db), killAt=[ANSWER_COMMIT, "after"], env=env)
    session_id: str = (await forks.expect(worker, {"session"}))["session"]
    await forks.expect(worker, {"killpoint"})
    await forks.kill(worker)
    store = SQLiteSessionStore(db)
    record = await store.load(session_id)
    await store.aclose()
    assert record.status == "running" and record.pending is not None and record.pending.answers
    assert record.lease is not None, "the dead worker's lease is still live: only force takes over"
    return session_id


def charge_runs(runs: Path) -> list[str]:
    return [line for line in runs.read_text(encoding="utf-8").splitlines() if line.startswith("charge ")]


async def test_a_forced_resume_while_another_runs_the_approved_executor_is_a_conflict(tmp_path: Path) -> None:
    db, runs, hold = tmp_path / "s.db", tmp_path / "runs.txt", tmp_path / "hold"
    os.mkfifo(hold)
    async with fork_server() as forks:
        session_id = await died_after_approving(forks, db, runs)
        env = {"CRASH_RUNS": str(runs), "CRASH_HOLD": str(hold)}
        first = await forks.fork(role="recover", flow="approval", db=str(db), session=session_id, env=env)
        await forks.expect(first, {"executing"})

        second = await forks.fork(role="recover", flow="approval", db=str(db), session=session_id, env=env)
        refused = await forks.expect(second, {"executing", "done", "error"})
        assert refused["event"] == "error", "a second recovery ran the approved charge again"
        assert refused["type"] == "SessionConflictError"
        assert await forks.reap(second) == 0

        await anyio.to_thread.run_sync(lambda: hold.write_text("go", encoding="utf-8"))
        finished = await forks.expect(first, {"done", "error"})
        assert await forks.reap(first) == 0

    assert finished["event"] == "done" and finished["message"] == FINAL_MESSAGES["approval"]
    assert len(charge_runs(runs)) == 1


async def test_of_many_processes_forcing_recovery_at_once_exactly_one_runs_the_executor(tmp_path: Path) -> None:
    db, runs = tmp_path / "s.db", tmp_path / "runs.txt"
    async with fork_server() as forks:
        session_id = await died_after_approving(forks, db, runs)
        env = {"CRASH_RUNS": str(runs)}
        racers = [
            await forks.fork(role="recover", flow="approval", db=str(db), session=session_id, gate=True, env=env)
            for _ in range(8)
        ]
        await forks.open_gate()
        outcomes = [await forks.expect(pid, {"done", "error"}) for pid in racers]
        for pid in racers:
            assert await forks.reap(pid) == 0

    for outcome in outcomes:
        if outcome["event"] == "error":
            assert outcome["type"] == "SessionConflictError"
        else:  # the winner, or a process that found the turn already finished
            assert outcome["status"] == "completed" and outcome["message"] == FINAL_MESSAGES["approval"]
    assert len(charge_runs(runs)) == 1
    store = SQLiteSessionStore(db)
    conversation = await store.read_messages(session_id)
    await store.aclose()
    check_pairing(conversation)
    results = [p for m in conversation if isinstance(m, ToolMessage) for p in m.content if p.tool_name == "charge"]
    assert len(results) == 1 and results[0].output == {"charged": 500}
