"""A parked request keeps its `requestId` across a crash and recovery (eve#3103 is that bug in eve).

A person may hold a request id from before a crash (a browser card, an answer link, a chat
prompt): the answer must still find its request once another process recovers the session.

- A worker is killed (SIGKILL, by pid) before and after each of its store commits, for an
  approval, a client tool and a resolver that elicits twice, on a real SQLite file; a new process
  recovers it. The ids requested over the session's whole life are exactly those of a run that
  never crashed, each requested once: a request whose park was committed keeps its id, and a
  step that re-ran because the crash came before its park commit derives the same ids again
  (from the tool call ids; a resolver's question adds its key and digest). Every request open at
  the crash is answered after recovery under the id it had before.
- After a restart, a runtime whose model would now name the calls differently (ids are random,
  as a provider's are) shows the same request ids, takes an answer given with the id from before
  the restart, and does not ask the model for the parked step again: the ids come from the store.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import anyio
import pytest

from eve_py import Agent, InputResponse, Runtime, define_tool
from eve_py.protocol import InputRequested, InputResolved
from eve_py.sessions import SQLiteSessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.crash.flows import FINAL_MESSAGES
from tests.crash.forks import ForkServer, fork_server

pytestmark = pytest.mark.anyio


async def request_ids(db: Path, session_id: str) -> tuple[list[str], list[str], list[str]]:
    """What the store holds: the ids of every `input.requested` (in order), of every
    `input.resolved`, and of the requests open now."""
    store = SQLiteSessionStore(db)
    try:
        record = await store.load(session_id)
        events = await store.read_events(session_id)
    finally:
        await store.aclose()
    requested = [r.request_id for e in events if isinstance(e, InputRequested) for r in e.data.requests]
    resolved = [r.request_id for e in events if isinstance(e, InputResolved) for r in e.data.resolutions]
    pending = record.pending
    open_now = [r.request_id for r in pending.open_requests()] if pending is not None else []
    return requested, resolved, open_now


async def crash_and_recover(
    forks: ForkServer, flow: str, folder: Path, kill_at: tuple[int, str], clean_ids: list[str]
) -> None:
    commit, when = kill_at
    await anyio.Path(folder).mkdir()
    db, env = folder / "s.db", {"CRASH_RUNS": str(folder / "runs.txt")}
    worker = await forks.fork(role="worker", flow=flow, db=str(db), killAt=[commit, when], env=env)
    session_id: str = (await forks.expect(worker, {"session"}))["session"]
    await forks.expect(worker, {"killpoint"})
    await forks.kill(worker)
    shown_before, _, open_before = await request_ids(db, session_id)

    recovered = await forks.run(role="recover", flow=flow, db=str(db), session=session_id, env=env)

    where = f"{flow}: killed {when} commit {commit}"
    assert recovered["event"] == "done" and recovered["message"] == FINAL_MESSAGES[flow], (where, recovered)
    requested, resolved, _ = await request_ids(db, session_id)
    assert requested[: len(shown_before)] == shown_before, f"{where}: a request shown before the crash changed id"
    assert set(open_before) <= set(recovered["asked"]), f"{where}: an open request came back under another id"
    assert sorted(resolved) == sorted(requested), f"{where}: each request is resolved once, under its id"
    assert requested == clean_ids, f"{where}: requested {requested}; a run without a crash requested {clean_ids}"


@pytest.mark.parametrize("flow", sorted(FINAL_MESSAGES))
async def test_request_ids_are_the_same_after_a_crash_at_any_commit_and_recovery(flow: str, tmp_path: Path) -> None:
    async with fork_server() as forks:
        clean_db = tmp_path / "clean.db"
        worker = await forks.fork(role="worker", flow=flow, db=str(clean_db), env={"CRASH_RUNS": str(tmp_path / "c")})
        session_id: str = (await forks.expect(worker, {"session"}))["session"]
        clean = await forks.expect(worker, {"done", "error"})
        assert await forks.reap(worker) == 0
        assert clean["event"] == "done" and clean["message"] == FINAL_MESSAGES[flow], clean
        clean_ids, _, _ = await request_ids(clean_db, session_id)
        assert clean_ids and clean_ids == clean["asked"], clean
        for commit in range(1, clean["commits"] + 1):
            for when in ("before", "after"):
                await crash_and_recover(forks, flow, tmp_path / f"{commit}-{when}", (commit, when), clean_ids)


def publish(version: str) -> dict[str, str]:
    """Publish a release."""
    return {"published": version}


class ProviderIds:
    """A scripted model whose call ids are random, as a provider's are: a step asked again gets new ids."""

    def __init__(self) -> None:
        self.model = MockModel(self._respond)
        self.steps = 0

    def _respond(self, request: MockModelRequest) -> str | MockResponse:
        self.steps += 1
        if not request.tool_results_since_last_user_message:
            call_id = f"call_{uuid.uuid4().hex[:24]}"
            return MockResponse(tool_calls=[MockToolCall("publish", {"version": "1.4.0"}, id=call_id)])
        return f"publish: {request.tool_results_since_last_user_message[0].output}"


async def test_after_a_restart_the_open_request_keeps_its_id_and_takes_the_answer_given_with_it(
    tmp_path: Path,
) -> None:
    agent = Agent.from_definitions(
        {"publish": define_tool(description="Publish a release.", execute=publish, needs_approval=True)}
    )
    db = tmp_path / "s.db"
    store = SQLiteSessionStore(db)
    before = Runtime(agent, model=ProviderIds().model, store=store)
    session = await before.create_session()
    [shown] = (await session.send("publish 1.4.0")).input_requests
    await before.aclose()
    await store.aclose()

    store = SQLiteSessionStore(db)
    model = ProviderIds()
    after = Runtime(agent, model=model.model, store=store)
    recovered = await after.get_session(session.id)
    waiting = await recovered.resume()

    assert [request.request_id for request in waiting.input_requests] == [shown.request_id]
    assert model.steps == 0, "the parked step was not asked of the model again"
    done = await recovered.respond([InputResponse(request_id=shown.request_id, option_id="approve")])
    assert done.status == "completed" and done.message == "publish: {'published': '1.4.0'}"
    await after.aclose()
    await store.aclose()
