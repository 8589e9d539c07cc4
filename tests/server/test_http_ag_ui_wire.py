"""AG-UI and eve's wire on one store: a session parked through one is answered through the other, once.

And `/ag-ui` (also at `/ag-ui/{agent}`) is guarded like the session routes: tokens, origin, body
size and type.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from eve_py.agent import Agent
from tests.server.helpers import ALICE, hitl_runtime, read_stream, serve
from tests.server.test_http_ag_ui import client, interrupts, text, types
from tests.server.test_http_ag_ui_frontend import BACKGROUND, frames, open_call, post, tool_message, user

pytestmark = pytest.mark.anyio

EVIL = "http://evil.example"


def tool_results(messages: list[Any], call_id: str) -> list[Any]:
    return [m for m in messages if m["role"] == "tool" and m["toolCallId"] == call_id]


async def test_parked_through_ag_ui_answered_through_eve_s_wire(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http, served.client() as eve:
        history = [user("run the guarded echo")]
        [approval] = interrupts(frames(await post(http, "t-cross", history)))
        body = {"inputResponses": [{"requestId": approval["id"], "optionId": "approve"}]}
        answered = await eve.post("/session/t-cross", json=body)
        lines = await read_stream(eve, "t-cross", answered.json()["startIndex"])
        entry = {"interruptId": approval["id"], "status": "resolved", "payload": {"approved": True}}
        late = frames(await post(http, "t-cross", history, resume=[entry]))
        snapshot = frames(await post(http, "t-cross", []))
    assert answered.status_code == 202
    assert lines[-1]["type"] in ("session.waiting", "turn.completed")
    assert (late[-1]["type"], late[-1]["code"]) == ("RUN_ERROR", "request_already_answered")
    messages = snapshot[1]["messages"]
    assert len(tool_results(messages, approval["toolCallId"])) == 1
    assert messages[-1]["content"] == "The guarded echo ran and returned the token guarded-echo-ok-T4Q9."


async def test_parked_through_eve_s_wire_answered_through_ag_ui(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http, served.client() as eve:
        created = (await eve.post("/session", json={"message": "help me pick a template"})).json()
        session_id = created["sessionId"]
        parked = await read_stream(eve, session_id, created["startIndex"])
        request_id = parked[-2]["data"]["requests"][0]["requestId"]
        reported = interrupts(frames(await post(http, session_id, [])))
        entry = {"interruptId": request_id, "status": "resolved", "payload": {"pickedIds": ["tpl_red"]}}
        done = frames(await post(http, session_id, [user("help me pick a template")], resume=[entry]))
        body = {"inputResponses": [{"requestId": request_id, "optionId": "tpl_blue"}]}
        late = await eve.post(f"/session/{session_id}", json=body)
    assert [i["id"] for i in reported] == [request_id]
    assert text(done) == "Recorded your pick: tpl_red."
    assert late.status_code == 409


async def test_a_frontend_tool_call_answered_through_eve_s_wire(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http, served.client() as eve:
        history = [user("change the background")]
        parked = frames(await post(http, "t-front-wire", history, tools=[BACKGROUND]))
        call = open_call(parked)
        call_id = call["toolCalls"][0]["id"]
        body = {"inputResponses": [{"requestId": call_id, "value": {"applied": "navy"}}]}
        answered = await eve.post("/session/t-front-wire", json=body)
        await read_stream(eve, "t-front-wire", answered.json()["startIndex"])
        before = (await served.runtime.get_session("t-front-wire")).record.event_count
        resent = frames(await post(http, "t-front-wire", [*history, call, tool_message(call_id, '{"applied":"red"}')]))
        after = (await served.runtime.get_session("t-front-wire")).record.event_count
        snapshot = frames(await post(http, "t-front-wire", []))
    assert answered.status_code == 202
    assert types(resent) == ["RUN_STARTED", "RUN_FINISHED"] and before == after
    [result] = tool_results(snapshot[1]["messages"], call_id)
    assert json.loads(result["content"]) == {"applied": "navy"}


async def test_ag_ui_at_the_agent_s_name_and_not_at_another(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        body = {"threadId": "t-named", "runId": "r1", "messages": [user("tell me a story")]}
        named = await http.post(f"/ag-ui/{hitl_agent.name}", json=body)
        other = await http.post("/ag-ui/someone-else", json=body)
        capabilities = await http.get(f"/ag-ui/{hitl_agent.name}")
    assert text(frames(named)).startswith("Once upon a time")
    assert (other.status_code, other.json()["code"]) == (404, "agent_not_found")
    assert hitl_agent.name in other.json()["error"]
    assert capabilities.json()["humanInTheLoop"]["interrupts"] is True


async def test_ag_ui_is_guarded_like_the_session_routes(hitl_agent: Agent) -> None:
    body = {"threadId": "t-guard", "runId": "r1", "messages": [user("tell me a story")]}
    async with serve(hitl_runtime(hitl_agent), tokens=(), max_body_bytes=2_000) as served:
        async with client(served, None) as http:
            foreign = await http.post("/ag-ui", json=body, headers={"origin": EVIL})
            as_text = await http.post("/ag-ui", content=json.dumps(body), headers={"content-type": "text/plain"})
            padding = [user("x" * 500, n) for n in range(5)]
            too_big = await http.post("/ag-ui", json={**body, "messages": padding})
            own = await http.post("/ag-ui", json=body, headers={"origin": served.base})
        stored = len(served.runtime.store._records)  # type: ignore[attr-defined]
    assert (foreign.status_code, foreign.json()["code"]) == (403, "forbidden_origin")
    assert (as_text.status_code, as_text.json()["code"]) == (415, "unsupported_media_type")
    assert too_big.status_code == 413
    assert own.status_code == 200 and stored == 1  # only the run from the server's own page started anything
    async with serve(hitl_runtime(hitl_agent)) as served, client(served, "not-a-token") as stranger:
        refused = await stranger.post("/ag-ui", json=body)
        capabilities = await stranger.get("/ag-ui")
    assert refused.status_code == capabilities.status_code == 401
    assert ALICE not in refused.text
