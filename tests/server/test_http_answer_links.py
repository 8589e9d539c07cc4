"""Answer links over HTTP: the owner makes one, anyone holding it answers that one request without a token, once.

On every store (memory, SQLite, PostgreSQL), with a restart between making the link and using it.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from eve_py.agent import Agent
from eve_py.harness._links import link_secret
from eve_py.parking._links import LinkClaims, sign_link
from eve_py.protocol import InputResolved
from eve_py.protocol.requests import parse_deadline
from eve_py.sessions import SessionStore
from tests.server.helpers import BOB, hitl_runtime, read_stream, serve

pytestmark = pytest.mark.anyio

JSON = {"accept": "application/json"}


async def park(client: httpx.AsyncClient, message: str) -> tuple[str, list[dict[str, Any]]]:
    """Start a session with `message`; its id and the requests it parked on (eve-py's, extensions merged)."""
    created = await client.post("/session", json={"message": message})
    assert created.status_code == 202, created.text
    session_id = created.json()["sessionId"]
    await read_stream(client, session_id, created.json()["startIndex"])
    state = await client.get(f"/session/{session_id}")
    return session_id, state.json()["inputRequests"]


async def make_link(client: httpx.AsyncClient, session_id: str, request_id: str, **extra: Any) -> dict[str, Any]:
    made = await client.post(f"/session/{session_id}/links", json={"requestId": request_id, **extra})
    assert made.status_code == 201, made.text
    return dict(made.json())


def anonymous() -> httpx.AsyncClient:
    """A client with no API token at all, as a person following a link from an email is."""
    return httpx.AsyncClient(timeout=10.0)


async def test_a_link_made_before_a_restart_answers_its_request_once_without_a_token(
    hitl_agent: Agent, store: SessionStore
) -> None:
    async with serve(hitl_runtime(hitl_agent, store=store)) as served, served.client() as alice:
        session_id, [request] = await park(alice, "run the guarded echo")
        link = await make_link(alice, session_id, request["requestId"])
        assert link["url"] == f"{served.base}/eve/v1/answer/{link['token']}"

    async with serve(hitl_runtime(hitl_agent, store=store)) as served, anonymous() as nobody:
        url = f"{served.base}/eve/v1/answer/{link['token']}"
        shown = await nobody.get(url, headers=JSON)
        assert shown.status_code == 200, shown.text
        assert shown.json()["sessionId"] == session_id
        assert shown.json()["request"]["prompt"] == "Approve tool call: guarded_echo"
        assert shown.json()["expiresAt"] == link["expiresAt"]
        assert shown.headers["cache-control"] == "no-store"
        assert shown.headers["referrer-policy"] == "no-referrer"

        answered = await nobody.post(url, json={"optionId": "approve"})
        assert answered.status_code == 202, answered.text
        assert answered.json()["resolution"]["outcome"] == "approved"
        assert answered.json()["resolution"]["answeredBy"] == "link"

        again = await nobody.post(url, json={"optionId": "deny"})
        assert again.status_code == 409
        assert again.json()["code"] == "request_already_answered"
        gone = await nobody.get(url, headers=JSON)
        assert (gone.status_code, gone.json()["code"]) == (409, "request_already_answered")

    session = await served.runtime.get_session(session_id)
    resolved = [e for e in await session.events(answered.json()["startIndex"]) if isinstance(e, InputResolved)]
    assert [(r.outcome, r.answered_by) for e in resolved for r in e.data.resolutions] == [("approved", "link")]
    assert (await session.refresh()).status == "idle"  # the approved echo ran and the turn completed


async def test_a_changed_token_is_403_and_an_expired_one_410(hitl_agent: Agent, store: SessionStore) -> None:
    async with serve(hitl_runtime(hitl_agent, store=store)) as served, served.client() as alice:
        session_id, [request] = await park(alice, "run the guarded echo")
        token = (await make_link(alice, session_id, request["requestId"]))["token"]
        payload, signature = token.split(".")
        changed = [
            f"{payload}.{signature[:-1]}{'A' if signature[-1] != 'A' else 'B'}",
            f"{payload[:-2]}.{signature}",
            f"{payload}.{signature}.x",
            "not-a-token",
        ]
        claims = LinkClaims(session_id, request["requestId"], "x", int(time.time()) - 1)
        expired = sign_link(await link_secret(store), claims)
        async with anonymous() as nobody:
            for bad in changed:
                for reply in (
                    await nobody.get(f"{served.api}/answer/{bad}", headers=JSON),
                    await nobody.post(f"{served.api}/answer/{bad}", json={"optionId": "approve"}),
                ):
                    assert (reply.status_code, reply.json()["code"]) == (403, "link_invalid"), bad
            for reply in (
                await nobody.get(f"{served.api}/answer/{expired}", headers=JSON),
                await nobody.post(f"{served.api}/answer/{expired}", json={"optionId": "approve"}),
            ):
                assert (reply.status_code, reply.json()["code"]) == (410, "link_expired")
                assert "expired at" in reply.json()["error"]
        still = await alice.get(f"/session/{session_id}")
        assert [r["requestId"] for r in still.json()["inputRequests"]] == [request["requestId"]]


async def test_a_link_grants_its_one_request_and_nothing_else(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as alice:
        session_id, requests = await park(alice, "review my page")  # an approval and a colour, one batch
        approval, colour = sorted(requests, key=lambda r: r["kind"] != "tool-approval")
        token = (await make_link(alice, session_id, colour["requestId"]))["token"]
        link = f"{served.api}/answer/{token}"
        async with anonymous() as nobody, served.client(token) as bearer:
            shown = (await nobody.get(link, headers=JSON)).json()
            assert shown["request"]["requestId"] == colour["requestId"]
            assert approval["requestId"] not in str(shown)
            other = await nobody.post(link, json={"requestId": approval["requestId"], "optionId": "approve"})
            assert (other.status_code, other.json()["code"]) == (403, "link_invalid")
            for path in (f"/session/{session_id}", f"/session/{session_id}/stream"):
                assert (await nobody.get(served.api + path)).status_code == 401
                assert (await bearer.get(path)).status_code == 401  # the token is no API token
            assert (await bearer.post(f"/session/{session_id}", json={"message": "hi"})).status_code == 401
            assert (await bearer.post(f"/session/{session_id}/links", json={"requestId": "x"})).status_code == 401

            refused = await nobody.post(link, json={"optionId": "purple"})
            assert (refused.status_code, refused.json()["code"]) == (422, "invalid_answer")
            answered = await nobody.post(link, json={"optionId": "blue"})
            assert answered.status_code == 202, answered.text
        state = (await alice.get(f"/session/{session_id}")).json()
        assert [r["requestId"] for r in state["inputRequests"]] == [approval["requestId"]]  # still the owner's


async def test_only_the_owner_makes_a_link_and_only_to_an_open_request(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as alice, served.client(BOB) as bob:
        session_id, [request] = await park(alice, "run the guarded echo")
        body = {"requestId": request["requestId"]}
        assert (await bob.post(f"/session/{session_id}/links", json=body)).status_code == 404
        async with served.client(None) as nobody:
            assert (await nobody.post(f"/session/{session_id}/links", json=body)).status_code == 401
        unknown = await alice.post(f"/session/{session_id}/links", json={"requestId": "no-such-request"})
        assert (unknown.status_code, unknown.json()["code"]) == (422, "unknown_request")
        bad_bodies: list[Any] = [{"requestId": request["requestId"], "expiresAfter": 0}, {"expiresAfter": 60}, []]
        for bad in bad_bodies:
            assert (await alice.post(f"/session/{session_id}/links", json=bad)).status_code == 400
        short = await make_link(alice, session_id, request["requestId"], expiresAfter=90)
        assert 85 <= _seconds_left(short["expiresAt"]) <= 90

        answered = await alice.post(f"/session/{session_id}", json={"inputResponses": [{**body, "optionId": "deny"}]})
        assert answered.status_code == 202
        await read_stream(alice, session_id, answered.json()["startIndex"])
        late = await alice.post(f"/session/{session_id}/links", json=body)
        assert (late.status_code, late.json()["code"]) == (409, "request_already_answered")
        async with anonymous() as nobody:
            used = await nobody.post(f"{served.api}/answer/{short['token']}", json={"optionId": "approve"})
            assert (used.status_code, used.json()["code"]) == (409, "request_already_answered")


async def test_the_page_is_served_to_a_browser_even_for_a_refused_link_and_never_cached(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client() as alice:
        session_id, [request] = await park(alice, "run the guarded echo")
        token = (await make_link(alice, session_id, request["requestId"]))["token"]
        async with anonymous() as nobody:
            page = await nobody.get(f"{served.api}/answer/{token}", headers={"accept": "text/html"})
            refused = await nobody.get(f"{served.api}/answer/{token}x", headers={"accept": "text/html"})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "/static/requests.js" in page.text and "/static/answer.js" in page.text
    assert (page.headers["cache-control"], page.headers["referrer-policy"]) == ("no-store", "no-referrer")
    assert refused.status_code == 403 and refused.headers["content-type"].startswith("text/html")


def _seconds_left(expires_at: str) -> float:
    return parse_deadline(expires_at) - time.time()
