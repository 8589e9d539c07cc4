"""Signed, one-shot answer links: a token that answers one parked request without an API token.

Being written (issue 20, step "signed answer links").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eve_py.harness._session import Session

__all__ = ("AnswerLink", "answer_link")


@dataclass(frozen=True, slots=True)
class AnswerLink:
    """A signed link that answers one request."""

    token: str
    url: str | None
    expires_at: str


async def answer_link(
    session: Session, request_id: str, *, expires_after: float | timedelta | None, base_url: str | None
) -> AnswerLink:
    """See `Session.answer_link`."""
    raise NotImplementedError("answer links are being written")
