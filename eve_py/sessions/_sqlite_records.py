"""How the SQLite store lays out a session's record and reads its logs: base records and deltas, chunks.

A record is stored as a *delta* (`eve_py.sessions._codec`) against the session's *base record*,
an earlier record kept in the same row: the writes of one turn differ from it by a few fields.
When the delta outgrows `REBASE_BYTES`, the record becomes the new base. A session's logs (its
events and its messages) are a series of chunks, each the JSON lines of one write: its events,
then its messages, in one row keyed by the index of its first event and of its first message.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from eve_py._lru import Recent
from eve_py.sessions._codec import Primed, decode, encode, encode_base, prime

__all__ = ("REBASE_BYTES", "SAME_AS_BASE", "BaseRecords", "append_chunk", "encode_chunk", "read_log")

REBASE_BYTES = 160
"""A record whose delta from the base is longer than this becomes the session's new base."""

GROWN_BYTES = 8 * REBASE_BYTES
"""A record this much longer than its base is made the new base without trying a delta first:
its new text alone would not deflate to `REBASE_BYTES` (a parked step is about 1.8 KB)."""

PRIMED_SESSIONS = 64
"""How many sessions' primed delta compressors are kept (about 80 KB each)."""

SAME_AS_BASE = b""
"""The `record` of a row whose record is its base."""

_MAX_INDEX = 2**62
"""Bounds clamped to this stay within SQLite's 64-bit integers (a larger int raises OverflowError)."""


class BaseRecords:
    """The last base record seen per session row (its stored bytes and its text), and the codec around it.

    Args:
        size: How many sessions' bases to keep.
    """

    def __init__(self, size: int) -> None:
        self._kept: Recent[int, tuple[bytes, str]] = Recent(size)
        self._primed: Recent[int, tuple[str, Primed]] = Recent(PRIMED_SESSIONS)
        """Per row, its base's text and a compressor primed with it: deltas copy it."""

    def last(self, rowid: int) -> bytes | None:
        """The stored bytes of the base last seen for the row (what its next write likely finds)."""
        kept = self._kept.get(rowid)
        return kept[0] if kept is not None else None

    def keep(self, rowid: int, blob: bytes, text: str, primed: Primed | None = None) -> None:
        """Remember that the row's base is `blob`, the encoding of `text` (`primed`: `prime(text)`, if made)."""
        self._kept.put(rowid, (blob, text))
        if primed is not None:
            self._primed.put(rowid, (text, primed))

    def text(self, rowid: int, blob: bytes | None) -> str | None:
        """The text of the base record stored as `blob` (decoded once per base, then kept)."""
        if blob is None:
            return None
        kept = self._kept.get(rowid)
        if kept is not None and kept[0] == blob:
            return kept[1]
        text = decode(blob)
        self._kept.put(rowid, (bytes(blob), text))
        return text

    def encode(self, rowid: int, record_json: str, base: bytes | None) -> tuple[bytes, bytes]:
        """The record's row as (record, base): a delta from the stored base, or the record as a new base."""
        text = self.text(rowid, base)
        if text is not None and base is not None and len(record_json) - len(text) <= GROWN_BYTES:
            delta = encode(record_json, primed=self._primer(rowid, text))
            if len(delta) <= REBASE_BYTES:
                return delta, base
        base, primed = encode_base(record_json)
        self.keep(rowid, base, record_json, primed)
        return SAME_AS_BASE, base

    def _primer(self, rowid: int, text: str) -> Primed:
        kept = self._primed.get(rowid)
        if kept is not None and kept[0] is text:  # the same base (its text is kept once per base)
            return kept[1]
        primed = prime(text)
        self._primed.put(rowid, (text, primed))
        return primed

    def decode(self, rowid: int, blob: bytes, base: bytes | None) -> str:
        """The record's JSON from its row."""
        text = self.text(rowid, base)
        if blob == SAME_AS_BASE and text is not None:
            return text
        return decode(blob, text)


_READS = {
    "events": (
        "SELECT event, messages, chunk FROM log WHERE session = ? AND event < ? AND event >= "
        "COALESCE((SELECT MAX(event) FROM log WHERE session = ? AND event <= ?), 0) ORDER BY event, message"
    ),
    # Only rows that hold messages are in the index `log_messages`, so only they are read.
    "messages": (
        "SELECT message, messages, chunk FROM log WHERE session = ? AND messages > 0 AND message < ? AND message >= "
        "COALESCE((SELECT MAX(message) FROM log WHERE session = ? AND messages > 0 AND message <= ?), 0) "
        "ORDER BY message"
    ),
}
"""Per log, the chunks holding its entries `[start, stop)`: the last one starting at or before
`start`, and those after it that start before `stop`. A write's indexes never go back, so a row
that starts at or before `start` without holding the entry (it holds none of that log) starts
at the next entry's index, and the entry is in a later row."""


def read_log(db: sqlite3.Connection, log: str, rowid: int, start: int, stop: int | None) -> list[str]:
    """The JSON lines of log `log` (`events` or `messages`) with index in `[start, stop)` of session row `rowid`."""
    start = min(max(start, 0), _MAX_INDEX)
    stop = _MAX_INDEX if stop is None else min(max(stop, 0), _MAX_INDEX)
    if start >= stop:
        return []
    events = log == "events"
    lines = []
    for first, messages, chunk in db.execute(_READS[log], (rowid, stop, rowid, start)).fetchall():
        entries = decode(chunk).split("\n")
        split = len(entries) - messages  # a chunk's events come first, then its messages
        for index, line in enumerate(entries[:split] if events else entries[split:], start=first):
            if start <= index < stop:
                lines.append(line)
    return lines


def encode_chunk(events: Sequence[str], messages: Sequence[str]) -> bytes | None:
    """One write's log entries, its events then its messages, as one encoded chunk (JSON lines:
    JSON text never holds a raw newline); one deflate stream finds a message's text in its event."""
    if not messages:
        return encode("\n".join(events)) if events else None
    return encode("\n".join((*events, *messages)))


def append_chunk(
    db: sqlite3.Connection, rowid: int, event: int, message: int, messages: int, chunk: bytes | None
) -> None:
    """Append `chunk` (if any) to the log of session row `rowid`: its events start at index `event`,
    its messages (the last `messages` of its lines) at index `message`."""
    if chunk is not None:
        db.execute(
            "INSERT INTO log (session, event, message, messages, chunk) VALUES (?, ?, ?, ?, ?)",
            (rowid, event, message, messages, chunk),
        )
