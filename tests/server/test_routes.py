"""Every route of the session API on a real uvicorn: the HITL flow, and each error with its status."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from eve_py.agent import Agent
from eve_py.models.messages import ToolMessage
from eve_py.sessions import SQLiteSessionStore
from tests.server.helpers import PICK_BLUE, GatedModel, Served, hitl_runtime, read_stream, serve

pytestmark = pytest.mark.anyio


def types(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


async def park(client: httpx.AsyncClient, message: str = "help me pick a template") -> tuple[str, dict[str, Any]]:
    """Create a session with `message`; follow it until it parks; the session id and its one request."""
    created = await client.post("/session", json={"message": message})
    assert created.status_code == 202, created.text
    session_id = created.json()["sessionId"]
    events = await read_stream(client, session_id, created.json()["startIndex"])
    assert types(events)[-1] == "session.waiting"
    [request] = events[-3]["data"]["requests"]
    return session_id, request


async def snapshot(served: Served, session_id: str) -> tuple[int, int, str]:
    """What must not change when a request is refused: version, event count, status."""
    record = await served.runtime.store.load(session_id)
    return record.version, record.event_count, record.status


async def test_health_is_public_and_names_the_agent(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client(token=None) as client:
        response = await client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"ok": True, "status": "ok", "agent": "agent-tools-hitl"}


async def test_create_without_message_prewarms_an_idle_session(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        response = await client.post("/session")
        session_id = response.json()["sessionId"]
        info = await client.get(f"/session/{session_id}")
        events = await read_stream(client, session_id)

    assert response.status_code == 202
    assert response.json() == {"ok": True, "sessionId": session_id, "status": "accepted"}
    assert response.headers["x-eve-session-id"] == session_id
    assert info.json()["status"] == "idle"
    assert info.json()["inputRequests"] == []
    assert types(events) == ["session.started"]


async def test_full_hitl_flow_over_http_picker_then_note_then_completed(hitl_agent: Agent) -> None:
    runtime = hitl_runtime(hitl_agent)
    async with serve(runtime) as served, served.client() as client:
        created = await client.post("/session", json={"message": "help me pick a template"})
        body = created.json()
        session_id = body["sessionId"]
        assert created.status_code == 202
        assert created.headers["x-eve-session-id"] == session_id
        assert body["startIndex"] == 1 and body["turnId"].startswith("turn_")

        parked = await read_stream(client, session_id, body["startIndex"])
        assert types(parked) == [
            "turn.started",
            "message.received",
            "step.started",
            "input.requested",
            "turn.completed",
            "session.waiting",
        ]
        [request] = parked[3]["data"]["requests"]
        assert request["display"] == "select"
        assert request["action"]["input"]["ui"] == {"kind": "template"}
        assert "pickedIds" in request["schema"]["properties"]
        info = (await client.get(f"/session/{session_id}")).json()
        assert info["status"] == "waiting"
        assert info["inputRequests"] == [request]
        assert info["turn"]["status"] == "waiting"

        answered = await client.post(
            f"/session/{session_id}",
            json={"inputResponses": [{"requestId": request["requestId"], "value": PICK_BLUE}]},
        )
        assert answered.status_code == 202
        assert answered.json()["turnId"] == body["turnId"]
        assert answered.json()["startIndex"] == 7
        rest = await read_stream(client, session_id, answered.json()["startIndex"])
        assert types(rest) == [
            "input.resolved",
            "step.started",
            "actions.requested",
            "action.result",
            "step.started",
            "message.completed",
            "turn.completed",
        ]
        assert rest[3]["data"]["toolName"] == "note"
        assert rest[5]["data"]["text"] == "Recorded your pick: tpl_blue."
        assert rest[-1]["data"] == {"turnId": body["turnId"], "status": "completed"}

        follow_up = await client.post(f"/session/{session_id}", json={"message": "hello"})
        assert follow_up.status_code == 202
        assert follow_up.json()["turnId"] != body["turnId"]
        last = await read_stream(client, session_id, follow_up.json()["startIndex"])
        assert types(last)[0] == "turn.started" and types(last)[-1] == "turn.completed"

    record = await runtime.store.load(session_id)
    results = [
        part
        for message in record.messages
        if isinstance(message, ToolMessage)
        for part in message.content
        if part.tool_call_id == request["requestId"]
    ]
    assert [part.output for part in results] == [PICK_BLUE]  # exactly one result for the parked call


async def test_every_event_line_has_type_data_and_meta(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session_id, _ = await park(client)
        async with client.stream("GET", f"/session/{session_id}/stream") as response:
            assert response.headers["content-type"] == "application/x-ndjson"
            assert response.headers["x-eve-stream-version"] == "1"
            assert response.headers["x-eve-session-id"] == session_id
            lines = [line async for line in response.aiter_lines()]
    for line in lines:
        event = json.loads(line)
        assert set(event) == {"type", "data", "meta"}
        assert set(event["meta"]) == {"id", "at"}
        assert event["meta"]["id"].startswith("evt_")


async def test_a_message_on_a_waiting_session_dismisses_the_question(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session_id, request = await park(client)
        sent = await client.post(f"/session/{session_id}", json={"message": "never mind, just say hi"})
        assert sent.status_code == 202
        events = await read_stream(client, session_id, sent.json()["startIndex"])
    assert types(events)[0] == "input.resolved"
    assert events[0]["data"]["dismissed"] == [request["requestId"]]
    assert types(events)[-1] == "turn.completed"


async def test_approval_flow_approve_runs_the_executor(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session_id, request = await park(client, "run the guarded echo")
        assert request["display"] == "confirmation"
        assert [o["id"] for o in request["options"]] == ["approve", "deny"]
        approve = {"inputResponses": [{"requestId": request["requestId"], "optionId": "approve"}]}
        answered = await client.post(f"/session/{session_id}", json=approve)
        events = await read_stream(client, session_id, answered.json()["startIndex"])
    [result] = [e for e in events if e["type"] == "action.result"]
    assert result["data"]["output"]["token"] == "guarded-echo-ok-T4Q9"
    assert "guarded-echo-ok-T4Q9" in [e for e in events if e["type"] == "message.completed"][-1]["data"]["text"]


BAD_BODIES: list[tuple[str, Any, str]] = [
    ("not json", b"{nope", "not valid JSON"),
    ("both", {"message": "hi", "inputResponses": [{"requestId": "x", "optionId": "a"}]}, "exactly one"),
    ("neither", {}, "exactly one"),
    ("unknown key", {"message": "hi", "extra": 1}, "extra"),
    ("message not a string", {"message": 5}, "message"),
    ("empty responses", {"inputResponses": []}, "inputResponses"),
    ("response without requestId", {"inputResponses": [{"optionId": "tpl_blue"}]}, "requestId"),
    ("response with unknown key", {"inputResponses": [{"requestId": "x", "choice": 1}]}, "choice"),
    ("bad action", {"inputResponses": [{"requestId": "x", "action": "maybe"}]}, "action"),
    ("array body", [1, 2], "(body)"),
]


@pytest.mark.parametrize(("name", "body", "mentions"), BAD_BODIES, ids=[b[0] for b in BAD_BODIES])
async def test_bad_bodies_get_400_and_change_nothing(hitl_agent: Agent, name: str, body: Any, mentions: str) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session_id, _ = await park(client)
        before = await snapshot(served, session_id)
        if isinstance(body, bytes):
            response = await client.post(f"/session/{session_id}", content=body)
        else:
            response = await client.post(f"/session/{session_id}", json=body)
        after = await snapshot(served, session_id)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "bad_request"
    assert mentions in error["message"]
    assert after == before


async def test_bad_create_body_gets_400_and_creates_nothing(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        for body in ({"message": ["a"]}, {"msg": "hi"}):
            response = await client.post("/session", json=body)
            assert response.status_code == 400
            assert response.json()["error"]["code"] == "bad_request"
        response = await client.post("/session", content=b"[")
        assert response.status_code == 400


async def test_answer_errors_409_and_422_change_nothing(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session_id, request = await park(client)
        request_id = request["requestId"]
        before = await snapshot(served, session_id)

        cases: list[tuple[dict[str, Any], int, str]] = [
            ({"requestId": request_id, "optionId": "tpl_purple"}, 422, "invalid_answer"),
            ({"requestId": request_id, "value": {"pickedIds": "tpl_blue"}}, 422, "invalid_answer"),
            ({"requestId": request_id, "value": {"pickedIds": ["tpl_black"]}}, 422, "invalid_answer"),
            ({"requestId": request_id}, 422, "invalid_answer"),
            ({"requestId": "call-that-never-was", "optionId": "tpl_blue"}, 422, "unknown_request"),
        ]
        for response_body, status, code in cases:
            response = await client.post(f"/session/{session_id}", json={"inputResponses": [response_body]})
            assert response.status_code == status, (response_body, response.text)
            error = response.json()["error"]
            assert error["code"] == code
            assert error["requestId"] == response_body["requestId"]
            assert await snapshot(served, session_id) == before

        twice = [{"requestId": request_id, "value": PICK_BLUE}, {"requestId": request_id, "value": PICK_BLUE}]
        response = await client.post(f"/session/{session_id}", json={"inputResponses": twice})
        assert response.status_code == 409
        assert response.json()["error"]["code"] == "request_already_answered"
        assert await snapshot(served, session_id) == before

        answered = await client.post(
            f"/session/{session_id}", json={"inputResponses": [{"requestId": request_id, "value": PICK_BLUE}]}
        )
        assert answered.status_code == 202
        await read_stream(client, session_id, answered.json()["startIndex"])
        settled = await snapshot(served, session_id)

        again = await client.post(
            f"/session/{session_id}", json={"inputResponses": [{"requestId": request_id, "optionId": "tpl_red"}]}
        )
        assert again.status_code == 409
        assert again.json()["error"]["code"] == "request_already_answered"
        assert await snapshot(served, session_id) == settled


async def test_answers_to_an_idle_session_get_409_not_waiting(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session_id = (await client.post("/session")).json()["sessionId"]
        before = await snapshot(served, session_id)
        response = await client.post(
            f"/session/{session_id}", json={"inputResponses": [{"requestId": "anything", "optionId": "a"}]}
        )
        assert response.status_code == 409
        assert response.json()["error"]["code"] == "session_not_waiting"
        assert response.json()["error"]["status"] == "idle"
        assert await snapshot(served, session_id) == before


async def test_a_message_while_a_turn_runs_gets_409_not_ready(hitl_agent: Agent) -> None:
    model = GatedModel()
    async with serve(hitl_runtime(hitl_agent, model=model)) as served, served.client() as client:
        created = await client.post("/session", json={"message": "be slow"})
        session_id = created.json()["sessionId"]
        with anyio.fail_after(5):
            await model.entered.wait()
        before = await snapshot(served, session_id)
        response = await client.post(f"/session/{session_id}", json={"message": "are you there?"})
        assert response.status_code == 409
        assert response.json()["error"]["code"] == "session_not_ready"
        assert response.json()["error"]["status"] == "running"
        assert await snapshot(served, session_id) == before
        model.release.set()
        events = await read_stream(client, session_id, created.json()["startIndex"])
        assert events[-2]["data"]["text"] == "Finally done."


@pytest.mark.parametrize(
    ("method", "suffix"), [("GET", ""), ("POST", ""), ("GET", "/stream"), ("POST", "/cancel")], ids=str
)
async def test_unknown_session_is_404_on_every_route(hitl_agent: Agent, method: str, suffix: str) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        body = {"message": "hi"} if (method, suffix) == ("POST", "") else None
        response = await client.request(method, f"/session/ses_nope{suffix}", json=body)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "session_not_found"


async def test_unknown_route_and_method_answer_json(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        missing = await client.get("/sessions")
        wrong_method = await client.delete("/session")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"
    assert wrong_method.status_code == 405
    assert wrong_method.json()["error"]["code"] == "method_not_allowed"


async def test_a_body_over_the_limit_gets_413(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent), max_body_bytes=1000) as served, served.client() as client:
        response = await client.post("/session", json={"message": "x" * 2000})
        sessions_after = await client.post("/session")
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    assert sessions_after.status_code == 202


async def test_sqlite_store_serves_the_same_flow(hitl_agent: Agent, tmp_path: Any) -> None:
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    try:
        async with serve(hitl_runtime(hitl_agent, store=store)) as served, served.client() as client:
            session_id, request = await park(client)
            answered = await client.post(
                f"/session/{session_id}",
                json={"inputResponses": [{"requestId": request["requestId"], "optionId": "tpl_green"}]},
            )
            events = await read_stream(client, session_id, answered.json()["startIndex"])
    finally:
        await store.aclose()
    assert events[-2]["data"]["text"] == "Recorded your pick: tpl_green."


async def test_a_blank_message_is_a_400(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        created = await client.post("/session", json={"message": "   "})
        assert created.status_code == 400
        assert created.json()["error"]["code"] == "bad_request"
        assert "message must contain some text" in created.json()["error"]["message"]


async def test_a_message_to_a_waiting_session_reports_the_new_turns_id(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        created = (await client.post("/session", json={"message": "help me pick a template"})).json()
        await read_stream(client, created["sessionId"], created["startIndex"])

        accepted = (await client.post(f"/session/{created['sessionId']}", json={"message": "hello"})).json()
        events = await read_stream(client, created["sessionId"], accepted["startIndex"])

    [started] = [e for e in events if e["type"] == "turn.started"]
    assert accepted["turnId"] == started["data"]["turnId"] != created["turnId"]
