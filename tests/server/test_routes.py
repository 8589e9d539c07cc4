"""Every route of the session API on a real uvicorn: the HITL flow, and each error with its status."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from eve_py.agent import Agent
from eve_py.protocol.messages import ToolMessage
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
    assert types(events)[-2:] == ["input.requested", "turn.waiting"]
    [request] = events[-2]["data"]["requests"]
    return session_id, request


async def snapshot(served: Served, session_id: str) -> tuple[int, int, str]:
    """What must not change when a request is refused: version, event count, status."""
    record = await served.runtime.store.load(session_id)
    return record.version, record.event_count, record.status


async def test_health_is_public_and_answers_as_eve_does(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client(token=None) as client:
        response = await client.get("/health")
        head = await client.head("/health")
    assert response.status_code == 200
    assert response.json() == {"ok": True, "status": "ready", "workflowId": "eve-py:agent-tools-hitl"}
    assert head.status_code == 200 and head.content == b""


async def test_create_without_message_prewarms_an_idle_session(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        response = await client.post("/session")
        session_id = response.json()["sessionId"]
        info = await client.get(f"/session/{session_id}")
        events = await read_stream(client, session_id, follow=False)

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

        assert body["deliveryId"].startswith("dlv_")
        parked = await read_stream(client, session_id, body["startIndex"])
        assert types(parked) == [
            "turn.started",
            "message.received",
            "step.started",
            "step.completed",
            "input.requested",
            "turn.waiting",
        ]
        assert all(event["meta"]["deliveryIds"] == [body["deliveryId"]] for event in parked)
        requested = parked[4]["data"]
        [request] = requested["requests"]
        assert request["display"] == "select" and request["kind"] == "question"
        assert request["action"]["input"]["ui"] == {"kind": "template"}
        assert "schema" not in request, "the request itself is eve's strict shape"
        extension = requested["extensions"][request["requestId"]]
        assert "pickedIds" in extension["schema"]["properties"]
        info = (await client.get(f"/session/{session_id}")).json()
        assert info["status"] == "waiting"
        assert info["inputRequests"] == [{**request, "schema": extension["schema"]}]
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
            "step.completed",
            "action.result",
            "step.started",
            "message.completed",
            "step.completed",
            "turn.completed",
            "session.waiting",
        ]
        [resolution] = rest[0]["data"]["resolutions"]
        assert (resolution["requestId"], resolution["outcome"]) == (request["requestId"], "answered")
        assert rest[4]["data"]["result"]["toolName"] == "note" and rest[4]["data"]["status"] == "completed"
        assert rest[6]["data"] == {
            "sequence": 0,
            "turnId": body["turnId"],
            "stepIndex": 2,
            "finishReason": "stop",
            "message": "Recorded your pick: tpl_blue.",
        }
        assert rest[-2]["data"] == {"sequence": 0, "turnId": body["turnId"]}

        follow_up = await client.post(f"/session/{session_id}", json={"message": "hello"})
        assert follow_up.status_code == 202
        assert follow_up.json()["turnId"] != body["turnId"]
        last = await read_stream(client, session_id, follow_up.json()["startIndex"])
        assert types(last)[0] == "turn.started" and types(last)[-2:] == ["turn.completed", "session.waiting"]
        assert last[0]["data"]["sequence"] == 1
        assert all(event["meta"]["deliveryIds"] == [follow_up.json()["deliveryId"]] for event in last)

    messages = await runtime.store.read_messages(session_id)
    results = [
        part
        for message in messages
        if isinstance(message, ToolMessage)
        for part in message.content
        if part.tool_call_id == request["requestId"]
    ]
    assert [part.output for part in results] == [PICK_BLUE]  # exactly one result for the parked call


async def test_every_event_line_has_type_data_and_meta(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session_id, _ = await park(client)
        params = {"follow": "false"}
        async with client.stream("GET", f"/session/{session_id}/stream", params=params) as response:
            assert response.headers["content-type"] == "application/x-ndjson; charset=utf-8"
            assert response.headers["x-eve-stream-version"] == "26"
            assert response.headers["x-eve-stream-format"] == "ndjson"
            assert response.headers["x-eve-session-id"] == session_id
            lines = [line async for line in response.aiter_lines()]
        assert response.headers["x-eve-stream-tail-index"] == str(len(lines) - 1)
    for line in lines:
        event = json.loads(line)
        assert list(event) == ["type", "data", "meta"]
        assert {"id", "at"} <= set(event["meta"]) <= {"id", "at", "deliveryIds"}
        assert event["meta"]["id"].startswith("evt_")


async def test_a_message_on_a_waiting_session_dismisses_the_question(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session_id, request = await park(client)
        sent = await client.post(f"/session/{session_id}", json={"message": "never mind, just say hi"})
        assert sent.status_code == 202
        delivery = sent.json()["deliveryId"]
        events = await read_stream(client, session_id, sent.json()["startIndex"], delivery_id=delivery)
    assert types(events)[0] == "input.resolved"
    [resolution] = events[0]["data"]["resolutions"]
    assert (resolution["requestId"], resolution["outcome"]) == (request["requestId"], "ignored")
    # The parked turn ends, the session waits, and the message starts the next turn.
    assert types(events)[1:4] == ["turn.completed", "session.waiting", "turn.started"]
    assert events[3]["meta"]["deliveryIds"] == [delivery] != events[0]["meta"]["deliveryIds"]
    assert types(events)[-2:] == ["turn.completed", "session.waiting"]


async def test_approval_flow_approve_runs_the_executor(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session_id, request = await park(client, "run the guarded echo")
        assert request["display"] == "confirmation"
        assert [o["id"] for o in request["options"]] == ["approve", "deny"]
        approve = {"inputResponses": [{"requestId": request["requestId"], "optionId": "approve"}]}
        answered = await client.post(f"/session/{session_id}", json=approve)
        events = await read_stream(client, session_id, answered.json()["startIndex"])
    [resolved] = [e for e in events if e["type"] == "input.resolved"]
    assert [(r["kind"], r["outcome"]) for r in resolved["data"]["resolutions"]] == [("tool-approval", "approved")]
    [result] = [e for e in events if e["type"] == "action.result"]
    assert result["data"]["result"]["output"]["token"] == "guarded-echo-ok-T4Q9"
    assert "guarded-echo-ok-T4Q9" in [e for e in events if e["type"] == "message.completed"][-1]["data"]["message"]


BAD_BODIES: list[tuple[str, Any, str]] = [
    ("not json", b"{nope", "Invalid JSON body"),
    ("both", {"message": "hi", "inputResponses": [{"requestId": "x", "optionId": "a"}]}, "exactly one of"),
    ("neither", {}, "Expected a non-empty 'message' or a non-empty 'answers' array."),
    ("unknown key", {"message": "hi", "extra": 1}, "extra"),
    ("message not a string", {"message": 5}, "message"),
    ("empty responses", {"inputResponses": []}, "inputResponses"),
    ("response without requestId", {"inputResponses": [{"optionId": "tpl_blue"}]}, "requestId"),
    ("response with unknown key", {"inputResponses": [{"requestId": "x", "choice": 1}]}, "choice"),
    ("bad action", {"inputResponses": [{"requestId": "x", "action": "maybe"}]}, "action"),
    ("array body", [1, 2], "Expected a JSON object."),
    ("null body", b"null", "Expected a JSON object, not null."),
    ("NaN", b'{"inputResponses": [{"requestId": "x", "value": NaN}]}', "NaN is not a JSON number"),
    ("nested too deep", b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ("lone surrogate", b'{"message": "a\\ud800b"}', "lone UTF-16 surrogate"),
    ("file part", {"message": [{"type": "file", "mediaType": "text/plain", "data": "aGk="}]}, "not supported"),
]


@pytest.mark.parametrize(("name", "body", "mentions"), BAD_BODIES, ids=[b[0] for b in BAD_BODIES])
async def test_bad_bodies_get_400_and_change_nothing(hitl_agent: Agent, name: str, body: Any, mentions: str) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session_id, _ = await park(client)
        before = await snapshot(served, session_id)
        if isinstance(body, bytes):
            headers = {"content-type": "application/json"}
            response = await client.post(f"/session/{session_id}", content=body, headers=headers)
        else:
            response = await client.post(f"/session/{session_id}", json=body)
        after = await snapshot(served, session_id)
    expected = 415 if name == "file part" else 400
    assert response.status_code == expected, response.text
    error = response.json()
    assert error["ok"] is False
    assert error["code"] == ("unsupported_media_type" if expected == 415 else "bad_request")
    assert mentions in error["error"]
    assert after == before


async def test_bad_create_body_gets_400_and_creates_nothing(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        bodies: list[Any] = [
            {"message": ["a"]},
            {"msg": "hi"},
            {"clientContext": "no message"},
            {"message": "a\ud800b"},
        ]
        for body in bodies:
            raw = json.dumps(body).encode()
            response = await client.post("/session", content=raw, headers={"content-type": "application/json"})
            assert response.status_code == 400, (body, response.text)
            assert response.json()["code"] == "bad_request"
        response = await client.post("/session", content=b"[", headers={"content-type": "application/json"})
        assert response.status_code == 400
        for api in (served.base + "/v26/eve/v1", served.base + "/eve/v1"):  # `null` is no body on either wire
            null = await client.post(f"{api}/session", content=b"null", headers={"content-type": "application/json"})
            assert (null.status_code, null.json()["error"]) == (400, "Expected a JSON object, not null.")
        text = await client.post("/session", content=b'{"message": "hi"}', headers={"content-type": "text/plain"})
        assert text.status_code == 415
        assert len(served.runtime.store._records) == 0, "no session was left behind"  # type: ignore[attr-defined]


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
            error = response.json()
            assert error["code"] == code
            assert error["requestId"] == response_body["requestId"]
            assert await snapshot(served, session_id) == before

        twice = [{"requestId": request_id, "value": PICK_BLUE}, {"requestId": request_id, "value": PICK_BLUE}]
        response = await client.post(f"/session/{session_id}", json={"inputResponses": twice})
        assert response.status_code == 409
        assert response.json()["code"] == "request_already_answered"
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
        assert again.json()["code"] == "request_already_answered"
        assert await snapshot(served, session_id) == settled


async def test_answers_to_an_idle_session_get_409_not_waiting(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session_id = (await client.post("/session")).json()["sessionId"]
        before = await snapshot(served, session_id)
        response = await client.post(
            f"/session/{session_id}", json={"inputResponses": [{"requestId": "anything", "optionId": "a"}]}
        )
        assert response.status_code == 409
        assert response.json()["code"] == "session_not_waiting"
        assert response.json()["status"] == "idle"
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
        assert response.json()["code"] == "session_not_ready"
        assert response.json()["status"] == "running"
        assert response.json()["error"] == (
            f"Session {session_id!r} is running a turn; send again once it ends (its stream says when). "
            "A turn whose worker died is taken over once that worker's lease expires."
        )
        assert await snapshot(served, session_id) == before
        model.release.set()
        events = await read_stream(client, session_id, created.json()["startIndex"])
        [final] = [e for e in events if e["type"] == "message.completed"]
        assert final["data"]["message"] == "Finally done."


async def test_answers_while_a_turn_runs_get_409_not_waiting_without_python_advice(hitl_agent: Agent) -> None:
    model = GatedModel()
    async with serve(hitl_runtime(hitl_agent, model=model)) as served, served.client() as client:
        session_id = (await client.post("/session", json={"message": "be slow"})).json()["sessionId"]
        with anyio.fail_after(5):
            await model.entered.wait()
        response = await client.post(
            f"/session/{session_id}", json={"inputResponses": [{"requestId": "anything", "optionId": "a"}]}
        )
        model.release.set()
    assert (response.status_code, response.json()["code"]) == (409, "session_not_waiting")
    assert response.json()["error"] == (
        f"Session {session_id!r} is not waiting for input (status 'running') (a turn is running; one whose "
        "worker died is taken over once its lease expires)."
    )


@pytest.mark.parametrize(("method", "suffix"), [("GET", ""), ("GET", "/stream"), ("POST", "/cancel")], ids=str)
async def test_unknown_session_is_404_on_every_read_and_cancel(hitl_agent: Agent, method: str, suffix: str) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        response = await client.request(method, f"/session/ses_nope{suffix}")
    assert response.status_code == 404
    assert response.json() == {
        "ok": False,
        "error": "No session with id 'ses_nope' in this store.",
        "code": "session_not_found",
    }


@pytest.mark.parametrize("suffix", ["", "/clear", "/reset", "/compact"])
async def test_a_message_or_control_for_an_unknown_session_is_409_not_active_as_in_eve(
    hitl_agent: Agent, suffix: str
) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        body = {"message": "hi"} if suffix == "" else {}
        response = await client.post(f"/session/ses_nope{suffix}", json=body)
    assert response.status_code == 409
    assert response.json() == {
        "ok": False,
        "error": "No session with id 'ses_nope' in this store.",
        "code": "session_not_active",
    }


async def test_a_session_made_outside_the_server_is_said_to_belong_to_no_principal(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session = await served.runtime.create_session()  # as `eve-py chat` or `run` make one
        before = await snapshot(served, session.id)
        read = await client.get(f"/session/{session.id}")
        sent = await client.post(f"/session/{session.id}", json={"message": "hi"})
        after = await snapshot(served, session.id)
    assert (read.status_code, read.json()["code"]) == (404, "session_not_found")
    assert (sent.status_code, sent.json()["code"]) == (409, "session_not_active")
    for response in (read, sent):
        assert response.json()["error"].startswith(
            f"Session {session.id!r} is in this store but belongs to no API principal: it was made outside the server"
        )
    assert after == before


async def test_unknown_route_and_method_answer_json(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        missing = await client.get("/sessions")
        wrong_method = await client.delete("/session")
    assert missing.status_code == 404
    assert missing.json()["code"] == "not_found"
    assert wrong_method.status_code == 405
    assert wrong_method.json()["code"] == "method_not_allowed"


async def test_a_body_over_the_limit_gets_413(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent), max_body_bytes=1000) as served, served.client() as client:
        response = await client.post("/session", json={"message": "x" * 2000})
        sessions_after = await client.post("/session")
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
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
    assert [e for e in events if e["type"] == "message.completed"][-1]["data"]["message"] == (
        "Recorded your pick: tpl_green."
    )


async def test_a_blank_message_is_a_400(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        created = await client.post("/session", json={"message": "   "})
        assert created.status_code == 400
        assert created.json()["code"] == "bad_request"
        assert "message must contain some text" in created.json()["error"]


async def test_a_message_to_a_waiting_session_reports_the_new_turns_id(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        created = (await client.post("/session", json={"message": "help me pick a template"})).json()
        await read_stream(client, created["sessionId"], created["startIndex"])

        accepted = (await client.post(f"/session/{created['sessionId']}", json={"message": "hello"})).json()
        events = await read_stream(
            client, created["sessionId"], accepted["startIndex"], delivery_id=accepted["deliveryId"]
        )

    [started] = [e for e in events if e["type"] == "turn.started"]
    assert accepted["turnId"] == started["data"]["turnId"] != created["turnId"]
