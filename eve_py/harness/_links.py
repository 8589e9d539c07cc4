"""Signed, one-shot answer links: a token that answers one parked request without an API token.

```python
link = await session.answer_link(request_id, expires_after=3600, base_url="https://agent.example")
link.url         # https://agent.example/eve/v1/answer/eyJ2Ijo...   (send it by email or chat)
result = await runtime.answer_with_link(link.token, {"optionId": "approve"})   # answered by "link"
```

The token names the session, the request, a digest of the parked call and its own end, signed
with HMAC-SHA256 (`eve_py.parking._links` signs and checks it). The secret is `EVE_LINK_SECRET`
when set, else a random one the store makes once (`SessionStore.secret("answer-links")`), so
every worker on the store agrees and a restart changes nothing. A link answers its one request
while it is open, once: then it is refused like any second answer.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

from eve_py.errors import RequestAlreadyAnsweredError, RequestExpiredError
from eve_py.parking._expire import INPUT_EXPIRED
from eve_py.parking._links import (
    LinkClaims,
    call_digest,
    link_expiry,
    link_response,
    linked_request,
    open_request,
    sign_link,
    verify_link,
)
from eve_py.protocol.messages import Message, ToolMessage, ToolResultPart
from eve_py.protocol.requests import InputRequest, InputResponse
from eve_py.protocol.turns import TurnResult
from eve_py.sessions import SessionRecord, SessionStore

__all__ = (
    "ANSWERED_BY_LINK",
    "LINK_SECRET_ENV",
    "AnswerLink",
    "LinkedRuntime",
    "LinkedSession",
    "answer_link",
    "answer_path",
    "answer_with_link",
    "link_secret",
    "open_link",
    "respond_by_link",
)

LINK_SECRET_ENV = "EVE_LINK_SECRET"
"""The environment variable holding the secret answer links are signed with (any non-empty text)."""

ANSWERED_BY_LINK = "link"
"""Who answered, as recorded for an answer given through a link (`input.resolved`'s `answeredBy`)."""

_STORE_SECRET = "answer-links"
"""The name of the store's own secret, used when `EVE_LINK_SECRET` is unset."""


@dataclass(frozen=True, slots=True)
class AnswerLink:
    """A signed link that answers one request."""

    token: str
    """The signed token: `GET|POST /eve/v1/answer/{token}`."""
    url: str | None
    """`{base_url}/eve/v1/answer/{token}`, or None when no base URL was given."""
    expires_at: str
    """When the link ends (RFC 3339, UTC): never after the request's own deadline."""


class LinkedSession(Protocol):
    """What a link needs of a `Session` (the harness's `Session` is one)."""

    _store: SessionStore

    @property
    def id(self) -> str:
        """The session id."""
        ...

    async def messages(self) -> list[Message]:
        """The stored conversation."""
        ...

    async def respond(self, responses: Sequence[InputResponse | Mapping[str, Any]], *, by: str) -> TurnResult:
        """Answer open requests (see `Session.respond`)."""
        ...


class LinkedRuntime(Protocol):
    """What answering through a token needs of a `Runtime`."""

    store: SessionStore

    async def get_session(self, session_id: str) -> Any:
        """The session with this id (a `Session`)."""
        ...


def answer_path(token: str) -> str:
    """The route a link's token is answered at, below the server's root: `/eve/v1/answer/{token}`."""
    return f"/eve/v1/answer/{token}"


async def link_secret(store: SessionStore, environ: Mapping[str, str] | None = None) -> bytes:
    """The secret links are signed with: `EVE_LINK_SECRET` when set and not empty, else the store's own."""
    configured = (environ if environ is not None else os.environ).get(LINK_SECRET_ENV, "")
    if configured:
        return configured.encode("utf-8")
    return await store.secret(_STORE_SECRET)


async def answer_link(
    session: LinkedSession, request_id: str, *, expires_after: float | timedelta | None, base_url: str | None
) -> AnswerLink:
    """See `Session.answer_link`: a link to the open request `request_id` of `session`.

    Args:
        session: The session.
        request_id: An open request of its parked batch.
        expires_after: How long the link lasts (seconds or a `timedelta`); None: until the
            request's deadline when it has one, else 7 days. Never past the request's deadline.
        base_url: The server's address (`https://agent.example`); the link's `url` is made from it.

    Raises:
        UnknownRequestError: The session has no such request.
        RequestAlreadyAnsweredError: The request was answered or withdrawn.
        RequestExpiredError: The request's deadline passed.
        UsageError: `expires_after` is not a positive duration.
    """
    store = session._store
    request = await _open(session, await store.load(session.id), request_id)
    seconds = expires_after.total_seconds() if isinstance(expires_after, timedelta) else expires_after
    expires = link_expiry(request, now=time.time(), expires_after=seconds)
    claims = LinkClaims(session_id=session.id, request_id=request_id, digest=call_digest(request), expires=expires)
    token = sign_link(await link_secret(store), claims)
    url = None if base_url is None else base_url.rstrip("/") + answer_path(token)
    return AnswerLink(token=token, url=url, expires_at=claims.expires_at)


async def open_link(runtime: LinkedRuntime, token: str) -> tuple[LinkClaims, InputRequest]:
    """What a token answers, checked: the link's claims and its request, still open.

    Raises:
        LinkInvalidError: The token is not genuine, or the request now open under its id is another call.
        LinkExpiredError: The link's time is up.
        SessionNotFoundError: Its session is gone.
        RequestAlreadyAnsweredError: The request was answered or withdrawn.
        RequestExpiredError: The request's deadline passed.
        UnknownRequestError: Its session holds no such request.
    """
    claims = verify_link(await link_secret(runtime.store), token, now=time.time())
    session: LinkedSession = await runtime.get_session(claims.session_id)
    return claims, await _linked(session, claims)


async def respond_by_link(
    session: LinkedSession, claims: LinkClaims, response: InputResponse | Mapping[str, Any]
) -> TurnResult:
    """Answer the link's request with `response` (its `requestId` may be left out), as `link`.

    The request must still be open and its call the one the link was made for.

    Raises:
        LinkInvalidError: The answer names another request, or the request is another call now.
        RequestAlreadyAnsweredError: The request was answered (a link answers once) or withdrawn.
        RequestExpiredError: The request's deadline passed.
        UnknownRequestError: The session holds no such request.
        InvalidAnswerError: The answer does not fit the request; the request stays open.
    """
    raw = response.to_wire() if isinstance(response, InputResponse) else response
    answer = link_response(claims, raw)
    await _linked(session, claims)
    return await session.respond([answer], by=ANSWERED_BY_LINK)


async def answer_with_link(
    runtime: LinkedRuntime, token: str, response: InputResponse | Mapping[str, Any]
) -> TurnResult:
    """Answer the request a token names, as its link's holder would (`POST /eve/v1/answer/{token}`).

    Raises:
        LinkInvalidError: The token is not genuine, or the answer names another request.
        LinkExpiredError: The link's time is up.
        SessionNotFoundError: Its session is gone.
        RequestAlreadyAnsweredError: The request was answered (a link answers once) or withdrawn.
        RequestExpiredError: The request's deadline passed.
        UnknownRequestError: The session holds no such request.
        InvalidAnswerError: The answer does not fit the request; the request stays open.
    """
    claims = verify_link(await link_secret(runtime.store), token, now=time.time())
    return await respond_by_link(await runtime.get_session(claims.session_id), claims, response)


async def _linked(session: LinkedSession, claims: LinkClaims) -> InputRequest:
    """The open request a link names, its call the one the link was made for (see `linked_request`)."""
    record = await session._store.load(session.id)
    await _open(session, record, claims.request_id)  # the refusals, with the history looked up
    return linked_request(claims, record.pending, waiting=record.status == "waiting")


async def _open(session: LinkedSession, record: SessionRecord, request_id: str) -> InputRequest:
    """The open request `request_id` of `record` (see `open_request`).

    Raises:
        RequestAlreadyAnsweredError: It was answered (its call has its result) or withdrawn.
        RequestExpiredError: Its deadline passed.
        UnknownRequestError: The session never asked it.
    """
    pending = record.pending
    held = pending is not None and any(r.request_id == request_id for r in pending.requests)
    result = None if held else _result_in(await session.messages(), request_id)
    if result is not None and result.is_error is True and str(result.output).startswith(f"{INPUT_EXPIRED}:"):
        raise RequestExpiredError(f"Request {request_id!r} expired before it was answered.", request_id=request_id)
    if result is not None:
        raise RequestAlreadyAnsweredError(
            f"Request {request_id!r} was already answered or withdrawn.", request_id=request_id
        )
    return open_request(pending, request_id, waiting=record.status == "waiting")


def _result_in(messages: Sequence[Message], request_id: str) -> ToolResultPart | None:
    """The tool result for this call id in the conversation, if there is one (its request is closed)."""
    parts = (part for message in messages if isinstance(message, ToolMessage) for part in message.content)
    return next((part for part in parts if part.tool_call_id == request_id), None)
