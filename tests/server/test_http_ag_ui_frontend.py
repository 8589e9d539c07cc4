"""`POST /ag-ui` with frontend tools and resent history: what is refused, what is stored, what the wire carries.

The real `@ag-ui/client` runs the happy paths in `tests/ag_ui_client/`; these tests send what a
careless or hostile client could, and check that nothing is stored for it.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from eve_py.agent import Agent, load_mock_model
from eve_py.errors import SessionNotFoundError, ToolDefinitionError
from eve_py.harness import Runtime
from eve_py.protocol.turns import ClientTool
from eve_py.sessions import SQLiteSessionStore
from eve_py.testing import MockModel
from tests.conftest import HITL_APP
from tests.server.helpers import hitl_runtime, serve
from tests.server.test_http_ag_ui import Frame, client, interrupts, text, types

pytestmark = pytest.mark.anyio

BACKGROUND: dict[str, Any] = {
    "name": "change_background",
    "description": "Change the page's background colour.",
    "parameters": {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
}


async def post(http: httpx.AsyncClient, thread: str, messages: list[Frame], **extra: Any) -> httpx.Response:
    body = {"threadId": thread, "runId": f"run-{anyio.current_time()}", "messages": messages, **extra}
    with anyio.fail_after(10):
        return await http.post("/ag-ui", json=body)


def frames(response: httpx.Response) -> list[Frame]:
    assert response.status_code == 200, response.text
    return [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]


def user(text: str, n: int = 0) -> Frame:
    return {"id": f"u{n}", "role": "user", "content": text}


def tool_message(call_id: str, content: str) -> Frame:
    return {"id": f"t-{call_id}", "role": "tool", "toolCallId": call_id, "content": content}


def open_call(run: list[Frame]) -> Frame:
    """The run's open frontend tool call, as the client's assistant message holds it."""
    [start] = [f for f in run if f["type"] == "TOOL_CALL_START"]
    args = "".join(f["delta"] for f in run if f["type"] == "TOOL_CALL_ARGS")
    function = {"name": start["toolCallName"], "arguments": args}
    call = {"id": start["toolCallId"], "type": "function", "function": function}
    return {"id": start["parentMessageId"], "role": "assistant", "toolCalls": [call]}


@pytest.mark.parametrize(
    ("tool", "says"),
    [
        ({**BACKGROUND, "name": "guarded_echo"}, "has the name of one of the app's tools"),
        ({**BACKGROUND, "name": "change background"}, "must be 1 to 64 letters"),
        ({**BACKGROUND, "parameters": {"type": "string"}}, '"type": "object"'),
        ({**BACKGROUND, "parameters": {"type": "object", "properties": {"color": {"type": "hue"}}}}, "not a valid"),
        ({**BACKGROUND, "parameters": ["color"]}, "must be a JSON Schema object"),
    ],
)
async def test_a_bad_frontend_tool_is_refused_before_anything_runs(hitl_agent: Agent, tool: Frame, says: str) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        refused = await post(http, "t-bad-tool", [user("change the background")], tools=[tool])
        with pytest.raises(SessionNotFoundError):
            await served.runtime.get_session("t-bad-tool")
    assert (refused.status_code, refused.json()["code"]) == (422, "invalid_tools")
    assert says in refused.json()["error"]


async def test_the_same_frontend_tool_twice_is_refused(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        refused = await post(http, "t-twice", [user("hi")], tools=[BACKGROUND, BACKGROUND])
    assert (refused.status_code, refused.json()["code"]) == (422, "invalid_tools")
    assert "offered twice" in refused.json()["error"]


async def test_a_tool_message_answers_the_open_call_once(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        history = [user("change the background")]
        parked = frames(await post(http, "t-front", history, tools=[BACKGROUND]))
        call = open_call(parked)
        history += [call, tool_message(call["toolCalls"][0]["id"], "not json, just text")]
        done = frames(await post(http, "t-front", history, tools=[BACKGROUND]))
        before = (await served.runtime.get_session("t-front")).record.event_count
        again = frames(await post(http, "t-front", history, tools=[BACKGROUND]))
        after = (await served.runtime.get_session("t-front")).record.event_count
    assert parked[-1]["type"] == "RUN_FINISHED" and "outcome" not in parked[-1]
    assert text(done) == 'The client answered: "not json, just text".'
    assert "TOOL_CALL_RESULT" not in types(done)  # the client sent that result itself
    assert types(again) == ["RUN_STARTED", "RUN_FINISHED"] and before == after


async def test_a_tool_message_for_an_approval_or_an_unknown_call_is_refused(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        history = [user("run the guarded echo")]
        [approval] = interrupts(frames(await post(http, "t-tm", history)))
        before = (await served.runtime.get_session("t-tm")).record.event_count
        function = {"name": "guarded_echo", "arguments": "{}"}
        echo_call: Frame = {"id": approval["toolCallId"], "type": "function", "function": function}
        call: Frame = {"id": "a1", "role": "assistant", "toolCalls": [echo_call]}
        for_approval = frames(await post(http, "t-tm", [*history, call, tool_message(approval["toolCallId"], "{}")]))
        unknown = frames(await post(http, "t-tm", [*history, tool_message("call-never-made", "{}")]))
        invented = {**call, "toolCalls": [{**echo_call, "id": "call-never-made"}]}
        made_up = frames(await post(http, "t-tm", [*history, invented]))
        session = await served.runtime.get_session("t-tm")
    assert (for_approval[-1]["type"], for_approval[-1]["code"]) == ("RUN_ERROR", "invalid_answer")
    assert "resume entry" in for_approval[-1]["message"]
    assert (unknown[-1]["code"], made_up[-1]["code"]) == ("history_conflict", "history_conflict")
    assert session.record.event_count == before and [r.request_id for r in session.input_requests] == [approval["id"]]


async def test_resent_and_contradicting_user_messages(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        first = frames(await post(http, "t-hist", [user("tell me a story")]))
        reply = {"id": "a", "role": "assistant", "content": text(first)}
        before = (await served.runtime.get_session("t-hist")).record.event_count
        resent = frames(await post(http, "t-hist", [user("tell me a story"), reply]))
        changed = frames(await post(http, "t-hist", [user("tell me a joke"), reply, user("more", 1)]))
        two_new = frames(await post(http, "t-hist", [user("tell me a story"), reply, user("a", 1), user("b", 2)]))
        after = (await served.runtime.get_session("t-hist")).record.event_count
        echo = [user("tell me a story"), reply, user("run the guarded echo", 1)]
        follow_up = frames(await post(http, "t-hist", echo))
    assert types(resent) == ["RUN_STARTED", "RUN_FINISHED"]
    assert changed[-1]["code"] == two_new[-1]["code"] == "history_conflict"
    assert "User message 1 differs" in changed[-1]["message"] and "send one per run" in two_new[-1]["message"]
    assert before == after
    assert interrupts(follow_up)[0]["reason"] == "tool_call"


async def test_a_new_message_with_an_image_is_refused_and_stores_nothing(hitl_agent: Agent) -> None:
    image = {"type": "image", "source": {"type": "url", "value": "https://example.org/cat.png"}}
    content = [{"type": "text", "text": "what is in this picture?"}, image]
    parts = [{"type": "text", "text": "tell me"}, {"type": "text", "text": "a story"}]
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        refused = frames(await post(http, "t-image", [{"id": "u0", "role": "user", "content": content}]))
        stored = (await served.runtime.get_session("t-image")).record.event_count
        story = frames(await post(http, "t-image", [{"id": "u0", "role": "user", "content": parts}]))
    assert (refused[-1]["type"], refused[-1]["code"]) == ("RUN_ERROR", "unsupported_media_type")
    assert "text only" in refused[-1]["message"]
    assert stored == 1  # the thread's session.started: no message, no turn
    assert text(story).startswith("Once upon a time")  # text parts alone are joined into the message


async def test_a_picker_answered_by_resume_streams_its_result(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        [picker] = interrupts(frames(await post(http, "t-res", [user("help me pick a template")])))
        entry = {"interruptId": picker["id"], "status": "resolved", "payload": {"pickedIds": ["tpl_green"]}}
        done = frames(await post(http, "t-res", [user("help me pick a template")], resume=[entry]))
    results = [f for f in done if f["type"] == "TOOL_CALL_RESULT"]
    assert [(r["toolCallId"], json.loads(r["content"])) for r in results][0] == (
        picker["toolCallId"],
        {"pickedIds": ["tpl_green"]},
    )
    assert results[0]["messageId"] == f"result_{picker['toolCallId']}"


async def test_a_message_to_a_parked_thread_runs_to_the_new_turns_end(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        history = [user("help me pick a template")]
        [picker] = interrupts(frames(await post(http, "t-dismiss", history)))
        done = frames(await post(http, "t-dismiss", [*history, user("tell me a story", 1)]))
    [result] = [f for f in done if f["type"] == "TOOL_CALL_RESULT"]
    assert (result["toolCallId"], json.loads(result["content"])) == (picker["toolCallId"], {"status": "ignored"})
    assert text(done).startswith("Once upon a time") and done[-1]["type"] == "RUN_FINISHED"


async def test_client_tools_are_kept_with_the_turn_for_a_runtime_in_another_process(
    hitl_agent: Agent, tmp_path: Any
) -> None:
    path = tmp_path / "sessions.db"
    tool = ClientTool(name="change_background", description="Change it.", input_schema=BACKGROUND["parameters"])
    store = SQLiteSessionStore(path)
    try:
        session = await Runtime(hitl_agent, model=load_mock_model(HITL_APP), store=store).create_session()
        parked = await session.send("change the background", client_tools=[tool])
    finally:
        await store.aclose()
    store = SQLiteSessionStore(path)
    try:
        model = load_mock_model(HITL_APP)
        assert isinstance(model, MockModel)
        elsewhere = await Runtime(hitl_agent, model=model, store=store).get_session(session.id)
        [request] = parked.input_requests
        done = await elsewhere.respond([{"requestId": request.request_id, "value": {"applied": "teal"}}])
    finally:
        await store.aclose()
    assert (request.kind, request.action.tool_name) == ("client-tool", "change_background")
    assert done.message == 'The client answered: {"applied": "teal"}.'


async def test_send_refuses_a_client_tool_named_like_an_app_tool(hitl_agent: Agent) -> None:
    session = await hitl_runtime(hitl_agent).create_session()
    clash = ClientTool(name="note", description="x", input_schema={"type": "object"})
    with pytest.raises(ToolDefinitionError, match="app's tools"):
        await session.send("hello", client_tools=[clash])
    assert (await session.refresh()).status == "idle" and await session.messages() == []
