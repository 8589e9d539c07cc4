"""What a write is and who hears of it: `Write`, `Committed`, the event listener and `notify`.

Every state change is one store commit (`TurnUnit.write`, `eve_py.harness._unit`): the record (a
compare-and-set on its version), its events and the messages appended to the conversation, all
or nothing. Right after it, the runtime's listeners get a `Committed`.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from eve_py.protocol import Event
from eve_py.protocol.messages import Message
from eve_py.sessions import SessionRecord

__all__ = ("Committed", "EventListener", "Write", "notify")

_log = logging.getLogger("eve_py")


@dataclass(frozen=True, slots=True)
class Committed:
    """One committed write's events, and where they landed in the session's log."""

    session_id: str
    first_index: int
    """The log index of `events[0]`."""
    events: Sequence[Event]


EventListener = Callable[[Committed], "Awaitable[None] | None"]
"""Called with each committed write's events right after the commit."""


@dataclass(frozen=True, slots=True)
class Write:
    """What one commit writes: the record, the events, the messages appended to the conversation."""

    record: SessionRecord
    events: list[Event]
    messages: Sequence[Message] = ()


async def notify(listener: EventListener | None, committed: Committed) -> None:
    """Hand a committed write to a listener; its failure is logged and never breaks the turn.

    The events are already stored, and a turn stopped half-way would leave the session running.
    """
    if listener is None or not committed.events:
        return
    try:
        outcome = listener(committed)
        if inspect.isawaitable(outcome):
            await outcome
    except Exception:
        _log.exception("event listener failed; the session is unaffected")
