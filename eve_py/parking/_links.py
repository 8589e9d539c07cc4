"""Answer links, the pure part: how a link's token is signed and checked, and whether it still answers its request.

A link answers one parked request without an API token. Its token is

```
base64url(payload) + "." + base64url(HMAC-SHA256(secret, payload))
payload = {"v": 1, "s": SESSION_ID, "r": REQUEST_ID, "d": DIGEST, "e": EXPIRES}   (compact JSON)
```

where `DIGEST` is base64url(SHA-256) of the parked call as canonical JSON (`{"input", "tool"}`),
and `EXPIRES` the link's end in Unix seconds. base64url is without padding, and only its
canonical form is read (a character that changes nothing decoded still fails), so any change to
a token fails its signature. Nothing here does I/O: `eve_py.harness._links` finds the secret and
the session and carries out what is decided here.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eve_py._json import canonical_dumps
from eve_py.errors import (
    LinkExpiredError,
    LinkInvalidError,
    RequestAlreadyAnsweredError,
    RequestExpiredError,
    UnknownRequestError,
    UsageError,
)
from eve_py.protocol.pending import PendingStep
from eve_py.protocol.requests import InputRequest, deadline_iso

__all__ = (
    "DEFAULT_LINK_SECONDS",
    "LinkClaims",
    "call_digest",
    "link_expiry",
    "link_response",
    "linked_request",
    "open_request",
    "sign_link",
    "verify_link",
)

DEFAULT_LINK_SECONDS = 7 * 24 * 3600
"""How long a link lasts when neither the caller nor the request's deadline says (7 days)."""

_VERSION = 1
_MAX_TOKEN = 4096
"""A longer token is refused before any decoding (a real one is a few hundred characters)."""
_PART = re.compile(r"^[A-Za-z0-9_-]+$")

_INVALID = "This answer link is not valid: it was changed, cut short, or not made by this server."


@dataclass(frozen=True, slots=True)
class LinkClaims:
    """What a link's token says: which request of which session it answers, and until when."""

    session_id: str
    request_id: str
    digest: str
    """`call_digest` of the request the link was made for."""
    expires: int
    """When the link ends: Unix time, seconds."""

    @property
    def expires_at(self) -> str:
        """`expires` as RFC 3339, UTC (`2026-11-25T10:00:00.000Z`)."""
        return deadline_iso(self.expires)


def call_digest(request: InputRequest) -> str:
    """base64url(SHA-256) of the request's call (tool name and input) as canonical JSON."""
    call = {"tool": request.action.tool_name, "input": request.action.input}
    return _encode(hashlib.sha256(canonical_dumps(call).encode("utf-8")).digest())


def link_expiry(request: InputRequest, *, now: float, expires_after: float | None) -> int:
    """When a link to `request` made at `now` ends (Unix seconds): never after the request's own deadline.

    Args:
        request: The open request.
        now: The current time (Unix seconds).
        expires_after: Seconds from now; None: the request's deadline when it has one, else 7 days.

    Raises:
        UsageError: `expires_after` is not a positive, finite number of seconds.
        RequestExpiredError: The request's deadline passed already (it is about to resolve as expired).
    """
    if expires_after is not None and (
        isinstance(expires_after, bool) or not math.isfinite(expires_after) or expires_after <= 0
    ):
        raise UsageError(f"answer_link(expires_after=...) takes a positive number of seconds, got {expires_after!r}")
    deadline = request.deadline
    if deadline is not None and deadline <= now:
        raise _expired(request)
    if expires_after is None:
        ends = deadline if deadline is not None else now + DEFAULT_LINK_SECONDS
    else:
        ends = now + expires_after if deadline is None else min(now + expires_after, deadline)
    return math.floor(ends)


