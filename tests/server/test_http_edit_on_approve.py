"""Edit on approve over eve's HTTP wire: `editedInput` beside `optionId: "approve"` (an eve-py extension)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from eve_py.agent import Agent
from eve_py.sessions import SQLiteSessionStore
from tests.server.helpers import hitl_runtime, read_stream, serve

pytestmark = pytest.mark.anyio

EDIT = {"to": "news@example.org", "subject": "Monthly news"}


async def park(client: httpx.AsyncClient, message: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Send `message` on a new session; its id, the one request parked, and the request's extension."""
    created = await client.post("/session", json={"message": message})
    session_id = created.json()["sessionId"]
    events = await read_stream(client, session_id, created.json()["startIndex"])
    [requested] = [e for e in events if e["type"] == "input.requested"]
    [request] = requested["data"]["requests"]
    extension = (requested["data"].get("extensions") or {}).get(request["requestId"], {})
    return session_id, request, extension


async def test_an_edited_approval_runs_with_the_edit_across_a_restart(hitl_agent: Agent, tmp_path: Any) -> None:
    path = tmp_path / "sessions.db"
    store = SQLiteSessionStore(path)
    try:
        async with serve(hitl_runtime(hitl_agent, store=store)) as served, served.client() as client:
            session_id, request, extension = await park(client, "send the newsletter")
    finally:
        await store.aclose()
    assert request["kind"] == "tool-approval" and "editSchema" not in request, "eve's shape stays eve's"
    assert set(extension["editSchema"]["properties"]) == {"to", "subject"}

    store = SQLiteSessionStore(path)
    try:
        async with serve(hitl_runtime(hitl_agent, store=store)) as served, served.client() as client:
            answer = {"requestId": request["requestId"], "optionId": "approve", "editedInput": EDIT}
            accepted = await client.post(f"/session/{session_id}", json={"inputResponses": [answer]})
            events = await read_stream(client, session_id, accepted.json()["startIndex"])
    finally:
        await store.aclose()
    assert accepted.status_code == 202, accepted.text
    [resolved] = [e for e in events if e["type"] == "input.resolved"]
    assert resolved["data"]["resolutions"][0]["response"]["editedInput"] == EDIT
    [result] = [e for e in events if e["type"] == "action.result"]
    assert result["data"]["result"]["output"] == {"sent": "yes", **EDIT}
    [reply] = [e for e in events if e["type"] == "message.completed"]
    assert reply["data"]["message"] == "Sent 'Monthly news' to news@example.org (you changed it before approving)."


@pytest.mark.parametrize(
    ("message", "edit", "status", "code", "problem"),
    [
        (
            "send the newsletter",
            {"to": "not-an-address", "subject": "Hi"},
            422,
            "invalid_answer",
            "editedInput fails the tool's input schema at to: 'not-an-address' is not a valid email",
        ),
        (
            "send the newsletter",
            {"to": "a@example.org", "subject": ""},
            422,
            "invalid_answer",
            "editedInput fails the tool's input schema at subject: '' should be non-empty",
        ),
        (
            "run the guarded echo",
            {"text": "changed"},
            422,
            "edit_not_allowed",
            "the tool 'guarded_echo' is not editable",
        ),
    ],
    ids=["format", "min-length", "not-editable"],
)
async def test_a_refused_edit_changes_nothing_and_the_call_stays_parked(
    hitl_agent: Agent, message: str, edit: dict[str, Any], status: int, code: str, problem: str
) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as client:
        session_id, request, _ = await park(client, message)
        before = await served.runtime.store.load(session_id)
        answer = {"requestId": request["requestId"], "optionId": "approve", "editedInput": edit}
        refused = await client.post(f"/session/{session_id}", json={"inputResponses": [answer]})
        after = await served.runtime.store.load(session_id)
        again = await client.post(
            f"/session/{session_id}",
            json={"inputResponses": [{"requestId": request["requestId"], "optionId": "approve"}]},
        )
    assert (refused.status_code, refused.json()["code"]) == (status, code)
    assert problem in refused.json()["error"] and refused.json()["requestId"] == request["requestId"]
    assert after == before
    assert again.status_code == 202
