"""Answer links through the Python API: `Session.answer_link`, then `Runtime.answer_with_link` from any process.

The token is signed with `EVE_LINK_SECRET` or the store's own secret, lasts until the request's
deadline (7 days without one, never longer), and answers its one request once.
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from eve_py import (
    InputRequest,
    InvalidAnswerError,
    LinkExpiredError,
    LinkInvalidError,
    RequestAlreadyAnsweredError,
    RequestExpiredError,
    Runtime,
    UnknownRequestError,
    define_tool,
    load_agent,
)
from eve_py.agent import Agent, load_mock_model
from eve_py.errors import UsageError
from eve_py.harness._links import LINK_SECRET_ENV, link_secret
from eve_py.parking._links import DEFAULT_LINK_SECONDS, LinkClaims, link_expiry, sign_link, verify_link
from eve_py.protocol import InputResolved
from eve_py.protocol.requests import deadline_iso, parse_deadline
from eve_py.sessions import MemorySessionStore, SessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.conftest import HITL_APP

pytestmark = pytest.mark.anyio

APPROVE = {"optionId": "approve"}


def runtime_on(store: SessionStore) -> Runtime:
    """A runtime on the fixture app with its mock model: a new one is a restarted process."""
    return Runtime(load_agent(HITL_APP), model=load_mock_model(HITL_APP), store=store)


async def test_a_link_made_before_a_restart_answers_once_and_is_recorded_as_link(store: SessionStore) -> None:
    session = await runtime_on(store).create_session()
    [request] = (await session.send("run the guarded echo")).input_requests
    link = await session.answer_link(request.request_id, base_url="https://agent.example/")
    assert link.url == f"https://agent.example/eve/v1/answer/{link.token}"
    assert abs(parse_deadline(link.expires_at) - time.time() - DEFAULT_LINK_SECONDS) < 5

    restarted = runtime_on(store)
    result = await restarted.answer_with_link(link.token, APPROVE)
    assert result.status == "completed"
    assert result.message == "The guarded echo ran and returned the token guarded-echo-ok-T4Q9."
    events = await (await restarted.get_session(session.id)).events()
    resolutions = [r for e in events if isinstance(e, InputResolved) for r in e.data.resolutions]
    assert [(r.outcome, r.answered_by) for r in resolutions] == [("approved", "link")]

    with pytest.raises(RequestAlreadyAnsweredError):
        await runtime_on(store).answer_with_link(link.token, {"optionId": "deny"})
    with pytest.raises(RequestAlreadyAnsweredError):
        await session.answer_link(request.request_id)


async def test_a_refused_answer_leaves_the_link_usable_and_another_request_is_not_its_to_answer() -> None:
    runtime = runtime_on(MemorySessionStore())
    session = await runtime.create_session()
    requests = (await session.send("review my page")).input_requests  # an approval and a colour
    colour = next(r for r in requests if r.kind != "tool-approval")
    approval = next(r for r in requests if r.kind == "tool-approval")
    link = await session.answer_link(colour.request_id, expires_after=timedelta(hours=1))
    assert 3590 < parse_deadline(link.expires_at) - time.time() <= 3600

    with pytest.raises(LinkInvalidError, match="answers request"):
        await runtime.answer_with_link(link.token, {"requestId": approval.request_id, **APPROVE})
    with pytest.raises(InvalidAnswerError, match="not offered"):
        await runtime.answer_with_link(link.token, {"optionId": "purple"})
    result = await runtime.answer_with_link(link.token, {"requestId": colour.request_id, "optionId": "blue"})
    assert [r.request_id for r in result.input_requests] == [approval.request_id]  # the approval is still open
    with pytest.raises(UnknownRequestError):
        await session.answer_link("no-such-request")


async def test_a_token_is_refused_when_changed_anywhere_signed_with_another_secret_or_made_for_another_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = MemorySessionStore()
    runtime = runtime_on(store)
    session = await runtime.create_session()
    [request] = (await session.send("run the guarded echo")).input_requests
    token = (await session.answer_link(request.request_id)).token
    secret = await link_secret(store)

    for index, char in enumerate(token):  # every single-character change fails the signature
        changed = token[:index] + ("B" if char == "A" else "A") + token[index + 1 :]
        with pytest.raises(LinkInvalidError):
            verify_link(secret, changed, now=time.time())

    other_call = LinkClaims(session.id, request.request_id, "not-the-calls-digest", int(time.time()) + 60)
    with pytest.raises(LinkInvalidError, match="another question"):
        await runtime.answer_with_link(sign_link(secret, other_call), APPROVE)

    monkeypatch.setenv(LINK_SECRET_ENV, "a secret every worker is given")
    assert await link_secret(store) == b"a secret every worker is given"
    with pytest.raises(LinkInvalidError):
        await runtime.answer_with_link(token, APPROVE)  # signed with the store's secret
    signed_here = (await session.answer_link(request.request_id)).token
    assert verify_link(b"a secret every worker is given", signed_here, now=time.time()).session_id == session.id
    assert (await runtime.answer_with_link(signed_here, APPROVE)).status == "completed"


async def test_an_expired_link_is_refused_as_expired_and_its_changed_expiry_as_invalid() -> None:
    store = MemorySessionStore()
    runtime = runtime_on(store)
    session = await runtime.create_session()
    [request] = (await session.send("run the guarded echo")).input_requests
    secret = await link_secret(store)
    token = (await session.answer_link(request.request_id, expires_after=60)).token
    claims = verify_link(secret, token, now=time.time())

    with pytest.raises(LinkExpiredError, match=f"expired at {claims.expires_at}") as expired:
        verify_link(secret, token, now=claims.expires)
    assert (expired.value.status, expired.value.code) == (410, "link_expired")
    past = LinkClaims(claims.session_id, claims.request_id, claims.digest, int(time.time()) - 1)
    with pytest.raises(LinkExpiredError):
        await runtime.answer_with_link(sign_link(secret, past), APPROVE)
    forged = sign_link(b"someone else's secret", past)
    with pytest.raises(LinkInvalidError) as invalid:  # the signature is checked before the expiry
        await runtime.answer_with_link(forged, APPROVE)
    assert (invalid.value.status, invalid.value.code) == (403, "link_invalid")
    assert (await session.refresh()).input_requests == [request]


def test_a_link_never_outlives_its_requests_deadline_and_lasts_until_it_by_default() -> None:
    now = 1_800_000_000.0
    plain = InputRequest.model_validate(
        {
            "requestId": "c1",
            "kind": "tool-approval",
            "action": {"kind": "tool-call", "callId": "c1", "toolName": "publish", "input": {}},
            "prompt": "Approve tool call: publish",
            "display": "confirmation",
        }
    )
    due = plain.model_copy(update={"expires_at": deadline_iso(now + 600)})
    assert link_expiry(plain, now=now, expires_after=None) == now + DEFAULT_LINK_SECONDS
    assert link_expiry(plain, now=now, expires_after=30) == now + 30
    assert link_expiry(due, now=now, expires_after=None) == now + 600
    assert link_expiry(due, now=now, expires_after=3600) == now + 600
    assert link_expiry(due, now=now, expires_after=60) == now + 60
    for bad in (0, -5, float("inf"), float("nan")):
        with pytest.raises(UsageError, match="positive number of seconds"):
            link_expiry(plain, now=now, expires_after=bad)


def _publish(version: str) -> dict[str, str]:
    return {"published": version}


def _asks_to_publish(request: MockModelRequest) -> str | MockResponse:
    if request.tool_results_since_last_user_message:
        return f"publish: {request.tool_results_since_last_user_message[0].output}"
    return MockResponse(tool_calls=[MockToolCall("publish", {"version": "1.4.0"})])


async def test_a_link_to_a_request_with_a_deadline_ends_with_it_and_the_request_expires_as_usual(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    publish = define_tool(description="Publish.", execute=_publish, needs_approval=True, expires_after=600)
    agent = Agent.from_definitions({"publish": publish})
    runtime = Runtime(agent, model=MockModel(_asks_to_publish), store=MemorySessionStore())
    session = await runtime.create_session()
    [request] = (await session.send("publish it")).input_requests
    assert request.deadline is not None
    for expires_after in (None, 3600):  # until the deadline by default, and never after it
        link = await session.answer_link(request.request_id, expires_after=expires_after)
        assert request.deadline - 1 < parse_deadline(link.expires_at) <= request.deadline
    token = link.token

    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 601)  # past the deadline: nobody answered
    with pytest.raises(LinkExpiredError):
        await runtime.answer_with_link(token, APPROVE)
    with pytest.raises(RequestExpiredError):
        await session.answer_link(request.request_id)
    await runtime.get_session(session.id)  # a process that loads the session expires the request
    with pytest.raises(RequestExpiredError):
        await session.answer_link(request.request_id)
