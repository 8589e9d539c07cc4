"""Bearer-token authentication: which principal a request speaks for.

Tokens come from code (`create_app(tokens=[...])`) or from `EVE_API_TOKEN` (one token, or
several separated by commas: one principal each). A token may be named, `alice=tok-1`: the name
is who answers (`answeredBy`) when that token's caller answers a request; a bare token's name is
its principal. A principal is `tok_` plus the first 24 hex digits of the token's SHA-256, so
the token itself is never stored. With no token configured every request is the principal
`local`, and the server must only listen on loopback.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Iterable, Mapping

from eve_py.errors import UsageError

__all__ = ("ANONYMOUS", "Authenticator", "TOKEN_ENV", "named_token", "principal_for", "tokens_from_env")

TOKEN_ENV = "EVE_API_TOKEN"
"""The environment variable holding the API token(s)."""

ANONYMOUS = "local"
"""The principal of every request when no token is configured."""


_NAMED = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9_.@-]*)=(?P<token>[^=].*)$")
"""`name=token`; a token with `=` padding only (`abc==`) stays a bare token."""

_RESERVED = frozenset({ANONYMOUS, "link"})
"""Names eve-py itself records as who answered."""


def named_token(entry: str) -> tuple[str, str]:
    """`(name, token)` of one configured entry: `alice=tok-1`, or a bare token named by its principal."""
    found = _NAMED.match(entry)
    if found is None:
        return principal_for(entry), entry
    return found["name"], found["token"]


def principal_for(token: str) -> str:
    """The principal a token stands for (a digest; the token cannot be recovered from it)."""
    return "tok_" + hashlib.sha256(token.encode("utf-8")).hexdigest()[:24]


def tokens_from_env(environ: Mapping[str, str] | None = None) -> list[str]:
    """The tokens in `EVE_API_TOKEN` (comma-separated, blanks dropped); [] when unset."""
    raw = (environ if environ is not None else os.environ).get(TOKEN_ENV, "")
    return [token.strip() for token in raw.split(",") if token.strip()]


class Authenticator:
    """Checks `Authorization: Bearer <token>` headers against the configured tokens.

    Args:
        tokens: The accepted tokens; empty means no authentication (loopback only).
    """

    def __init__(self, tokens: Iterable[str]) -> None:
        self._tokens: list[tuple[bytes, str, str]] = []
        for entry in tokens:
            if not entry:
                continue
            name, token = named_token(entry)
            if name in _RESERVED or any(name == known for _, _, known in self._tokens):
                raise UsageError(f"token name {name!r} is {'reserved' if name in _RESERVED else 'given twice'}")
            self._tokens.append((token.encode("utf-8"), principal_for(token), name))

    @property
    def enabled(self) -> bool:
        """Whether requests must carry a token."""
        return bool(self._tokens)

    def principal(self, authorization: str | None) -> str | None:
        """The principal of an `Authorization` header value, or None when it is missing or wrong."""
        caller = self.caller(authorization)
        return None if caller is None else caller[0]

    def caller(self, authorization: str | None) -> tuple[str, str] | None:
        """`(principal, name)` of an `Authorization` header value, or None when it is missing or wrong."""
        if not self._tokens:
            return ANONYMOUS, ANONYMOUS
        if authorization is None:
            return None
        scheme, _, credentials = authorization.partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():
            return None
        given = credentials.strip().encode("utf-8")
        found = None
        for token, principal, name in self._tokens:  # compare against every token: no timing hint
            if hmac.compare_digest(given, token):
                found = principal, name
        return found
