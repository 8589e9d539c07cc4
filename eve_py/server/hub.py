"""The in-process broadcaster that wakes stream readers when their session gets new events.

Stream readers read events from the store, from their cursor; the hub only tells them *when*
to read again. Committed events become a `WAKE` in every subscriber's queue of that session;
ephemeral `message.delta` events (never stored) travel through the queue themselves. Queues
are FIFO, and a `WAKE` is queued only after its events were committed, so a reader that reads
the store on each `WAKE` sees every stored event that came before a delta before that delta.

The deltas of the step a session is running (those since its last stored batch) are kept
until that step is stored, and a new subscriber starts with them queued: a reader that
connects while the model is already streaming still sees the whole text as it grows.

Nothing here is session state: a process that restarts has no readers to wake, and the step
whose deltas it kept is stored whole (`message.completed`) or not at all.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import anyio

from eve_py.events import Event

__all__ = ("Hub", "Subscriber", "WAKE", "Wake")


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
        self._step_deltas: dict[str, list[Event]] = {}

    def subscribe(self, session_id: str) -> Subscriber:
        """Start receiving the session's wakes and deltas (call before the first store read).

        The deltas of the step running now come first.
        """
        subscriber = Subscriber(session_id)
        for delta in self._step_deltas.get(session_id, ()):
            subscriber._put(delta)
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
        subscribers = self._subscribers.get(session_id, set())
        for event in events:
            item: Wake | Event
            if event.type == "message.delta":
                item = event
                kept = self._step_deltas.setdefault(session_id, [])
                if len(kept) < _MAX_QUEUED:
                    kept.append(event)
            else:
                item = WAKE
                self._step_deltas.pop(session_id, None)  # the step is stored (or over)
            for subscriber in subscribers:
                subscriber._put(item)

    def forget(self, session_id: str) -> None:
        """Drop the deltas kept for the session's running step (its work ended)."""
        self._step_deltas.pop(session_id, None)

    def wake(self, session_id: str) -> None:
        """Make the session's readers re-read the store and re-check whether the turn settled."""
        for subscriber in self._subscribers.get(session_id, ()):
            subscriber._put(WAKE)

    def wake_all(self) -> None:
        """Wake every reader (events whose session is unknown, shutdown)."""
        for subscribers in self._subscribers.values():
            for subscriber in subscribers:
                subscriber._put(WAKE)
