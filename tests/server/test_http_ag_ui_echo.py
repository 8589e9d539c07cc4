"""CopilotKit's `useInterrupt` answers a `tool_call` interrupt twice in one run: a tool message
holding the payload and the `resume` entry (CopilotKit#6201). The tool message is the answer's
echo: one answer is recorded, and only a message that contradicts the resume is refused."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from eve_py.agent import Agent
from eve_py.protocol import InputResolved
from tests.server.helpers import ALICE, hitl_runtime, serve

pytestmark = pytest.mark.anyio

Frame = dict[str, Any]


async def _run(http: httpx.AsyncClient, thread: str, messages: list[Frame], resume: Any = None) -> list[Frame]:
    body: dict[str, Any] = {"threadId": thread, "runId": f"run-{anyio.current_time()}", "messages": messages}
    if resume is not None:
        body["resume"] = resume
    with anyio.fail_after(10):
        response = await http.post("/ag-ui", json=body)
    assert response.status_code == 200, response.text
    return [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]


def _history(interrupt: Frame, echo: Any) -> list[Frame]:
    """What CopilotKit sends after `resolve(echo)`: the user's message, the call, and its echo."""
    call = {"id": interrupt["toolCallId"], "type": "function", "function": {"name": "guarded_echo", "arguments": "{}"}}
    return [
        {"id": "u1", "role": "user", "content": "run the guarded echo"},
        {"id": "a1", "role": "assistant", "toolCalls": [call]},
        {"id": "t1", "role": "tool", "toolCallId": interrupt["toolCallId"], "content": json.dumps(echo)},
    ]


async def _parked(http: httpx.AsyncClient, thread: str) -> Frame:
    frames = await _run(http, thread, [{"id": "u1", "role": "user", "content": "run the guarded echo"}])
    [interrupt] = frames[-1]["outcome"]["interrupts"]
    return dict(interrupt)


@pytest.mark.parametrize(
    ("payload", "reply"),
    [
        ({"approved": True}, "The guarded echo ran and returned the token guarded-echo-ok-T4Q9."),
        ({"approved": False, "reason": "no"}, "The guarded echo did not run: Tool execution was denied. Reason: no"),
    ],
)
async def test_a_resume_and_its_tool_message_echo_are_one_answer(hitl_agent: Agent, payload: Any, reply: str) -> None:
    headers = {"authorization": f"Bearer {ALICE}"}
    async with (
        serve(hitl_runtime(hitl_agent)) as served,
        httpx.AsyncClient(base_url=served.base, headers=headers) as http,
    ):
        interrupt = await _parked(http, "t-echo")
        resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": payload}]
        done = await _run(http, "t-echo", _history(interrupt, payload), resume)
        # The next run resends the history, echo included, with a new message: it goes on.
        later = _history(interrupt, payload) + [{"id": "u2", "role": "user", "content": "tell me a story"}]
        story = await _run(http, "t-echo", later)
        events = await served.runtime.store.read_events("t-echo")

    assert done[-1]["type"] == "RUN_FINISHED", done[-1]
    assert "".join(f["delta"] for f in done if f["type"] == "TEXT_MESSAGE_CONTENT") == reply
    assert len([e for e in events if isinstance(e, InputResolved)]) == 1
    assert story[-1]["type"] == "RUN_FINISHED", story[-1]


async def test_a_tool_message_that_contradicts_its_resume_or_has_none_is_refused(hitl_agent: Agent) -> None:
    headers = {"authorization": f"Bearer {ALICE}"}
    async with (
        serve(hitl_runtime(hitl_agent)) as served,
        httpx.AsyncClient(base_url=served.base, headers=headers) as http,
    ):
        interrupt = await _parked(http, "t-contra")
        resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]
        contradicting = await _run(http, "t-contra", _history(interrupt, {"approved": False}), resume)
        alone = await _run(http, "t-contra", _history(interrupt, {"approved": True}))
        session = await served.runtime.get_session("t-contra")

    assert (contradicting[-1]["type"], contradicting[-1]["code"]) == ("RUN_ERROR", "invalid_answer")
    assert "contradicts the resume entry" in contradicting[-1]["message"]
    assert (alone[-1]["type"], alone[-1]["code"]) == ("RUN_ERROR", "invalid_answer")
    assert "with a resume entry, not a tool message" in alone[-1]["message"]
    assert [r.request_id for r in session.input_requests] == [interrupt["id"]]  # nothing was answered
