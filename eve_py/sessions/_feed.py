"""`SessionFeed`: what a store shared by several processes tells them about each other's work.

A store that many processes use at once (`PostgresSessionStore`) can push two kinds of
`Notice` to every process listening: a write committed new events to a session's log (so a
stream another process serves reads them at once instead of polling), and someone asked to
cancel a session's turn (so the process running it stops it, wherever the request arrived).
Stores of one process (memory, SQLite) have no feed; their readers are woken in-process.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

__all__ = ("CANCEL_CHANNEL", "EVENTS_CHANNEL", "Notice", "SessionFeed", "parse_notice")

EVENTS_CHANNEL = "eve_events"
"""Payload `SESSION_ID FIRST_INDEX COUNT`: a commit appended COUNT events from FIRST_INDEX on."""
CANCEL_CHANNEL = "eve_cancel"
"""Payload `SESSION_ID`: cancel the session's running turn."""


@dataclass(frozen=True, slots=True)
class Notice:
    """One thing another process (or this one) did to a session."""

    kind: Literal["events", "cancel"]
    session_id: str
    end: int | None = None
    """For `events`: the log's length after the commit (the next event's index)."""


@runtime_checkable
class SessionFeed(Protocol):
    """A store that tells every process using it about commits and cancel requests."""

    def notices(self) -> AbstractAsyncContextManager[AsyncIterator[Notice]]:
        """Listen; the iterator yields every notice from the moment the block is entered."""
        ...

    async def request_cancel(self, session_id: str) -> None:
        """Ask the process running the session's turn to cancel it."""
        ...


def parse_notice(channel: str, payload: str) -> Notice | None:
    """A channel's payload as a `Notice`, or None when it is not one of eve-py's."""
    if channel == CANCEL_CHANNEL and payload:
        return Notice("cancel", payload)
    if channel == EVENTS_CHANNEL:
        session_id, _, rest = payload.partition(" ")
        first, _, count = rest.partition(" ")
        if session_id and first.isdigit() and count.isdigit():
            return Notice("events", session_id, int(first) + int(count))
    return None
