"""A `Session` handle acts on the record it last saw: when another handle wrote since, it still does the right thing."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from eve_py import InputResponse, RequestAlreadyAnsweredError, Runtime, load_agent
from eve_py.agent import load_mock_model
from eve_py.errors import StoreUnavailableError
from eve_py.protocol import Event, InputResolved
from eve_py.protocol.messages import Message
from eve_py.sessions import ForwardingStore, SessionRecord, SessionStore
from tests.conftest import HITL_APP

pytestmark = pytest.mark.anyio

PICK = {"pickedIds": ["tpl_green"]}


def runtime_on(store: SessionStore) -> Runtime:
    return Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)


async def test_a_handle_that_saw_the_session_idle_answers_what_another_handle_parked(store: SessionStore) -> None:
    runtime = runtime_on(store)
    first = await runtime.create_session()
    second = await runtime.get_session(first.id)
    [request] = (await first.send("help me pick a template")).input_requests
    assert second.status == "idle"  # as it last saw it

    done = await second.respond([InputResponse(request_id=request.request_id, value=PICK)])

    assert done.status == "completed" and second.status == "idle"
    assert "tpl_green" in (done.message or "")


async def test_a_handle_that_saw_the_request_open_is_told_another_handle_answered_it(store: SessionStore) -> None:
    runtime = runtime_on(store)
    first = await runtime.create_session()
    [request] = (await first.send("help me pick a template")).input_requests
    second = await runtime.get_session(first.id)
    await first.respond([InputResponse(request_id=request.request_id, value=PICK)])
    assert second.status == "waiting"  # as it last saw it

    with pytest.raises(RequestAlreadyAnsweredError):
        await second.respond([InputResponse(request_id=request.request_id, value={"pickedIds": ["tpl_red"]})])

    events = await first.events()
    [resolved] = [e for e in events if isinstance(e, InputResolved)]
    [resolution] = resolved.data.resolutions
    assert resolution.response is not None and resolution.response.value == PICK


async def test_a_message_through_a_stale_handle_dismisses_the_batch_another_handle_parked(
    store: SessionStore,
) -> None:
    runtime = runtime_on(store)
    first = await runtime.create_session()
    second = await runtime.get_session(first.id)
    [request] = (await first.send("help me pick a template")).input_requests

    await second.send("never mind, something else")

    events = await second.events()
    [resolved] = [e for e in events if isinstance(e, InputResolved)]
    [resolution] = resolved.data.resolutions
    assert resolution.request_id == request.request_id and resolution.outcome == "ignored"
    assert len([e for e in events if e.type == "turn.started"]) == 2


class DroppedAfterCommit(ForwardingStore):
    """Stores the next commit, then reports the connection lost (the ambiguous outcome of an outage)."""

    armed = False

    async def commit(
        self, record: SessionRecord, events: Sequence[Event], messages: Sequence[Message] = (), *, durable: bool = True
    ) -> SessionRecord:
        stored = await self.inner.commit(record, events, messages, durable=durable)
        if self.armed:
            self.armed = False
            raise StoreUnavailableError("the connection was lost under the commit")
        return stored


async def test_a_store_failing_under_an_answer_is_reported_as_such_not_retried(store: SessionStore) -> None:
    dropping = DroppedAfterCommit(store)
    session = await runtime_on(dropping).create_session()
    [request] = (await session.send("help me pick a template")).input_requests
    dropping.armed = True

    # The answer was stored; the caller is told the store failed (and to load before repeating),
    # not that its own answer was "already answered".
    with pytest.raises(StoreUnavailableError):
        await session.respond([InputResponse(request_id=request.request_id, value=PICK)])

    record = await store.load(session.id)
    assert record.pending is not None and request.request_id in record.pending.answers
