"""The NDJSON event stream of one session, as eve 0.80.1 serves it: headers, cursor, following, leases.

A reader gets the stored events from its `startIndex`, then live ones as they are committed
(the hub wakes it, for other processes' commits too on a store with a feed; without one,
those are found by re-reading every `recheck_s` seconds, when a turn whose worker died is also
taken over). The response ends at the stored tail (`follow=false`), after a terminal
`session.completed` / `session.failed`, or after `lease_s` quiet seconds, when a reader that
asked for eve's control records (`streamControlVersion=1`) gets `stream.lease-ended` first. A
client then reconnects from its cursor, as eve's does; every line is a stored event, so the
cursor is simply the number of lines read.

eve-py's extension, `live=1`: a running tool's progress reports and log entries are also sent
as they happen, each as a transport record `{"$evePy": "live", "event": {...}}` that is not a
stored event and does not count in the cursor; the stored copy of the event (same `meta.id`)
comes as a line of its own when the call's result is committed. The browser chat asks for them;
eve's client never does, so its cursor never sees them.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

import anyio
from anyio.abc import TaskGroup
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from eve_py.protocol import Event, encode_event
from eve_py.server._bodies import bad_request
from eve_py.server._hub import Subscriber
from eve_py.sessions import SessionStore

__all__ = (
    "NDJSON",
    "STREAM_VERSION",
    "Encoding",
    "EventStreamResponse",
    "StreamReader",
    "live_record",
    "start_index",
    "stream_headers",
)

STREAM_VERSION = "26"
"""The `x-eve-stream-version` of every stream (eve 0.80.1's; its client accepts 21 to 26)."""
NDJSON = "application/x-ndjson; charset=utf-8"
_MAX_SAFE_INTEGER = 2**53 - 1
_LEASE_ENDED = b'{"$eve":"stream.lease-ended","version":1}\n'
"""eve's transport record: this response ends, reconnect from your cursor (never a session event)."""
_TERMINAL = ("session.completed", "session.failed")
_LIVE = b'{"$evePy":"live","event":'


def live_record(event: Event) -> bytes:
    """One `live=1` transport record: `{"$evePy": "live", "event": <the event>}` and a newline."""
    return _LIVE + encode_event(event).rstrip(b"\n") + b"}\n"


def start_index(raw: str) -> int:
    """`startIndex` as eve reads it: an integer within JavaScript's safe range.

    Raises:
        ApiError: 400 `Expected startIndex to be an integer.`
    """
    if not re.fullmatch(r"-?\d+", raw) or abs(int(raw)) > _MAX_SAFE_INTEGER:
        raise bad_request("Expected startIndex to be an integer.")
    return int(raw)


def stream_headers(session_id: str, start: int, tail: int | None, *, version: str = STREAM_VERSION) -> dict[str, str]:
    """The response headers; `tail` (the last stored index, -1 when none) only when asked for."""
    headers = {
        "x-eve-session-id": session_id,
        "x-eve-stream-version": version,
        "x-eve-stream-format": "ndjson",
        "x-eve-start-index": str(start),
        "cache-control": "no-store",
        "x-accel-buffering": "no",
    }
    if tail is not None:
        headers["x-eve-stream-tail-index"] = str(tail)
    return headers


class Encoding:
    """How a stream's lines and transport records are written: eve 0.80.1's (version 26) by default.

    Args:
        control: Whether the reader asked for eve 0.80.1's control records (`streamControlVersion=1`):
            then a lease that ends says so.
    """

    opening = b""
    """Sent when the response opens."""
    heartbeat = b""
    """Sent each time a quiet stream re-reads the store."""
    ended = b""
    """Sent after the session's last event (it ended)."""

    def __init__(self, *, control: bool = False) -> None:
        self.lease_ended = _LEASE_ENDED if control else b""
        """Sent when the response ends before the session did."""

    def encode(self, events: list[Event]) -> bytes:
        """The NDJSON lines of stored events, one per event."""
        return b"".join(encode_event(event) for event in events)

    def finish(self) -> None:
        """The response's lines ended (however they ended): nothing more is encoded."""


class StreamReader:
    """Reads one session's log for one response.

    Args:
        store: Where the events are.
        subscriber: The hub subscription that wakes this reader (taken before the first read).
        lease_s: Quiet seconds after which the response ends.
        recheck_s: How often to re-read the store without a wake (commits of other processes).
        closing: Whether the server is shutting down (the response then ends).
        unsubscribe: Called with `subscriber` when the response ends.
        on_quiet: Awaited each time `recheck_s` passed without a wake (the server checks then
            whether the turn's worker died, and finishes its turn).
    """

    def __init__(
        self,
        store: SessionStore,
        subscriber: Subscriber,
        *,
        lease_s: float,
        recheck_s: float,
        closing: Callable[[], bool],
        unsubscribe: Callable[[Subscriber], None],
        on_quiet: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._store = store
        self._subscriber = subscriber
        self._lease_s = lease_s
        self._recheck_s = recheck_s
        self._closing = closing
        self._unsubscribe = unsubscribe
        self._on_quiet = on_quiet

    async def lines(
        self, start: int, *, stop: int | None, encoding: Encoding, first: list[Event] | None = None
    ) -> AsyncIterator[bytes]:
        """NDJSON from index `start` (to `stop`, exclusive, when bounded), then live, until the response ends.

        `encoding` writes the lines (eve 0.80.1's events, or eve 1.0's commits) and the transport
        records around them. `first`: the events from `start` on when the caller has them already
        (`Hub.recent`); else they are read from the store. A subscriber that `wants_live` also gets
        running tools' reports as `live_record`s.
        """
        session_id = self._subscriber.session_id
        try:
            if encoding.opening:
                yield encoding.opening
            cursor = start
            quiet_until = anyio.current_time() + self._lease_s
            taken = first
            while True:
                if taken is None:
                    events = await self._store.read_events(session_id, cursor, stop)
                else:  # this process's commits, handed over by the hub
                    events = taken if stop is None else taken[: max(0, stop - cursor)]
                if events:
                    cursor += len(events)
                    quiet_until = anyio.current_time() + self._lease_s
                    yield encoding.encode(events)
                    if events[-1].type in _TERMINAL:
                        if encoding.ended:
                            yield encoding.ended
                        return
                if self._subscriber.wants_live and (live := self._subscriber.take_live()):
                    quiet_until = anyio.current_time() + self._lease_s
                    yield b"".join(live_record(event) for event in live)
                if stop is not None and cursor >= stop:
                    return
                left = quiet_until - anyio.current_time()
                if left <= 0 or self._closing():
                    if encoding.lease_ended:
                        yield encoding.lease_ended
                    return
                woken = await self._subscriber.wait(min(self._recheck_s, left))
                if self._subscriber.gone:
                    return
                taken = self._subscriber.take(cursor) if woken else None
                if not woken:
                    if encoding.heartbeat:
                        yield encoding.heartbeat
                    if self._on_quiet is not None:
                        await self._on_quiet()
        finally:
            self._unsubscribe(self._subscriber)
            encoding.finish()


class EventStreamResponse(Response):
    """The NDJSON response of one `StreamReader`, sent by the request's own task.

    Starlette's `StreamingResponse` runs each response in a task group of its own with a task
    listening for the client's disconnect, and cancels it when either ends. Here one task started
    in `listeners` (the app's, for its lifetime) waits for the disconnect and tells the reader to
    stop (`Subscriber.leave`), which it does at its next wake; the task ends by itself once the
    response is complete, when the server reports the request as over.

    Args:
        lines: The reader's `lines`.
        subscriber: The reader's subscription (left when the client disconnects).
        headers: The response headers (`stream_headers`).
        listeners: Where the disconnect listener runs.
        unsubscribe: Called with `subscriber` when the response ends, however it ends.
    """

    media_type = NDJSON

    def __init__(
        self,
        lines: AsyncIterator[bytes],
        subscriber: Subscriber,
        headers: Mapping[str, str],
        listeners: TaskGroup,
        unsubscribe: Callable[[Subscriber], None],
    ) -> None:
        self._lines = lines
        self._subscriber = subscriber
        self._listeners = listeners
        self._unsubscribe = unsubscribe
        self.status_code = 200
        self.background = None
        self.init_headers(headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self._listeners.start_soon(_listen, receive, self._subscriber)
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            async for chunk in self._lines:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            # The reader unsubscribes when its lines end; lines never started (a server whose
            # `send` raised for a client already gone) would not, and the hub would keep waking it.
            self._unsubscribe(self._subscriber)


async def _listen(receive: Receive, subscriber: Subscriber) -> None:
    """Wait for the request's `http.disconnect` (the client left, or the response is complete); then leave."""
    while (await receive())["type"] != "http.disconnect":
        pass
    subscriber.leave()
