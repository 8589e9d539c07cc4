"""The event envelope: `meta` (`id`, `at`, `deliveryIds`) and how ids and timestamps are made.

Every event eve-py stores or streams is `{type, data, meta}`, as in eve 0.80.1. `meta.id` is
`evt_<ULID>` (sortable by creation time, unique without coordination), `meta.at` an ISO 8601
UTC timestamp with milliseconds, and `meta.deliveryIds` names the accepted messages that own
the turn the event belongs to (what `POST /eve/v1/session/{id}` returned as `deliveryId`).

Event ids are monotonic ULIDs: the random part is drawn once per process and counts up by one
per event, so a process's ids sort in the order it made them, and the ids of one write share
all but their last few letters (the SQLite store's deflate keeps a few bytes of each, not 17).
Other ids (`new_id`: sessions, turns, deliveries, workers) stay fully random: they must not be
guessable from one another.
"""

from __future__ import annotations

import itertools
import os
import secrets
import time

from eve_py._camel import CamelModel

__all__ = ("EventMeta", "new_event_id", "new_id", "now_iso")

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
# Two letters per 10 bits: the low bits of an id change on every call, and two indexings and a
# concatenation are far cheaper than five divisions (or base64's pure-Python b32encode).
_PAIRS = tuple(a + b for a in _CROCKFORD for b in _CROCKFORD)
_LOW_BITS = 20
_LOW_MASK = (1 << _LOW_BITS) - 1
_NS_PER_MS = 1_000_000

# Read through this name (not `time.time_ns` itself) so tests can set the clock.
_clock = time.time_ns


def _crockford(value: int, length: int) -> str:
    """`value`'s low `5 * length` bits as `length` Crockford letters, most significant first."""
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(5 * (length - 1), -1, -5))


# Each cache is one tuple, replaced whole: a thread reads it once and sees a consistent pair even
# while another thread replaces it (a race only computes the same value twice).
_stamp: tuple[int, int, str] = (0, 0, "")
"""The ids' timestamp letters: (the ms's first ns, the next ms's first ns, its 10 letters)."""
_stamp_head: tuple[int, str] = (-1, "")
"""(ms >> 10, its 8 letters): a new ms usually only changes the last two."""
_high: tuple[int, str] = (-1, "")
"""(random part >> 20, the 12 letters of its 60 bits)."""
_iso: tuple[int, int, str] = (0, 0, "")
"""`now_iso`'s text: (the ms's first ns, the next ms's first ns, the text)."""
_iso_second: tuple[int, str] = (-1, "")
"""(a second since the epoch, its `YYYY-MM-DDTHH:MM:SS` text)."""
_MILLIS = tuple(f".{millis:03d}Z" for millis in range(1000))

_base = 0
_counter = itertools.count()


def _reseed(base: int | None = None) -> None:
    """Draw a new per-process random base and restart the counter (after a fork, or in a test).

    Args:
        base: The random part of the next event id (tests pick edge values); drawn when None.
    """
    global _base, _counter, _high, _stamp
    # 79 bits: a counter starting below 2**79 needs 2**79 ids before the 80-bit part wraps.
    _base = secrets.randbits(79) if base is None else base
    _counter = itertools.count()
    _high = (-1, "")
    _stamp = (0, 0, "")


_reseed()
# A forked child would otherwise make the parent's next ids: two workers forked from one server
# writing the same ids into one store.
os.register_at_fork(after_in_child=_reseed)


def _stamp_at(ns: int) -> tuple[int, int, str]:
    """The timestamp letters for the ms `ns` falls in, cached unless the clock stepped back."""
    global _stamp, _stamp_head
    ms = ns // _NS_PER_MS
    head = _stamp_head
    if head[0] != ms >> 10:
        head = _stamp_head = (ms >> 10, _crockford(ms >> 10, 8))
    stamp = (ms * _NS_PER_MS, (ms + 1) * _NS_PER_MS, head[1] + _PAIRS[ms & 1023])
    # Never move the cache back: a thread that read the clock before another thread's newer
    # stamp was stored would otherwise put it back.
    if stamp[1] > _stamp[1]:
        _stamp = stamp
    return stamp


def _high_of(high: int) -> tuple[int, str]:
    """The 12 letters of the random part's 60 high bits, cached until the counter carries into them."""
    global _high
    # `high` reaches 2**60 only after 2**79 ids; 12 letters keep its low 60 bits, so the random
    # part then wraps modulo 2**80 (still unique for another 2**80 ids, still a valid ULID).
    _high = (high, _crockford(high, 12))
    return _high


def new_event_id() -> str:
    """A new event id: `evt_` and a monotonic ULID.

    The 48-bit timestamp is the current ms; the 80-bit random part is a per-process random value
    (drawn again in a forked child) plus a counter, so ids made by one thread increase, even
    within one ms, and consecutive ids differ only in their last letters. Two processes collide
    only if their counters' ranges meet within the same ms: as unlikely as two random ULIDs
    colliding.

    Returns:
        `evt_` followed by 26 Crockford base32 letters.
    """
    value = _base + next(_counter)
    ns = _clock()
    stamp = _stamp
    # Only a later ms moves the timestamp: if the wall clock steps back, ids keep the last ms
    # (and keep increasing) until it catches up.
    if ns >= stamp[1]:
        stamp = _stamp_at(ns)
    high = _high
    if value >> _LOW_BITS != high[0]:
        high = _high_of(value >> _LOW_BITS)
    low = value & _LOW_MASK
    return "evt_" + stamp[2] + high[1] + _PAIRS[low >> 10] + _PAIRS[low & 1023]


def new_id(prefix: str) -> str:
    """A new fully random ULID with a prefix (`ses_01J...`): sortable by creation ms, unguessable.

    Args:
        prefix: What comes before the `_` (`ses`, `turn`, `dlv`, ...).

    Returns:
        `prefix`, `_`, then 26 Crockford base32 letters: the current ms and 80 random bits.
    """
    ns = _clock()
    stamp = _stamp
    # Not clamped like event ids' (nothing orders these ids within a ms): always this ms's letters.
    if not stamp[0] <= ns < stamp[1]:
        stamp = _stamp_at(ns)
    value = int.from_bytes(os.urandom(10), "big")
    pairs = _PAIRS
    return (
        f"{prefix}_{stamp[2]}{pairs[value >> 70]}{pairs[(value >> 60) & 1023]}{pairs[(value >> 50) & 1023]}"
        f"{pairs[(value >> 40) & 1023]}{pairs[(value >> 30) & 1023]}{pairs[(value >> 20) & 1023]}"
        f"{pairs[(value >> 10) & 1023]}{pairs[value & 1023]}"
    )


def now_iso() -> str:
    """The current UTC time, ISO 8601 with milliseconds.

    Returns:
        The time as `2026-11-23T10:54:24.123Z` (truncated to the ms, as `datetime.isoformat` does).
    """
    global _iso, _iso_second
    ns = _clock()
    iso = _iso
    if iso[0] <= ns < iso[1]:
        return iso[2]
    ms = ns // _NS_PER_MS
    second, millis = divmod(ms, 1000)
    prefix = _iso_second
    if prefix[0] != second:
        prefix = _iso_second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
    iso = _iso = (ms * _NS_PER_MS, (ms + 1) * _NS_PER_MS, prefix[1] + _MILLIS[millis])
    return iso[2]


class EventMeta(CamelModel):
    """Where and when an event was recorded, and which accepted messages own its turn."""

    id: str
    at: str
    delivery_ids: list[str] | None = None