def sign_link(secret: bytes, claims: LinkClaims) -> str:
    """The token of `claims`, signed with `secret`."""
    payload = {"v": _VERSION, "s": claims.session_id, "r": claims.request_id, "d": claims.digest, "e": claims.expires}
    raw = json.dumps(payload, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    return f"{_encode(raw)}.{_encode(_mac(secret, raw))}"


def verify_link(secret: bytes, token: str, *, now: float) -> LinkClaims:
    """What a token signed with `secret` says, once its signature and its expiry are checked.

    The signature is checked first (with `hmac.compare_digest`), so a token whose expiry was
    changed is invalid, not expired.

    Raises:
        LinkInvalidError: The token is garbled, changed in any way, or signed with another secret.
        LinkExpiredError: The token is genuine and its time is up.
    """
    if not isinstance(token, str) or len(token) > _MAX_TOKEN or token.count(".") != 1:
        raise LinkInvalidError(_INVALID)
    encoded_payload, encoded_mac = token.split(".")
    raw, mac = _decode(encoded_payload), _decode(encoded_mac)
    if raw is None or mac is None or not hmac.compare_digest(mac, _mac(secret, raw)):
        raise LinkInvalidError(_INVALID)
    claims = _claims(raw)
    if now >= claims.expires:
        raise LinkExpiredError(
            f"This answer link expired at {claims.expires_at}; ask for a new one.", expires_at=claims.expires_at
        )
    return claims


def open_request(pending: PendingStep | None, request_id: str, *, waiting: bool) -> InputRequest:
    """The request `request_id` of the session's parked step, if it is still open.

    Args:
        pending: The session's parked step, if any.
        request_id: The request.
        waiting: Whether the session waits for input (its status is `waiting`).

    Raises:
        RequestAlreadyAnsweredError: The request was answered, or is being withdrawn.
        RequestExpiredError: Its deadline passed: it resolved as expired.
        UnknownRequestError: The parked step does not hold the request (the caller looks in the
            conversation first: a call with its result there was answered).
    """
    request = next((r for r in pending.requests if r.request_id == request_id), None) if pending else None
    if request is None or pending is None:
        open_ids = [r.request_id for r in pending.open_requests()] if pending is not None and waiting else []
        raise UnknownRequestError(
            f"Unknown request id {request_id!r}; the open requests are {open_ids}.", request_id=request_id
        )
    if request_id in pending.expired:
        raise _expired(request)
    if not waiting or request_id not in {r.request_id for r in pending.open_requests()}:
        raise RequestAlreadyAnsweredError(
            f"Request {request_id!r} was already answered or withdrawn.", request_id=request_id
        )
    return request


def linked_request(claims: LinkClaims, pending: PendingStep | None, *, waiting: bool) -> InputRequest:
    """The open request a link answers (see `open_request`), if its call is the one the link was made for.

    Raises:
        RequestAlreadyAnsweredError: The request was answered, or is being withdrawn.
        RequestExpiredError: Its deadline passed.
        UnknownRequestError: The parked step does not hold the request.
        LinkInvalidError: The request now open under the link's request id is another call.
    """
    request = open_request(pending, claims.request_id, waiting=waiting)
    if not hmac.compare_digest(call_digest(request), claims.digest):
        raise LinkInvalidError("This answer link was made for another question than the one now open under its id.")
    return request


def link_response(claims: LinkClaims, response: Mapping[str, Any]) -> dict[str, Any]:
    """The answer's JSON form with its `requestId` filled in from the link (it may be left out).

    Raises:
        LinkInvalidError: The answer names another request: a link answers its own request only.
    """
    given = response.get("requestId", response.get("request_id"))
    if given is not None and given != claims.request_id:
        raise LinkInvalidError(
            f"This answer link answers request {claims.request_id!r} only, not {str(given)[:200]!r}."
        )
    return {key: value for key, value in response.items() if key != "request_id"} | {"requestId": claims.request_id}


def _expired(request: InputRequest) -> RequestExpiredError:
    return RequestExpiredError(
        f"Request {request.request_id!r} expired at {request.expires_at}; it resolved as expired.",
        request_id=request.request_id,
        expires_at=request.expires_at or "",
    )


def _claims(raw: bytes) -> LinkClaims:
    """The claims of a payload whose signature holds.

    Raises:
        LinkInvalidError: It is not the shape `sign_link` writes (a secret shared with another program).
    """
    try:
        payload = json.loads(raw)
    except ValueError:
        raise LinkInvalidError(_INVALID) from None
    if not isinstance(payload, dict) or payload.get("v") != _VERSION:
        raise LinkInvalidError(_INVALID)
    session_id, request_id, digest, expires = (payload.get(key) for key in ("s", "r", "d", "e"))
    texts = (session_id, request_id, digest)
    if not all(isinstance(text, str) and text for text in texts) or type(expires) is not int:
        raise LinkInvalidError(_INVALID)
    return LinkClaims(session_id=str(session_id), request_id=str(request_id), digest=str(digest), expires=expires)


def _mac(secret: bytes, raw: bytes) -> bytes:
    return hmac.new(secret, raw, hashlib.sha256).digest()


def _encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _decode(part: str) -> bytes | None:
    """base64url without padding, in its canonical form only; None otherwise."""
    if not _PART.match(part):
        return None
    try:
        raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        return None
    return raw if _encode(raw) == part else None
