"""A worker killed (SIGKILL, by pid) at any store commit of a park/answer/settle flow loses nothing.

For each flow (an approval, a client tool with an output schema, a resolver that elicits twice)
the worker is killed just before and just after each of its commits, on a real SQLite file.
A new process then calls `resume(force=True)` and answers whatever is still open. Checked:

- the turn completes with the flow's final message (every answer was used as given);
- no answer accepted before the kill is asked for again;
- an executor whose result was stored before the kill does not run again, and any other runs
  at most once more (the documented window: it ran, but its result was not stored yet);
- the conversation is paired: every tool call has exactly one result, and the event log
  resolves every request exactly once.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from eve_py import check_pairing
from eve_py.protocol import InputRequested, InputResolved
from eve_py.protocol.messages import AssistantMessage, ToolMessage
from eve_py.sessions import SQLiteSessionStore
from tests.crash.flows import FINAL_MESSAGES
from tests.crash.forks import ForkServer, fork_server

pytestmark = pytest.mark.anyio


@dataclass(frozen=True)
class AtKill:
    """What the store and the runs file held when the worker was killed."""

    runs: Counter[str]
    """Executor runs by call id."""
    stored: set[str]
    """Call ids whose result is stored (in the conversation, or checkpointed in the parked step)."""
    accepted: set[str]
    """Request ids whose answers are stored."""


def runs_by_call(runs: Path) -> Counter[str]:
    return Counter(line.split()[1] for line in runs.read_text(encoding="utf-8").splitlines())


async def read_state(db: Path, session_id: str, runs: Path) -> AtKill:
    store = SQLiteSessionStore(db)
    record = await store.load(session_id)
    messages = await store.read_messages(session_id)
    await store.aclose()
    stored = {part.tool_call_id for m in messages if isinstance(m, ToolMessage) for part in m.content}
    accepted: set[str] = set()
    if record.pending is not None:
        stored |= set(record.pending.results)
        accepted = set(record.pending.answers) | set(record.pending.answered)
    return AtKill(runs=runs_by_call(runs), stored=stored, accepted=accepted)


async def kill_and_recover(forks: ForkServer, flow: str, folder: Path, commit: int, when: str) -> None:
    await anyio.Path(folder).mkdir()
    db, runs = folder / "s.db", folder / "runs.txt"
    await anyio.Path(runs).touch()
    env = {"CRASH_RUNS": str(runs)}
    worker = await forks.fork(role="worker", flow=flow, db=str(db), killAt=[commit, when], env=env)
    session_id: str = (await forks.expect(worker, {"session"}))["session"]
    await forks.expect(worker, {"killpoint"})
    await forks.kill(worker)
    at_kill = await read_state(db, session_id, runs)

    recovered = await forks.run(role="recover", flow=flow, db=str(db), session=session_id, env=env)

    where = f"{flow}: killed {when} commit {commit}"
    assert recovered["event"] == "done", (where, recovered)
    assert recovered["status"] == "completed" and recovered["message"] == FINAL_MESSAGES[flow], where
    assert not set(recovered["asked"]) & at_kill.accepted, f"{where}: an accepted answer was asked for again"
    runs_after = runs_by_call(runs)
    for call_id, count in runs_after.items():
        if call_id in at_kill.stored:
            assert count == at_kill.runs[call_id], f"{where}: {call_id} ran again after its result was stored"
        else:
            assert count <= at_kill.runs[call_id] + 1, where
    store = SQLiteSessionStore(db)
    conversation = await store.read_messages(session_id)
    events = await store.read_events(session_id)
    await store.aclose()
    requested = [r.request_id for e in events if isinstance(e, InputRequested) for r in e.data.requests]
    resolved = [r.request_id for e in events if isinstance(e, InputResolved) for r in e.data.resolutions]
    assert sorted(resolved) == sorted(set(requested)), f"{where}: each request is resolved exactly once"
    check_pairing(conversation)
    calls = [c.tool_call_id for m in conversation if isinstance(m, AssistantMessage) for c in m.tool_calls]
    results = [p.tool_call_id for m in conversation if isinstance(m, ToolMessage) for p in m.content]
    assert sorted(calls) == sorted(results) and len(set(results)) == len(results), where
    assert set(runs_after) <= set(calls), where


@pytest.mark.parametrize("flow", sorted(FINAL_MESSAGES))
async def test_a_worker_killed_at_any_commit_loses_no_answer_and_reruns_no_stored_executor(
    flow: str, tmp_path: Path
) -> None:
    async with fork_server() as forks:
        clean_runs = tmp_path / "clean.txt"
        clean = await forks.run(
            role="worker", flow=flow, db=str(tmp_path / "clean.db"), env={"CRASH_RUNS": str(clean_runs)}
        )
        assert clean["event"] == "done" and clean["message"] == FINAL_MESSAGES[flow], clean
        assert all(count == 1 for count in runs_by_call(clean_runs).values())
        for commit in range(1, clean["commits"] + 1):
            for when in ("before", "after"):
                await kill_and_recover(forks, flow, tmp_path / f"{commit}-{when}", commit, when)
