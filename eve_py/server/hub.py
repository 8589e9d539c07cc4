"""The in-process broadcaster that wakes stream readers when their session gets new events.

Stream readers read events from the store, from their cursor; the hub only tells them *when*
to read again. Committed events become a `WAKE` in every subscriber's queue of that session;
ephemeral `message.delta` events (never stored) travel through the queue themselves. Queues
are FIFO, and a `WAKE` is queued only after its events were committed, so a reader that reads
the store on each `WAKE` sees every stored event that came before a delta before that delta.

Nothing here is session state: a process that restarts has no readers to wake.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import anyio

from eve_py.harness.events import Event

__all__ = ("WAKE", "Hub", "Subscriber", "Wake")


class Wake:
    """Queue marker: the session has new stored events (read the store from your cursor)."""

    def __repr__(self) -> str:
        return "WAKE"


WAKE: Final = Wake()

_MAX_QUEUED = 2_000
"""How many items a slow subscriber may have queued; further deltas are dropped (wakes never are)."""


@dataclass(eq=False)
class Subscriber:
    """One stream reader's queue of wakes and live deltas."""

    session_id: str
    _items: deque[Wake | Event] = field(default_factory=deque)
    _ready: anyio.Event = field(default_factory=anyio.Event)

    def _put(self, item: Wake | Event) -> None:
        if isinstance(item, Wake):
            if self._items and self._items[-1] is WAKE:
                return  # one pending wake covers any number of commits
        elif len(self._items) >= _MAX_QUEUED:
            return  # deltas are ephemeral: a reader this far behind gets message.completed anyway
        self._items.append(item)
        self._ready.set()

    async def get(self, timeout_s: float | None = None) -> Wake | Event | None:
        """The next item, waiting for one; None when `timeout_s` passed with nothing queued."""
        if not self._items:
            if self._ready.is_set():
                self._ready = anyio.Event()
            with anyio.move_on_after(timeout_s):
                await self._ready.wait()
            if not self._items:
                return None
        return self._items.popleft()


class Hub:
    """Subscribers by session id; `publish` is synchronous and never blocks the turn."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[Subscriber]] = {}

    def subscribe(self, session_id: str) -> Subscriber:
        """Start receiving the session's wakes and deltas (call before the first store read)."""
        subscriber = Subscriber(session_id)
        self._subscribers.setdefault(session_id, set()).add(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        """Stop receiving; the session's entry goes away with its last subscriber."""
        subscribers = self._subscribers.get(subscriber.session_id)
        if subscribers is None:
            return
        subscribers.discard(subscriber)
        if not subscribers:
            del self._subscribers[subscriber.session_id]

    def subscriber_count(self, session_id: str | None = None) -> int:
        """How many readers follow the session (or all sessions)."""
        if session_id is not None:
            return len(self._subscribers.get(session_id, ()))
        return sum(len(subscribers) for subscribers in self._subscribers.values())

    def publish(self, session_id: str, events: Sequence[Event]) -> None:
        """Hand a batch from the runtime to the session's readers: deltas as they are, else a wake."""
        subscribers = self._subscribers.get(session_id)
        if not subscribers:
            return
        for event in events:
            item: Wake | Event = event if event.type == "message.delta" else WAKE
            for subscriber in subscribers:
                subscriber._put(item)

    def wake(self, session_id: str) -> None:
        """Make the session's readers re-read the store and re-check whether the turn settled."""
        for subscriber in self._subscribers.get(session_id, ()):
            subscriber._put(WAKE)

    def wake_all(self) -> None:
        """Wake every reader (events whose session is unknown, shutdown)."""
        for subscribers in self._subscribers.values():
            for subscriber in subscribers:
                subscriber._put(WAKE)
