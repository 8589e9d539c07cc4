"""`POST /ag-ui` over HTTP: AG-UI 1.0 runs on eve-py sessions, read as an AG-UI client reads the SSE stream.

The real `@ag-ui/client` drives the same route in `tests/ag_ui_client/`; these tests check what
the wire carries, and what is (and is not) stored for answers eve-py refuses.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import anyio
import httpx
import pytest
from pydantic import BaseModel

import eve_py
from eve_py import AcceptedElicitation, Elicit, ElicitationResult, Resolve, Runtime, define_tool
from eve_py.agent import Agent
from eve_py.protocol.requests import InputRequest, ToolCallAction
from eve_py.server._ag_ui_events import interrupt_of
from eve_py.sessions import MemorySessionStore, SQLiteSessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.server.helpers import ALICE, BOB, GatedModel, Served, hitl_runtime, serve

pytestmark = pytest.mark.anyio

Frame = dict[str, Any]


def client(served: Served, token: str | None = ALICE) -> httpx.AsyncClient:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return httpx.AsyncClient(base_url=served.base, headers=headers, timeout=10.0)


async def run(http: httpx.AsyncClient, thread: str, *, message: str | None = None, resume: Any = None) -> list[Frame]:
    """One AG-UI run: its events, decoded from the SSE stream."""
    body: dict[str, Any] = {"threadId": thread, "runId": f"run-{anyio.current_time()}", "messages": []}
    if message is not None:
        body["messages"] = [{"id": "u1", "role": "user", "content": message}]
    if resume is not None:
        body["resume"] = resume
    with anyio.fail_after(10):
        response = await http.post("/ag-ui", json=body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    return [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]


def types(frames: list[Frame]) -> list[str]:
    return [frame["type"] for frame in frames]


def text(frames: list[Frame]) -> str:
    return "".join(frame["delta"] for frame in frames if frame["type"] == "TEXT_MESSAGE_CONTENT")


def interrupts(frames: list[Frame]) -> list[Frame]:
    last = frames[-1]
    assert last["type"] == "RUN_FINISHED" and last["outcome"]["type"] == "interrupt", last
    found: list[Frame] = last["outcome"]["interrupts"]
    return found


async def test_an_approval_interrupts_the_run_and_a_resume_runs_the_call(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        parked = await run(http, "thread-echo", message="run the guarded echo")
        [interrupt] = interrupts(parked)
        done = await run(
            http,
            "thread-echo",
            resume=[{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}],
        )

    assert types(parked)[:2] == ["RUN_STARTED", "STEP_STARTED"]
    assert [f["toolCallName"] for f in parked if f["type"] == "TOOL_CALL_START"] == ["guarded_echo"]
    assert interrupt["reason"] == "tool_call"
    assert interrupt["toolCallId"] == interrupt["id"] == interrupt["metadata"]["eveRequestId"]
    schema = interrupt["responseSchema"]
    assert schema["required"] == ["approved"] and set(schema["properties"]) == {"approved", "reason"}
    assert "expiresAt" not in interrupt
    [result] = [f for f in done if f["type"] == "TOOL_CALL_RESULT"]
    assert json.loads(result["content"])["token"] == "guarded-echo-ok-T4Q9"
    assert text(done) == "The guarded echo ran and returned the token guarded-echo-ok-T4Q9."
    assert done[-1] == {"type": "RUN_FINISHED", "threadId": "thread-echo", "runId": done[0]["runId"]}


async def test_a_denial_carries_its_reason_to_the_model(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        [interrupt] = interrupts(await run(http, "t-deny", message="run the guarded echo"))
        deny = {"approved": False, "reason": "not today"}
        done = await run(
            http, "t-deny", resume=[{"interruptId": interrupt["id"], "status": "resolved", "payload": deny}]
        )
    assert text(done).endswith("Tool execution was denied. Reason: not today")


async def test_an_editable_approval_takes_edited_args(hitl_agent: Agent) -> None:
    edit = {"to": "news@example.org", "subject": "Monthly news"}
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        [interrupt] = interrupts(await run(http, "t-news", message="send the newsletter"))
        payload = {"approved": True, "editedArgs": edit}
        done = await run(
            http, "t-news", resume=[{"interruptId": interrupt["id"], "status": "resolved", "payload": payload}]
        )
    assert set(interrupt["responseSchema"]["properties"]["editedArgs"]["properties"]) == {"to", "subject"}
    assert text(done) == "Sent 'Monthly news' to news@example.org (you changed it before approving)."


async def test_a_typed_picker_interrupts_with_its_answer_schema(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        [interrupt] = interrupts(await run(http, "t-pick", message="help me pick a template"))
        answer = {"pickedIds": ["tpl_blue"]}
        done = await run(
            http, "t-pick", resume=[{"interruptId": interrupt["id"], "status": "resolved", "payload": answer}]
        )
    assert interrupt["reason"] == "input_required"
    assert interrupt["message"] == "Which template should the page use?"
    assert interrupt["responseSchema"]["required"] == ["pickedIds"]
    assert interrupt["metadata"]["toolName"] == "ask_question"
    assert text(done) == "Recorded your pick: tpl_blue."


async def test_a_partial_resume_leaves_the_rest_parked(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        approval, picker = interrupts(await run(http, "t-review", message="review my page"))
        approve = {"interruptId": approval["id"], "status": "resolved", "payload": {"approved": True}}
        still = interrupts(await run(http, "t-review", resume=[approve]))
        pick = {"interruptId": picker["id"], "status": "resolved", "payload": {"pickedIds": ["blue"]}}
        done = await run(http, "t-review", resume=[pick])
    assert [i["id"] for i in still] == [picker["id"]]
    assert text(done) == "The guarded echo ran and returned the token guarded-echo-ok-T4Q9. Colour: blue."


async def test_a_cancelled_entry_cancels_the_request(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        [interrupt] = interrupts(await run(http, "t-cancel", message="help me pick a template"))
        done = await run(http, "t-cancel", resume=[{"interruptId": interrupt["id"], "status": "cancelled"}])
    assert done[-1]["type"] == "RUN_FINISHED" and done[-1].get("outcome", {}).get("type") != "interrupt"


@pytest.mark.parametrize(
    ("message", "payload", "code"),
    [
        ("run the guarded echo", {"approved": "yes"}, "invalid_answer"),
        ("run the guarded echo", {"approved": True, "note": "x"}, "invalid_answer"),
        ("run the guarded echo", {"approved": True, "editedArgs": {"text": "x"}}, "edit_not_allowed"),
        ("send the newsletter", {"approved": True, "editedArgs": {"to": "not an address"}}, "invalid_answer"),
        ("help me pick a template", {"pickedIds": "tpl_blue"}, "invalid_answer"),
        ("help me pick a template", None, "invalid_answer"),
    ],
)
async def test_a_resume_that_does_not_fit_is_a_run_error_and_stores_nothing(
    hitl_agent: Agent, message: str, payload: Any, code: str
) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        [interrupt] = interrupts(await run(http, "t-bad", message=message))
        before = (await served.runtime.get_session("t-bad")).record.event_count
        entry = {"interruptId": interrupt["id"], "status": "resolved", "payload": payload}
        refused = await run(http, "t-bad", resume=[entry])
        session = await served.runtime.get_session("t-bad")
    assert types(refused) == ["RUN_STARTED", "RUN_ERROR"]
    assert refused[-1]["code"] == code
    assert session.record.event_count == before
    assert [r.request_id for r in session.input_requests] == [interrupt["id"]]


async def test_an_unknown_interrupt_and_a_second_answer_are_refused(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        [interrupt] = interrupts(await run(http, "t-twice", message="run the guarded echo"))
        unknown = await run(http, "t-twice", resume=[{"interruptId": "nope", "status": "resolved", "payload": 1}])
        entry = {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
        await run(http, "t-twice", resume=[entry])
        again = await run(http, "t-twice", resume=[entry])
    assert unknown[-1]["type"] == "RUN_ERROR" and unknown[-1]["code"] == "unknown_request"
    assert again[-1]["type"] == "RUN_ERROR" and again[-1]["code"] == "request_already_answered"


async def test_a_thread_belongs_to_the_token_that_made_it(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as alice, client(served, BOB) as bob:
        await run(alice, "t-mine", message="tell me a story")
        body = {"threadId": "t-mine", "runId": "r", "messages": [{"id": "u", "role": "user", "content": "hi"}]}
        theirs = await bob.post("/ag-ui", json=body)
        async with client(served, None) as anonymous:
            nobody = await anonymous.post("/ag-ui", json=body)
        malformed = await alice.post("/ag-ui", json={"threadId": "t-mine"})
    assert (theirs.status_code, theirs.json()["code"]) == (404, "session_not_found")
    assert nobody.status_code == 401
    assert (malformed.status_code, malformed.json()["code"]) == (400, "bad_request")


async def test_the_capabilities_say_interrupts_approve_with_edits_and_frontend_tools(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, client(served) as http:
        capabilities = (await http.get("/ag-ui")).json()
    assert capabilities == {
        "identity": {"name": "agent-tools-hitl", "type": "eve-py", "version": eve_py.__version__},
        "transport": {"streaming": True, "resumable": False},
        "tools": {"supported": True, "parallelCalls": True, "clientProvided": True},
        "humanInTheLoop": {"supported": True, "approvals": True, "interrupts": True, "approveWithEdits": True},
    }


def test_a_request_that_expires_says_when() -> None:
    action = ToolCallAction(call_id="c1", tool_name="guarded_echo", input={})
    request = InputRequest(
        request_id="c1",
        kind="tool-approval",
        action=action,
        prompt="Approve?",
        display="confirmation",
        expires_at="2030-01-01T00:00:00.000Z",
    )
    assert interrupt_of(request).model_dump(by_alias=True)["expiresAt"] == "2030-01-01T00:00:00.000Z"


async def test_a_thread_goes_on_after_a_server_restart(hitl_agent: Agent, tmp_path: Any) -> None:
    path = tmp_path / "sessions.db"
    store = SQLiteSessionStore(path)
    try:
        async with serve(hitl_runtime(hitl_agent, store=store)) as served, client(served) as http:
            [interrupt] = interrupts(await run(http, "t-restart", message="help me pick a template"))
    finally:
        await store.aclose()

    store = SQLiteSessionStore(path)
    try:
        async with serve(hitl_runtime(hitl_agent, store=store)) as served, client(served) as http:
            again = interrupts(await run(http, "t-restart"))
            answer = {"interruptId": interrupt["id"], "status": "resolved", "payload": {"pickedIds": ["tpl_red"]}}
            done = await run(http, "t-restart", resume=[answer])
            idle = await run(http, "t-restart")
    finally:
        await store.aclose()
    assert again == [interrupt], "a run with nothing new reports the open interrupts"
    assert text(done) == "Recorded your pick: tpl_red."
    assert types(idle) == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"] and "outcome" not in idle[-1]
    conversation = idle[1]["messages"]
    assert conversation[0] == {"id": "user_0", "role": "user", "content": "help me pick a template"}
    [picker] = [m for m in conversation if m["role"] == "assistant" and m.get("toolCalls")][:1]
    assert picker["toolCalls"][0]["function"]["name"] == "ask_question"
    assert {"role": "tool", "toolCallId": interrupt["toolCallId"]}.items() <= conversation[2].items()
    assert conversation[-1]["content"] == "Recorded your pick: tpl_red."


async def test_a_message_while_the_thread_s_turn_runs_follows_that_turn_then_starts_its_own(
    hitl_agent: Agent,
) -> None:
    model = GatedModel()
    async with serve(hitl_runtime(hitl_agent, model=model)) as served, client(served) as http:
        async with anyio.create_task_group() as group:
            first: list[Frame] = []

            async def slow_run() -> None:
                first.extend(await run(http, "t-busy", message="take it slow"))

            group.start_soon(slow_run)
            with anyio.fail_after(10):
                await model.entered.wait()
            # The page sends its next message while the first turn still runs (its stream open or not).
            sent = [{"id": "u1", "role": "user", "content": "take it slow"}]
            sent.append({"id": "u2", "role": "user", "content": "tell me a story"})
            body = {"threadId": "t-busy", "runId": "r2", "messages": sent}
            async with http.stream("POST", "/ag-ui", json=body) as response:
                lines = response.aiter_lines()
                assert json.loads((await anext(lines))[6:])["type"] == "RUN_STARTED"
                model.release.set()
                second = [json.loads(line[6:]) async for line in lines if line.startswith("data: ")]
    assert text(first) == "Finally done."
    assert types(second)[-1] == "RUN_FINISHED" and "outcome" not in second[-1]
    # The rest of the first turn (its text), then the message's own turn (the story).
    assert text(second).startswith("Finally done.") and text(second).endswith("every call got one result.")
    events = [e.type for e in await served.runtime.store.read_events("t-busy")]
    assert events.count("turn.started") == events.count("turn.completed") == 2


class Confirm(BaseModel):
    go: bool


def confirm(service: str) -> Elicit[Confirm]:
    return Elicit(f"Deploy {service}?", Confirm)


def deploy(service: str, answer: Annotated[ElicitationResult[Confirm], Resolve(confirm)]) -> str:
    return f"deployed {service}" if isinstance(answer, AcceptedElicitation) and answer.data.go else "not deployed"


def deploy_then_report(request: MockModelRequest) -> str | MockResponse:
    results = request.tool_results_since_last_user_message
    if not results:
        return MockResponse(tool_calls=[MockToolCall("deploy", {"service": "api"})])
    return str(results[-1].output)


async def test_a_resolvers_question_inside_a_server_tool_is_an_interrupt_with_its_schema() -> None:
    agent = Agent.from_definitions({"deploy": define_tool(description="Deploy.", execute=deploy)}, name="ops")
    runtime = Runtime(agent, model=MockModel(deploy_then_report, name="mock"), store=MemorySessionStore())
    async with serve(runtime) as served, client(served) as http:
        [question] = interrupts(await run(http, "t-elicit", message="deploy the api"))
        answer = {"interruptId": question["id"], "status": "resolved", "payload": {"go": True}}
        done = await run(http, "t-elicit", resume=[answer])
    assert (question["reason"], question["message"], question["metadata"]["kind"]) == (
        "input_required",
        "Deploy api?",
        "elicitation",
    )
    assert question["responseSchema"]["properties"]["go"]["type"] == "boolean"
    assert text(done) == "deployed api" and "outcome" not in done[-1]
