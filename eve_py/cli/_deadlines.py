"""A request's deadline in words, for the terminal: how long is left to answer, and until when.

Times are shown in UTC (`10:05:00 UTC`), with the date when the deadline is not on the same
UTC day as now; a duration is floored to whole seconds and shown in its two largest units.
"""

from __future__ import annotations

from datetime import UTC, datetime

from eve_py.protocol.requests import InputRequest, parse_deadline

__all__ = ("clock", "deadline_of", "duration", "time_left")

_UNITS = ((86400, "d"), (3600, "h"), (60, "min"), (1, "s"))


def duration(seconds: float) -> str:
    """`seconds` (floored; a negative one counts as 0) as `42 s`, `4 min 59 s`, `2 h`, `3 d 4 h`."""
    rest = max(0, int(seconds))
    counts = []
    for size, unit in _UNITS:
        count, rest = divmod(rest, size)
        counts.append((count, unit))
    first = next((index for index, (count, _) in enumerate(counts) if count), len(counts) - 1)
    shown = [f"{count} {unit}" for count, unit in counts[first : first + 2] if count]
    return " ".join(shown) or "0 s"


def clock(at: float, now: float) -> str:
    """Unix time `at` as `10:05:00 UTC`, or `2026-11-26 10:05:00 UTC` when it is not on `now`'s UTC day."""
    moment = datetime.fromtimestamp(at, UTC)
    same_day = moment.date() == datetime.fromtimestamp(now, UTC).date()
    return moment.strftime("%H:%M:%S UTC" if same_day else "%Y-%m-%d %H:%M:%S UTC")


def deadline_of(expires_at: str | None) -> float | None:
    """An `expiresAt` value as Unix time, or None when there is none or it is not an RFC 3339 time."""
    if expires_at is None:
        return None
    try:
        return parse_deadline(expires_at)
    except ValueError:
        return None


def time_left(request: InputRequest, now: float) -> str | None:
    """How long is left to answer `request` at Unix time `now`, in words; None when it never expires.

    `answer within 4 min 59 s (by 10:05:00 UTC)`, or `the time to answer ran out at 10:05:00 UTC`
    once the deadline has passed (the request is about to resolve as expired).
    """
    if request.expires_at is None:
        return None
    at = deadline_of(request.expires_at)
    if at is None:
        return f"answer by {request.expires_at}"
    if at <= now:
        return f"the time to answer ran out at {clock(at, now)}"
    return f"answer within {duration(at - now)} (by {clock(at, now)})"
