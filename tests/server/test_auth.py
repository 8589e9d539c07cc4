"""Bearer tokens: 401 without the right one; a session belongs to the principal that created it."""

from __future__ import annotations

import pytest

from eve_py.agent import Agent
from eve_py.server import principal_for, tokens_from_env
from eve_py.server._auth import ANONYMOUS, Authenticator
from tests.server.helpers import ALICE, BOB, PICK_BLUE, hitl_runtime, read_stream, serve

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer wrong-token", "Bearer", "Basic YWxpY2U6eA==", f"Token {ALICE}", ALICE],
    ids=["missing", "wrong", "empty", "basic", "other scheme", "no scheme"],
)
async def test_missing_or_wrong_token_gets_401_on_every_session_route(
    hitl_agent: Agent, authorization: str | None
) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as alice:
        session_id = (await alice.post("/session")).json()["sessionId"]
        headers = {"authorization": authorization} if authorization is not None else {}
        async with served.client(token=None) as anonymous:
            responses = [
                await anonymous.post("/session", json={"message": "hi"}, headers=headers),
                await anonymous.get(f"/session/{session_id}", headers=headers),
                await anonymous.post(f"/session/{session_id}", json={"message": "hi"}, headers=headers),
                await anonymous.get(f"/session/{session_id}/stream", headers=headers),
                await anonymous.post(f"/session/{session_id}/cancel", headers=headers),
            ]
        record = await served.runtime.store.load(session_id)
    for response in responses:
        assert response.status_code == 401
        assert response.json()["code"] == "unauthorized"
        assert response.headers["www-authenticate"].startswith("Bearer")
    assert record.event_count == 1  # nothing happened to the session


async def test_another_principal_gets_404_and_cannot_answer(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client(ALICE) as alice, served.client(BOB) as bob:
        created = (await alice.post("/session", json={"message": "help me pick a template"})).json()
        session_id = created["sessionId"]
        parked = await read_stream(alice, session_id, created["startIndex"])
        request_id = parked[-2]["data"]["requests"][0]["requestId"]
        before = await served.runtime.store.load(session_id)

        answer = {"inputResponses": [{"requestId": request_id, "value": PICK_BLUE}]}
        reads = [
            await bob.get(f"/session/{session_id}"),
            await bob.get(f"/session/{session_id}/stream"),
            await bob.post(f"/session/{session_id}/cancel"),
        ]
        for response in reads:
            assert response.status_code == 404
            assert response.json() == {
                "ok": False,
                "error": f"No session with id {session_id!r} in this store.",
                "code": "session_not_found",
            }
        writes = [
            await bob.post(f"/session/{session_id}", json=answer),
            await bob.post(f"/session/{session_id}", json={"message": "hijack"}),
            await bob.post(f"/session/{session_id}/clear"),
            await bob.post(f"/session/{session_id}/reset"),
        ]
        for response in writes:  # as eve answers a session it does not know
            assert response.status_code == 409
            assert response.json()["code"] == "session_not_active"
        assert await served.runtime.store.load(session_id) == before

        own = await alice.post(f"/session/{session_id}", json=answer)
        assert own.status_code == 202
        events = await read_stream(alice, session_id, own.json()["startIndex"])
        assert [e["type"] for e in events][-2:] == ["turn.completed", "session.waiting"]

        bobs = (await bob.post("/session")).json()["sessionId"]
        assert (await alice.get(f"/session/{bobs}")).status_code == 404
        assert (await bob.get(f"/session/{bobs}")).status_code == 200


async def test_without_tokens_everyone_is_the_local_principal(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent), tokens=()) as served, served.client(token=None) as client:
        created = await client.post("/session", json={"message": "hello"})
        assert created.status_code == 202
        session_id = created.json()["sessionId"]
        events = await read_stream(client, session_id)
        with_any_token = await client.get(f"/session/{session_id}", headers={"authorization": "Bearer whatever"})
    assert [e["type"] for e in events][-2:] == ["turn.completed", "session.waiting"]
    assert with_any_token.status_code == 200
    assert await served.app.state.eve.owners.owner(session_id) == ANONYMOUS


async def test_tokens_come_from_the_environment(hitl_agent: Agent, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVE_API_TOKEN", f" {ALICE} , {BOB},, ")
    assert tokens_from_env() == [ALICE, BOB]
    async with serve(hitl_runtime(hitl_agent), tokens=tokens_from_env()) as served, served.client(BOB) as bob:
        session_id = (await bob.post("/session")).json()["sessionId"]
        assert await served.app.state.eve.owners.owner(session_id) == principal_for(BOB)
        assert principal_for(BOB) != principal_for(ALICE)
        assert BOB not in principal_for(BOB)
    monkeypatch.delenv("EVE_API_TOKEN")
    assert tokens_from_env() == []


def test_authenticator_compares_tokens_exactly() -> None:
    auth = Authenticator([ALICE, BOB])
    assert auth.enabled
    assert auth.principal(f"Bearer {ALICE}") == principal_for(ALICE)
    assert auth.principal(f"bearer  {BOB} ") == principal_for(BOB)
    assert auth.principal(f"Bearer {ALICE}x") is None
    assert auth.principal(f"Bearer {ALICE[:-1]}") is None
    assert auth.principal(None) is None
    open_auth = Authenticator([])
    assert not open_auth.enabled
    assert open_auth.principal(None) == ANONYMOUS
