"""Random answers and random orders of operations at a parked batch of every request kind.

Derandomized (the same examples on every run) and bounded, so CI is repeatable and quick.
After each input: a clear `SessionError` with nothing written (the record and the event log
exactly as before, the batch still parked), or the batch correctly advanced (the event log only
grew); the conversation is always paired and no executor ever ran twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from eve_py import EveError, Runtime, Session, SessionError, check_pairing
from eve_py.sessions import MemorySessionStore, SessionStore, SQLiteSessionStore
from tests.fuzz.batch import KINDS, answers_for, build_agent, model, responses, snapshot, with_ids

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
STORES = ["memory", "sqlite"]


@asynccontextmanager
async def parked(kind: str, folder: Path, runs: Counter[str]) -> AsyncIterator[Session]:
    """A new session parked on one request of every kind, in a memory store or a SQLite file."""
    store: SessionStore = MemorySessionStore() if kind == "memory" else SQLiteSessionStore(folder / "s.db")
    try:
        session = await Runtime(build_agent(runs), model=model(), store=store).create_session()
        result = await session.send("go")
        assert sorted(r.kind for r in result.input_requests) == sorted(KINDS)
        yield session
    finally:
        await store.aclose()


async def check_consistent(session: Session, before: tuple[str, list[str]], refused: bool) -> None:
    after = await snapshot(session)
    if refused:
        assert after == before, "a refused input changed the session"
    else:
        assert after[1][: len(before[1])] == before[1], "the event log is append-only"
    assert session.status in ("idle", "waiting", "ended"), "nothing is left running"
    if session.status == "waiting":
        assert session.input_requests
    check_pairing(await session.messages())


@pytest.mark.parametrize("kind", STORES)
@settings(FUZZ, max_examples=50)
@given(drawn=st.lists(responses(), max_size=4))
@example(drawn=[{"requestId": "@2", "value": {"cm": float("nan")}}])  # eve-py issue 14.3
@example(drawn=[{"requestId": "@2", "text": '{"cm": Infinity}'}])
@example(drawn=[{"requestId": "@1", "value": {"pickedIds": ["a\ud800b"]}}])  # issue 14.4
def test_random_answers_are_refused_cleanly_or_advance_the_batch(
    kind: str, tmp_path: Path, drawn: list[dict[str, Any]]
) -> None:
    anyio.run(answer_once, kind, tmp_path, drawn)


async def answer_once(kind: str, folder: Path, drawn: list[dict[str, Any]]) -> None:
    runs: Counter[str] = Counter()
    async with parked(kind, folder, runs) as session:
        ids = [r.request_id for r in session.input_requests]
        before = await snapshot(session)
        try:
            result = await session.respond([with_ids(response, ids) for response in drawn])
        except EveError as exc:
            assert isinstance(exc, SessionError), f"{type(exc).__name__} is not a refusal that writes nothing"
            await check_consistent(session, before, refused=True)
            assert [r.request_id for r in session.input_requests] == ids, "still parked on the same batch"
        else:
            await check_consistent(session, before, refused=False)
            assert result.status in ("waiting", "completed")
            assert {r.request_id for r in result.input_requests} <= set(ids)
            await check_values_kept(session, [with_ids(response, ids) for response in drawn])
    assert all(count == 1 for count in runs.values()), runs


async def check_values_kept(session: Session, accepted: list[dict[str, Any]]) -> None:
    """An accepted answer's value is stored as given (NaN was once stored as null)."""
    pending = (await session.refresh()).record.pending
    for response in accepted:
        stored = pending.answers.get(response["requestId"]) if pending is not None else None
        if stored is not None and "value" in response and response.get("action") not in ("decline", "cancel"):
            assert stored.value == response["value"], "the stored answer differs from the one given"


OPERATIONS = (
    "answer-ask_question",
    "answer-pick",
    "answer-measure",
    "answer-charge",
    "answer-refund",
    "deny",
    "answer-all",
    "garbage",
    "again",
    "send",
    "cancel",
    "resume",
    "clear",
    "reset",
)


async def apply(operation: str, session: Session, answered: list[dict[str, Any]]) -> None:
    good = answers_for(session)
    if operation.startswith("answer-") and operation != "answer-all":
        answer = good.get(operation.removeprefix("answer-"), {"requestId": "req_gone", "optionId": "yes"})
        await session.respond([answer])
        answered.append(answer)
    elif operation == "answer-all":
        await session.respond(list(good.values()))
        answered += good.values()
    elif operation == "deny":
        approval = good.get("charge", {"requestId": "req_gone"})
        await session.respond([{**approval, "optionId": "deny", "text": "not now"}])
    elif operation == "garbage":
        target = next(iter(good.values()), {"requestId": "req_gone"})
        await session.respond([{"requestId": target["requestId"], "value": {"cents": float("nan")}}])
    elif operation == "again":
        await session.respond([answered[-1] if answered else {"requestId": "req_gone", "optionId": "yes"}])
    elif operation == "send":
        await session.send("go on")
    elif operation == "cancel":
        await session.cancel()
    elif operation == "resume":
        await session.resume()
    elif operation == "clear":
        await session.clear()
    else:
        await session.reset()


@pytest.mark.parametrize("kind", STORES)
@settings(FUZZ, max_examples=50)
@given(operations=st.lists(st.sampled_from(OPERATIONS), min_size=1, max_size=8))
def test_random_orders_of_answers_messages_and_controls_keep_the_session_consistent(
    kind: str, tmp_path: Path, operations: list[str]
) -> None:
    anyio.run(operate, kind, tmp_path, operations)


async def operate(kind: str, folder: Path, operations: list[str]) -> None:
    runs: Counter[str] = Counter()
    answered: list[dict[str, Any]] = []
    async with parked(kind, folder, runs) as session:
        for operation in operations:
            before = await snapshot(session)
            try:
                await apply(operation, session, answered)
            except EveError as exc:
                assert isinstance(exc, SessionError), f"{operation}: {type(exc).__name__}: {exc}"
                await check_consistent(session, before, refused=True)
            else:
                await check_consistent(session, before, refused=False)
    assert all(count == 1 for count in runs.values()), runs
