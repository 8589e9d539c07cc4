"""The in-process broadcaster that wakes stream readers when their session gets new events.

Stream readers read events from the store, from their cursor; the hub only tells them *when*
to read again. Every event is stored before anyone streams it (text deltas too), so a wake is
all a reader needs, and any number of commits before the reader gets to run cost it one read.

Nothing here is session state: a process that restarts has no readers to wake.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import anyio

from eve_py.protocol import Event

__all__ = ("Hub", "Subscriber")


@dataclass(eq=False)
class Subscriber:
    """One stream reader's wake-up flag."""

    session_id: str
    _woken: anyio.Event = field(default_factory=anyio.Event)

    def _wake(self) -> None:
        self._woken.set()

    async def wait(self, timeout_s: float | None = None) -> bool:
        """Wait until the session has news (True) or `timeout_s` seconds passed (False)."""
        if not self._woken.is_set():
            with anyio.move_on_after(timeout_s):
                await self._woken.wait()
        woken = self._woken.is_set()
        if woken:
            self._woken = anyio.Event()
        return woken


class Hub:
    """Subscribers by session; `publish` and `wake` wake them."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[Subscriber]] = {}

    def subscribe(self, session_id: str) -> Subscriber:
        """A new subscriber for the session (subscribe before the first read: no commit is missed)."""
        subscriber = Subscriber(session_id)
        self._subscribers.setdefault(session_id, set()).add(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        """Stop waking the subscriber."""
        subscribers = self._subscribers.get(subscriber.session_id)
        if subscribers is not None:
            subscribers.discard(subscriber)
            if not subscribers:
                del self._subscribers[subscriber.session_id]

    def subscriber_count(self, session_id: str | None = None) -> int:
        """How many readers follow the session (or all sessions)."""
        if session_id is not None:
            return len(self._subscribers.get(session_id, ()))
        return sum(len(subscribers) for subscribers in self._subscribers.values())

    def publish(self, session_id: str, events: Sequence[Event]) -> None:
        """The session committed `events`: wake its readers."""
        if events:
            self.wake(session_id)

    def wake(self, session_id: str) -> None:
        """Make the session's readers re-read the store and re-check whether the turn settled."""
        for subscriber in self._subscribers.get(session_id, ()):
            subscriber._wake()

    def wake_all(self) -> None:
        """Wake every reader (shutdown)."""
        for subscribers in self._subscribers.values():
            for subscriber in subscribers:
                subscriber._wake()
