"""An answer holding a lone UTF-16 surrogate, over eve's HTTP wire: a 400 naming it, nothing stored.

`"\\ud800"` in a JSON body decodes to a Python string that is not text; the body parser refuses
it before any answer is read, so the call stays parked and a proper answer afterwards runs.
"""

from __future__ import annotations

import json

import pytest

from eve_py.agent import Agent
from eve_py.protocol.messages import ToolMessage
from tests.server.helpers import PICK_BLUE, hitl_runtime, read_stream, serve

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "answer",
    [{"text": "blue \\ud800"}, {"value": {"pickedIds": ["tpl_blue\\udc00"]}}, {"optionId": "\\udbff"}],
    ids=["text", "value", "optionId"],
)
async def test_an_answer_with_a_lone_surrogate_is_refused_and_the_call_stays_parked(
    hitl_agent: Agent, answer: dict[str, object]
) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        created = await client.post("/session", json={"message": "help me pick a template"})
        session_id = created.json()["sessionId"]
        events = await read_stream(client, session_id, created.json()["startIndex"])  # bounded: 10 s
        [request] = events[-2]["data"]["requests"]
        before = await served.runtime.store.load(session_id)
        # json.dumps would escape the backslash: the escape is written as a client would send it.
        body = json.dumps({"inputResponses": [{"requestId": request["requestId"], **answer}]}).replace("\\\\u", "\\u")

        refused = await client.post(
            f"/session/{session_id}", content=body.encode(), headers={"content-type": "application/json"}
        )
        after = await served.runtime.store.load(session_id)
        answered = await client.post(
            f"/session/{session_id}", json={"inputResponses": [{"requestId": request["requestId"], "value": PICK_BLUE}]}
        )
        await read_stream(client, session_id, answered.json()["startIndex"])
        messages = await (await served.runtime.get_session(session_id)).messages()

    assert refused.status_code == 400, refused.text
    assert refused.json()["code"] == "bad_request"
    assert "lone UTF-16 surrogate" in refused.json()["error"]
    assert (after.version, after.event_count, after.status) == (before.version, before.event_count, "waiting")
    assert answered.status_code == 202, answered.text
    results = {p.tool_call_id: p.output for m in messages if isinstance(m, ToolMessage) for p in m.content}
    assert results[request["requestId"]] == PICK_BLUE, "the parked call took the proper answer"
