"""eve's session controls on eve-py: clear, reset, compact; and a turn's clientContext and outputSchema."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from eve_py.agent import Agent
from tests.server.helpers import GatedModel, hitl_runtime, read_stream, serve

pytestmark = pytest.mark.anyio


def types(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


async def test_clear_drops_the_history_and_cancels_a_parked_turn_but_keeps_the_session(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        created = (await client.post("/session", json={"message": "help me pick a template"})).json()
        session_id = created["sessionId"]
        await read_stream(client, session_id, created["startIndex"])
        before = await served.runtime.store.load(session_id)

        cleared = await client.post(f"/session/{session_id}/clear")
        events = await read_stream(client, session_id, before.event_count, follow=False)
        record = await served.runtime.store.load(session_id)
        conversation = await (await served.runtime.get_session(session_id)).messages()
        again = await client.post(f"/session/{session_id}", json={"message": "hello"})
        after = await read_stream(client, session_id, again.json()["startIndex"])

    assert cleared.status_code == 202
    assert cleared.json() == {"ok": True, "sessionId": session_id, "status": "accepted"}
    assert types(events) == [
        "input.resolved",
        "turn.cancelled",
        "session.waiting",
        "context.cleared",
        "session.waiting",
    ]
    assert events[3]["data"]["sessionId"] == session_id
    assert conversation == [] and record.status == "idle"
    assert record.history_start == record.message_count > 0, "the log keeps what was cleared"
    assert types(after)[-2:] == ["turn.completed", "session.waiting"]
    model = served.runtime.model
    assert [m.role for m in model.requests[-1].messages] == ["user"], "the model sees no history"  # type: ignore[attr-defined]


async def test_reset_retires_the_session_for_good(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session_id = (await client.post("/session")).json()["sessionId"]
        reset = await client.post(f"/session/{session_id}/reset", json={"reason": "start over"})
        events = await read_stream(client, session_id, -1, follow=False)
        message = await client.post(f"/session/{session_id}", json={"message": "hi"})
        twice = await client.post(f"/session/{session_id}/reset")
        cleared = await client.post(f"/session/{session_id}/clear")
        record = await served.runtime.store.load(session_id)

    assert reset.json() == {"ok": True, "previousSessionId": session_id, "status": "reset"}
    assert types(events) == ["session.completed"]
    assert (message.status_code, message.json()["code"]) == (409, "session_not_active")
    assert twice.json() == {"ok": True, "status": "no_active_session"}
    assert cleared.json() == {"ok": True, "status": "no_active_session"}
    assert record.status == "ended"


async def test_compact_is_answered_as_unsupported_and_changes_nothing(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session_id = (await client.post("/session")).json()["sessionId"]
        before = await served.runtime.store.load(session_id)
        compact = await client.post(f"/session/{session_id}/compact")
        after = await served.runtime.store.load(session_id)
    assert compact.status_code == 501
    assert compact.json()["code"] == "unsupported"
    assert after == before


async def test_output_schema_and_client_context_shape_the_turn(hitl_agent: Agent) -> None:
    schema = {
        "type": "object",
        "properties": {"templates": {"type": "array"}, "sawClientContext": {"type": "boolean"}},
        "required": ["templates", "sawClientContext"],
    }
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        body = {"message": "the catalogue as json", "clientContext": ["page: /templates"], "outputSchema": schema}
        created = (await client.post("/session", json=body)).json()
        events = await read_stream(client, created["sessionId"], created["startIndex"])
        off_schema = {"message": "the catalogue as json", "outputSchema": {"type": "array"}}
        failed = (await client.post(f"/session/{created['sessionId']}", json=off_schema)).json()
        failure = await read_stream(client, created["sessionId"], failed["startIndex"])

    [result] = [e for e in events if e["type"] == "result.completed"]
    assert result["data"]["result"] == {"templates": ["tpl_blue", "tpl_red", "tpl_green"], "sawClientContext": True}
    assert types(events)[-2:] == ["turn.completed", "session.waiting"]
    [turn_failed] = [e for e in failure if e["type"] == "turn.failed"]
    assert turn_failed["data"]["code"] == "OUTPUT_INVALID"
    assert "fails the turn's outputSchema" in turn_failed["data"]["message"]
    assert types(failure)[-1] == "session.waiting"


async def test_clear_while_a_turn_runs_is_refused_and_the_turn_goes_on(hitl_agent: Agent) -> None:
    model = GatedModel()
    async with serve(hitl_runtime(hitl_agent, model=model)) as served, served.client() as client:
        created = (await client.post("/session", json={"message": "be slow"})).json()
        with anyio.fail_after(5):
            await model.entered.wait()
        refused = await client.post(f"/session/{created['sessionId']}/clear")
        model.release.set()
        events = await read_stream(client, created["sessionId"], created["startIndex"])
    assert (refused.status_code, refused.json()["code"]) == (409, "session_not_ready")
    assert [e["data"]["message"] for e in events if e["type"] == "message.completed"] == ["Finally done."]
    assert types(events)[-2:] == ["turn.completed", "session.waiting"]
