"""Who answered: every accepted answer records its principal (`respond(by=...)`, default `local`)."""

from __future__ import annotations

import pytest

from eve_py import Runtime, load_agent
from eve_py.agent import load_mock_model
from eve_py.errors import UsageError
from eve_py.protocol.events import InputResolved
from eve_py.sessions import SessionStore
from tests.conftest import HITL_APP

pytestmark = pytest.mark.anyio


async def test_each_answer_records_who_gave_it_across_a_restart(store: SessionStore) -> None:
    runtime = Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)
    session = await runtime.create_session()
    echo, colour = (await session.send("review my page")).input_requests

    waiting = await session.respond([{"requestId": colour.request_id, "optionId": "blue"}], by="alice", settle=False)
    assert waiting.status == "waiting"
    restarted = await Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store).get_session(
        session.id
    )
    assert restarted.record.pending is not None and restarted.record.pending.answered_by == {colour.request_id: "alice"}
    done = await restarted.respond([{"requestId": echo.request_id, "optionId": "approve"}])

    assert done.status == "completed"
    resolved = [r for e in await restarted.events() if isinstance(e, InputResolved) for r in e.data.resolutions]
    assert [(r.request_id, r.outcome, r.answered_by) for r in resolved] == [
        (colour.request_id, "answered", "alice"),
        (echo.request_id, "approved", "local"),
    ]


@pytest.mark.parametrize("by", ["", "  ", 7])
async def test_by_must_name_someone(by: object) -> None:
    session = await Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP)).create_session()
    [request] = (await session.send("run the guarded echo")).input_requests

    with pytest.raises(UsageError, match="respond\\(by=...\\) names who answers"):
        await session.respond([{"requestId": request.request_id, "optionId": "approve"}], by=by)  # type: ignore[arg-type]

    assert session.input_requests == [request]
