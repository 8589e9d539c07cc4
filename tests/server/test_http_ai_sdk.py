"""`POST /ai-sdk/chat` over HTTP: the AI SDK's UI message stream on eve-py sessions, as its transport reads it.

The real `ai` client drives the same route in `tests/ai_sdk_client/`; these tests check what the
wire carries, what a resent or contradicting history does, and what is (and is not) stored.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from eve_py.agent import Agent
from eve_py.protocol import messages as eve
from eve_py.protocol import new_event
from eve_py.protocol.payloads import (
    ActionResultData,
    ActionResultError,
    StepStartedData,
    ToolResultAction,
    TurnFailedData,
)
from eve_py.server._ai_sdk_chunks import ChunkProjection
from tests.server.helpers import ALICE, BOB, PICK_BLUE, Served, hitl_runtime, read_stream, serve

pytestmark = pytest.mark.anyio

Chunk = dict[str, Any]
UiMessage = dict[str, Any]


def client(served: Served, token: str | None = ALICE) -> httpx.AsyncClient:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return httpx.AsyncClient(base_url=served.base, headers=headers, timeout=10.0)


def user(text: str, message_id: str = "u1") -> UiMessage:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


async def post(http: httpx.AsyncClient, chat: str, messages: list[UiMessage]) -> httpx.Response:
    body = {"id": chat, "messages": messages, "trigger": "submit-message"}
    if messages and messages[-1]["role"] == "assistant":
        body["messageId"] = messages[-1]["id"]
    with anyio.fail_after(10):
        return await http.post("/ai-sdk/chat", json=body)


async def chat(http: httpx.AsyncClient, chat_id: str, messages: list[UiMessage]) -> list[Chunk]:
    """One request: its chunks, decoded from the SSE stream (which ends with `[DONE]`)."""
    response = await post(http, chat_id, messages)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    data = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
    assert data[-1] == "[DONE]"
    return [json.loads(item) for item in data[:-1]]


def assistant(chunks: list[Chunk], **answers: dict[str, Any]) -> UiMessage:
    """The assistant message the client built from `chunks`, with `answers` (call id -> part fields) applied."""
    parts: list[dict[str, Any]] = []
    for chunk in chunks:
        if chunk["type"] == "start-step":
            parts.append({"type": "step-start"})
        if chunk["type"] == "tool-input-available":
            parts.append(
                {"type": f"tool-{chunk['toolName']}", "toolCallId": chunk["toolCallId"], "input": chunk["input"]}
            )
            parts[-1]["state"] = "input-available"
        if chunk["type"] == "tool-approval-request":
            [part] = [p for p in parts if p.get("toolCallId") == chunk["toolCallId"]]
            part |= {"state": "approval-requested", "approval": {"id": chunk["approvalId"]}}
    for part in parts:
        part |= answers.get(part.get("toolCallId", ""), {})
    return {"id": chunks[0]["messageId"], "role": "assistant", "parts": parts}


def picked(ids: list[str]) -> dict[str, Any]:
    return {"state": "output-available", "output": {"pickedIds": ids}}


def approved(approval_id: str, yes: bool = True, reason: str | None = None) -> dict[str, Any]:
    decision: dict[str, Any] = {"id": approval_id, "approved": yes} | ({"reason": reason} if reason else {})
    return {"state": "approval-responded", "approval": decision}


def text(chunks: list[Chunk]) -> str:
    return "".join(c["delta"] for c in chunks if c["type"] == "text-delta")


def types(chunks: list[Chunk]) -> list[str]:
    return [c["type"] for c in chunks]


def first(chunks: list[Chunk], kind: str) -> Chunk:
    return next(c for c in chunks if c["type"] == kind)


async def event_count(served: Served, session_id: str) -> int:
    return (await served.runtime.store.load(session_id)).event_count


async def test_a_picker_streams_as_an_open_client_tool_call_and_its_output_answers_it(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        first_turn = [user("help me pick a template")]
        parked = await chat(http, "c-pick", first_turn)
        call = first(parked, "tool-input-available")
        answered = assistant(parked, **{call["toolCallId"]: picked(["tpl_green"])})
        done = await chat(http, "c-pick", [*first_turn, answered])
        session = await served.runtime.get_session("c-pick")

    assert types(parked) == ["start", "start-step", "tool-input-start", "tool-input-available", "finish-step", "finish"]
    assert parked[-1]["finishReason"] == "tool-calls"
    assert call["toolName"] == "ask_question" and call["input"]["ui"] == {"kind": "template"}
    meta = call["toolMetadata"]["eve"]
    assert (meta["kind"], meta["requestId"], meta["responseSchema"]["required"]) == (
        "question",
        call["toolCallId"],
        ["pickedIds"],
    )
    assert done[0] == {"type": "start", "messageId": answered["id"]}, "the answer continues the same message"
    assert first(done, "tool-input-available")["toolName"] == "note"
    assert text(done) == "Recorded your pick: tpl_green."
    assert done[-1] == {"type": "finish", "finishReason": "stop"}
    assert session.status == "idle"


async def test_an_approval_is_a_tool_approval_request_and_runs_once_however_often_it_is_resent(
    hitl_agent: Agent,
) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        history = [user("run the guarded echo")]
        parked = await chat(http, "c-echo", history)
        request = first(parked, "tool-approval-request")
        history.append(assistant(parked, **{request["toolCallId"]: approved(request["approvalId"])}))
        done = await chat(http, "c-echo", history)
        before = await event_count(served, "c-echo")
        again = await chat(http, "c-echo", history)
        after = await event_count(served, "c-echo")
        conversation = await (await served.runtime.get_session("c-echo")).messages()

    assert request["approvalId"] == request["toolCallId"] == first(parked, "tool-input-available")["toolCallId"]
    assert first(done, "tool-output-available")["output"] == {"token": "guarded-echo-ok-T4Q9", "echo": "hello"}
    assert text(done) == "The guarded echo ran and returned the token guarded-echo-ok-T4Q9."
    assert types(again) == ["start", "finish"] and before == after, "a resent answer changes nothing"
    results = [p for m in conversation if isinstance(m, eve.ToolMessage) for p in m.content]
    assert len(results) == 1


async def test_a_denial_is_tool_output_denied_and_the_model_reads_its_reason(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        history = [user("run the guarded echo")]
        parked = await chat(http, "c-deny", history)
        request = first(parked, "tool-approval-request")
        decision = approved(request["approvalId"], yes=False, reason="not today")
        denied = await chat(http, "c-deny", [*history, assistant(parked, **{request["toolCallId"]: decision})])

    assert first(denied, "tool-output-denied") == {"type": "tool-output-denied", "toolCallId": request["toolCallId"]}
    assert text(denied) == "The guarded echo did not run: Tool execution was denied. Reason: not today"


async def test_a_follow_up_message_takes_only_the_new_message_from_the_resent_history(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        history = [user("run the guarded echo")]
        parked = await chat(http, "c-more", history)
        request = first(parked, "tool-approval-request")
        history.append(assistant(parked, **{request["toolCallId"]: approved(request["approvalId"])}))
        await chat(http, "c-more", history)
        story = await chat(http, "c-more", [*history, user("tell me a story", "u2")])
        resent = await chat(http, "c-more", [*history, user("tell me a story", "u2")])
        only_last = await chat(http, "c-more", [user("tell me a json", "u3")])
        conversation = await (await served.runtime.get_session("c-more")).messages()

    assert text(story).startswith("Once upon a time")
    assert types(resent) == ["start", "finish"], "a resent message never starts a second turn"
    assert json.loads(text(only_last))["templates"] == ["tpl_blue", "tpl_red", "tpl_green"]
    users = [m.content for m in conversation if isinstance(m, eve.UserMessage)]
    assert users == ["run the guarded echo", "tell me a story", "tell me a json"]


async def test_a_history_that_contradicts_the_session_is_refused_and_nothing_is_stored(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        history = [user("help me pick a template")]
        call = first(await chat(http, "c-conflict", history), "tool-input-available")
        before = await event_count(served, "c-conflict")
        edited = await post(http, "c-conflict", [user("something else"), user("tell me a story", "u2")])
        longer = await post(http, "c-conflict", [user("a", "x1"), user("b", "x2"), user("c", "x3")])
        call_part = {"type": "tool-note", "toolCallId": "call-never-made", "state": "input-available", "input": {}}
        invented = await post(http, "c-conflict", [*history, {"id": "a", "role": "assistant", "parts": [call_part]}])
        renamed = dict(call_part, toolCallId=call["toolCallId"])
        wrong_tool = await post(http, "c-conflict", [*history, {"id": "a", "role": "assistant", "parts": [renamed]}])
        regenerate = await http.post(
            "/ai-sdk/chat", json={"id": "c-conflict", "messages": history, "trigger": "regenerate-message"}
        )
        edit = {"id": "c-conflict", "messages": [user("help me pick a colour")], "trigger": "submit-message"}
        edited_in_place = await http.post("/ai-sdk/chat", json=edit | {"messageId": "u1"})
        streaming = {"type": "tool-note", "toolCallId": "call-cut-short", "state": "input-streaming"}
        cut_short = [*history, {"id": "a", "role": "assistant", "parts": [streaming]}, user("tell me a story", "u2")]
        after = await event_count(served, "c-conflict")
        story = await chat(http, "c-conflict", cut_short)

    for refused in (edited, longer, invented, wrong_tool, regenerate, edited_in_place):
        assert (refused.status_code, refused.json()["code"]) == (409, "history_conflict"), refused.text
    assert "something else" in edited.json()["error"]
    assert before == after, "nothing of a refused request is stored"
    assert text(story).startswith("Once"), "a call whose input never finished streaming is no contradiction"


async def test_wrong_answers_get_clear_errors_and_lose_nothing(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        history = [user("help me pick a template")]
        parked = await chat(http, "c-wrong", history)
        call_id = first(parked, "tool-input-available")["toolCallId"]
        before = await event_count(served, "c-wrong")
        invalid = await post(http, "c-wrong", [*history, assistant(parked, **{call_id: picked(["tpl_purple"])})])
        not_a_list = {call_id: {"state": "output-available", "output": {"pickedIds": "tpl_blue"}}}
        bad_shape = await post(http, "c-wrong", [*history, assistant(parked, **not_a_list)])
        stranger = {"type": "tool-ask_question", "toolCallId": "call-unknown", "state": "output-available"}
        unknown = await post(http, "c-wrong", [*history, {"id": "a", "role": "assistant", "parts": [stranger]}])
        decision = assistant(parked, **{call_id: approved(call_id)})
        not_an_approval = await post(http, "c-wrong", [*history, decision])
        after = await event_count(served, "c-wrong")
        done = await chat(http, "c-wrong", [*history, assistant(parked, **{call_id: picked(["tpl_blue"])})])

    assert (invalid.status_code, invalid.json()["code"]) == (422, "invalid_answer")
    assert "tpl_purple" in invalid.json()["error"] and invalid.json()["requestId"] == call_id
    assert (bad_shape.status_code, bad_shape.json()["code"]) == (422, "invalid_answer")
    assert (unknown.status_code, unknown.json()["code"]) == (422, "unknown_request")
    assert "call-unknown" in unknown.json()["error"]
    assert (not_an_approval.status_code, not_an_approval.json()["code"]) == (422, "unknown_request")
    assert before == after, "nothing of a refused answer is stored"
    assert text(done) == "Recorded your pick: tpl_blue."


async def test_answers_and_a_new_message_in_one_request_are_refused(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        history = [user("help me pick a template")]
        parked = await chat(http, "c-both", history)
        call_id = first(parked, "tool-input-available")["toolCallId"]
        both = await post(
            http, "c-both", [*history, assistant(parked, **{call_id: picked(["tpl_red"])}), user("hi", "u2")]
        )
        session = await served.runtime.get_session("c-both")

    assert (both.status_code, both.json()["code"]) == (409, "history_conflict")
    assert session.status == "waiting"


async def test_a_partial_answer_keeps_the_rest_of_the_batch_open(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        history = [user("compare two layouts")]
        parked = await chat(http, "c-partial", history)
        first_call, second_call = [c["toolCallId"] for c in parked if c["type"] == "tool-input-available"]
        half = await chat(http, "c-partial", [*history, assistant(parked, **{first_call: picked(["tpl_red"])})])
        waiting = [r.action.call_id for r in (await served.runtime.get_session("c-partial")).input_requests]
        both = {first_call: picked(["tpl_red"]), second_call: {"state": "output-available", "output": "blue"}}
        done = await chat(http, "c-partial", [*history, assistant(parked, **both)])

    assert half[-1] == {"type": "finish", "finishReason": "tool-calls"} and waiting == [second_call]
    assert text(done) == "First layout: tpl_red; second layout: blue."


async def test_a_chat_belongs_to_the_token_that_made_it_and_the_body_is_checked(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent), max_body_bytes=4096) as served, client(served) as alice:
        await chat(alice, "c-mine", [user("tell me a story")])
        async with client(served, BOB) as bob, client(served, None) as nobody:
            theirs = await post(bob, "c-mine", [user("tell me a story")])
            anonymous = await post(nobody, "c-mine", [user("tell me a story")])
        too_large = await post(alice, "c-big", [user("x" * 5000)])
        not_json = await alice.post("/ai-sdk/chat", content=b"{}", headers={"content-type": "text/plain"})
        malformed = await alice.post("/ai-sdk/chat", json={"id": "c-mine"})
        bad_id = await post(alice, "", [user("hi")])
        file_part = {
            "id": "u9",
            "role": "user",
            "parts": [{"type": "file", "url": "data:,x", "mediaType": "text/plain"}],
        }
        a_file = await post(alice, "c-file", [file_part])

    assert (theirs.status_code, theirs.json()["code"]) == (404, "session_not_found")
    assert anonymous.status_code == 401
    assert (too_large.status_code, too_large.json()["code"]) == (413, "payload_too_large")
    assert (not_json.status_code, not_json.json()["code"]) == (415, "unsupported_media_type")
    assert (malformed.status_code, malformed.json()["code"]) == (400, "bad_request")
    assert (bad_id.status_code, bad_id.json()["code"]) == (400, "bad_request")
    assert (a_file.status_code, a_file.json()["code"]) == (415, "unsupported_media_type")


async def test_a_request_from_another_site_is_refused_without_tokens(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent), tokens=()) as served, client(served, None) as http:
        body = {"id": "c-evil", "messages": [user("tell me a story")], "trigger": "submit-message"}
        evil = await http.post("/ai-sdk/chat", json=body, headers={"origin": "http://evil.example"})
        own = await http.post("/ai-sdk/chat", json=body, headers={"origin": served.base})

    assert (evil.status_code, evil.json()["code"]) == (403, "forbidden_origin")
    assert own.status_code == 200 and "Once" in own.text


async def test_a_call_parked_here_is_answered_on_eves_wire_and_the_other_way_round(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http, served.client() as wire:
        history = [user("help me pick a template")]
        parked = await chat(http, "c-cross", history)
        request_id = first(parked, "tool-input-available")["toolMetadata"]["eve"]["requestId"]
        answer = {"inputResponses": [{"requestId": request_id, "value": PICK_BLUE}]}
        accepted = await wire.post("/session/c-cross", json=answer)
        assert accepted.status_code == 202, accepted.text
        await read_stream(wire, "c-cross", accepted.json()["startIndex"])
        stale = assistant(parked)  # this client never saw the answer: its call is still open here
        story = await chat(http, "c-cross", [*history, stale, user("tell me a story", "u2")])

        created = await wire.post("/session", json={"message": "run the guarded echo"})
        session_id = created.json()["sessionId"]
        await read_stream(wire, session_id, delivery_id=created.json()["deliveryId"])
        [request] = (await served.runtime.get_session(session_id)).input_requests
        call = {"type": "tool-guarded_echo", "toolCallId": request.action.call_id, "input": request.action.input}
        decision = call | approved(request.request_id)
        done = await chat(
            http, session_id, [user("run the guarded echo"), {"id": "a", "role": "assistant", "parts": [decision]}]
        )
        conversation = await (await served.runtime.get_session(session_id)).messages()

    assert text(story).startswith("Once upon a time")
    assert text(done) == "The guarded echo ran and returned the token guarded-echo-ok-T4Q9."
    assert len([p for m in conversation if isinstance(m, eve.ToolMessage) for p in m.content]) == 1


async def test_a_turn_that_parks_twice_continues_the_same_message_each_time(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        history = [user("set up a palette")]
        parked = await chat(http, "c-palette", history)
        template = first(parked, "tool-input-available")["toolCallId"]
        message = assistant(parked, **{template: picked(["tpl_red"])})
        again = await chat(http, "c-palette", [*history, message])
        colour = first(again, "tool-input-available")
        parts = message["parts"] + [{"type": "step-start"}]
        parts.append({"type": "tool-ask_question", "toolCallId": colour["toolCallId"], "input": colour["input"]})
        parts[-1] |= {"state": "output-available", "output": {"pickedIds": ["blue"]}}
        done = await chat(http, "c-palette", [*history, message | {"parts": parts}])

    assert colour["input"]["prompt"] == "Which accent colour?" and again[-1]["finishReason"] == "tool-calls"
    assert done[0]["messageId"] == again[0]["messageId"] == parked[0]["messageId"]
    assert text(done).startswith("Your palette is set:") and "tpl_red" in text(done) and "blue" in text(done)


def test_a_failed_call_and_a_failed_turn_are_error_chunks() -> None:
    projection = ChunkProjection("msg_1")
    failed_call = ActionResultData(
        sequence=0,
        turn_id="turn_1",
        step_index=0,
        result=ToolResultAction(call_id="c1", tool_name="note", output="The disk is full.", is_error=True),
        status="failed",
        error=ActionResultError(code="TOOL_ERROR", message="The disk is full."),
    )
    started = projection.events(new_event(StepStartedData(sequence=0, turn_id="turn_1", step_index=0, model_id="m")))
    call = projection.events(new_event(failed_call))
    failed = projection.events(new_event(TurnFailedData(sequence=0, turn_id="turn_1", code="MODEL_ERROR", message="x")))

    assert started == [{"type": "start-step"}]
    assert call == [{"type": "tool-output-error", "toolCallId": "c1", "errorText": "The disk is full."}]
    assert failed == [{"type": "finish-step"}, {"type": "error", "errorText": "x"}]
    assert projection.ended and projection.events(new_event(failed_call)) == []


async def test_a_new_message_while_a_call_is_parked_dismisses_it_and_streams_the_new_turn(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        history = [user("help me pick a template")]
        parked = await chat(http, "c-dismiss", history)
        story = await chat(http, "c-dismiss", [*history, assistant(parked), user("tell me a story", "u2")])
        conversation = await (await served.runtime.get_session("c-dismiss")).messages()

    assert types(story)[:3] == ["start", "start-step", "text-start"]
    assert text(story).startswith("Once upon a time") and story[-1]["finishReason"] == "stop"
    [result] = [p for m in conversation if isinstance(m, eve.ToolMessage) for p in m.content]
    assert result.output == {"status": "ignored"}, "the dismissed picker still got its one result"
