"""The in-process broadcaster that wakes stream readers when their session gets new events.

Stream readers read events from the store, from their cursor; the hub tells them *when* to
read again. Every event is stored before anyone streams it (text deltas too), so a wake is all
a reader needs, and any number of commits before the reader gets to run cost it one read. A
commit of this process also hands its events over (`publish`): a reader whose cursor they
continue takes them as they are (`Subscriber.take`), without reading and decoding them again;
after a plain `wake`, a gap or too many events, it reads the store. The hub also keeps the
last events each session committed here (`recent`), so a stream that starts where a request's
work just wrote (the `startIndex` of a `202`) sends them without reading the store at all.

A running tool's progress reports and log entries (`action.progress`, `action.log`) are also
handed over as they happen (`live`), before the write that stores them with the call's result,
to the readers that asked for them (`subscribe(..., live=True)`): a reader takes them with
`take_live` and shows them at once; the stored copy (same event id) comes later. A session no
live reader follows costs a dict lookup per report.

Nothing here is session state: a process that restarts has no readers to wake.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import anyio

from eve_py.protocol import Event

__all__ = ("Hub", "Subscriber")


_KEPT_EVENTS = 1024
"""Published events a subscriber keeps until its reader takes them; past that it reads the store."""
_TAIL_EVENTS = 128
"""The last events of a session that the hub keeps for streams starting there (`Hub.recent`)."""
_TAILS_EVENTS = 8192
"""The most events kept over all sessions: the sessions that committed here least recently go first."""


@dataclass
class _Tail:
    """A session's last events committed in this process, `first` the log index of `events[0]`."""

    first: int
    events: list[Event]


@dataclass(eq=False)
class Subscriber:
    """One stream reader's wake-up flag, and the committed events published since its reader last took them."""

    session_id: str
    wants_live: bool = False
    """Whether it gets running tools' reports before they are committed (`Hub.live`)."""
    _woken: anyio.Event = field(default_factory=anyio.Event)
    _batches: list[tuple[int, Sequence[Event]]] = field(default_factory=list)
    _kept: int = 0
    _stale: bool = False
    """Woken without the events (a plain wake: another process's commit, shutdown; or too many kept): read the store."""
    _live: list[Event] = field(default_factory=list)
    gone: bool = False
    """The reader's client went away (`leave`): its reader stops at its next wake."""

    def leave(self) -> None:
        """The reader's client disconnected: wake the reader to stop."""
        self.gone = True
        self._woken.set()

    def _wake(self) -> None:
        self._stale = True
        self._woken.set()

    def _publish(self, first_index: int, events: Sequence[Event]) -> None:
        self._kept += len(events)
        if self._kept > _KEPT_EVENTS:
            self._stale = True
            self._batches.clear()
        elif not self._stale:
            self._batches.append((first_index, events))
        self._woken.set()

    def take(self, cursor: int) -> list[Event] | None:
        """The published events from log index `cursor` on, in order; None when the store must be read instead.

        Clears what was kept. None after a plain wake or a commit published out of order past
        `cursor` (a gap); events before `cursor` (read already) are left out.
        """
        batches, stale = self._batches, self._stale
        self._batches, self._kept, self._stale = [], 0, False
        if stale:
            return None
        events: list[Event] = []
        for first, published in batches:
            end = cursor + len(events)
            if first > end:
                return None
            events += published[end - first :]
        return events

    def take_live(self) -> list[Event]:
        """The reports handed over live since the last call, oldest first (past `_KEPT_EVENTS`, the
        oldest are dropped: their stored copies still come)."""
        live, self._live = self._live, []
        return live

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
        self._tails: dict[str, _Tail] = {}
        """By session, least recently committed first."""
        self._tails_events = 0

    def subscribe(self, session_id: str, *, live: bool = False) -> Subscriber:
        """A new subscriber for the session (subscribe before the first read: no commit is missed);
        with `live`, it also gets running tools' reports as they happen (`live`)."""
        subscriber = Subscriber(session_id, live)
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

    def publish(self, session_id: str, events: Sequence[Event], first_index: int | None = None) -> None:
        """The session committed `events` (the first at log index `first_index`, when known): wake its readers."""
        if not events:
            return
        if first_index is None:
            self.wake(session_id)
            return
        self._keep(session_id, first_index, events)
        for subscriber in self._subscribers.get(session_id, ()):
            subscriber._publish(first_index, events)

    def recent(self, session_id: str, start: int, stored: int) -> list[Event] | None:
        """The session's events from log index `start` on, if this process committed every one of them
        up to at least index `stored` (the log's length, read after subscribing); None otherwise (read the store).

        The events past `stored` come too: they were committed here after that read.
        """
        tail = self._tails.get(session_id)
        if (
            tail is None
            or not tail.first <= start <= tail.first + len(tail.events)
            or len(tail.events) + tail.first < stored
        ):
            return None
        return tail.events[start - tail.first :]

    def _keep(self, session_id: str, first_index: int, events: Sequence[Event]) -> None:
        """Add a commit to the session's tail (a new tail when it does not continue the old one: another
        process wrote in between)."""
        tail = self._tails.pop(session_id, None)
        if tail is not None:
            self._tails_events -= len(tail.events)
        if tail is None or tail.first + len(tail.events) != first_index:
            tail = _Tail(first_index, list(events))
        else:
            tail.events += events
        extra = len(tail.events) - _TAIL_EVENTS
        if extra > 0:
            del tail.events[:extra]
            tail.first += extra
        self._tails[session_id] = tail  # now the most recent
        self._tails_events += len(tail.events)
        while self._tails_events > _TAILS_EVENTS:
            oldest = next(iter(self._tails))
            self._tails_events -= len(self._tails.pop(oldest).events)

    def live(self, session_id: str, event: Event) -> None:
        """A running tool of the session reported `event` (not committed yet): hand it to the live readers."""
        for subscriber in self._subscribers.get(session_id, ()):
            if subscriber.wants_live:
                kept = subscriber._live
                if len(kept) >= _KEPT_EVENTS:
                    del kept[0]
                kept.append(event)
                subscriber._woken.set()

    def wake(self, session_id: str) -> None:
        """Make the session's readers re-read the store and re-check whether the turn settled."""
        for subscriber in self._subscribers.get(session_id, ()):
            subscriber._wake()

    def settled(self, session_id: str) -> None:
        """The session's work in this process ended: wake its readers to re-check it (its commits were published)."""
        for subscriber in self._subscribers.get(session_id, ()):
            subscriber._woken.set()

    def wake_all(self) -> None:
        """Wake every reader (shutdown)."""
        for subscribers in self._subscribers.values():
            for subscriber in subscribers:
                subscriber._wake()
