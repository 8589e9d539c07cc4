"""Retries for model providers: exponential backoff with jitter, `Retry-After`, and a budget.

A request is retried when the provider cannot be reached (connect error, timeout, dropped
connection) or answers 408, 429 or 5xx (Anthropic's 529 "overloaded" included). Any other
4xx is final. The wait before retry `n` (1-based) is drawn from
`[d / 2, d]` with `d = min(max_delay_s, base_delay_s * 2 ** (n - 1))` ("equal jitter"); when
the answer carries `Retry-After` (seconds or an HTTP date) or `retry-after-ms`, that wait is
used instead, exactly. Retrying stops at `max_attempts` attempts, or as soon as the next wait
would end after `budget_s` seconds counted from the first attempt; the last error is raised.

With the defaults (4 attempts, 0.5 s base, 8 s cap, 60 s budget) a request is tried at most 4
times and gives up after about 0.5 + 1 + 2 = 3.5 s of backoff at most, unless the provider
asks for longer waits with `Retry-After` (then at most 60 s in all). A streaming response is
never retried once its body started: its deltas may already have been shown.

`sleep`, `clock` and `random` are injectable, so tests can check the waits without sleeping.
"""

from __future__ import annotations

import random as _random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime

import anyio

__all__ = ("RETRYABLE_STATUSES", "RetryPolicy", "Sleep", "retry_after_seconds")

Sleep = Callable[[float], Awaitable[None]]
"""An async function that waits the given number of seconds (`anyio.sleep` by default)."""

RETRYABLE_STATUSES = frozenset({408, 429})
"""Status codes below 500 that are retried; every 5xx is retried too."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RetryPolicy:
    """How often and how long a model request is retried.

    Attributes:
        max_attempts: Attempts in all, the first included (1 turns retries off).
        base_delay_s: The first backoff, in seconds; it doubles with each retry.
        max_delay_s: The longest backoff, in seconds (`Retry-After` may ask for longer).
        budget_s: Seconds from the first attempt after which no retry starts; a wait that
            would end later is not taken and the last error is raised instead.
        sleep: Waits between attempts; tests inject a fake.
        clock: Monotonic seconds, for the budget; tests inject a fake.
        random: Returns a float in [0, 1), for the jitter; tests inject a fixed one.
    """

    max_attempts: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    budget_s: float = 60.0
    sleep: Sleep = field(default=anyio.sleep, repr=False, compare=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)
    random: Callable[[], float] = field(default=_random.random, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"RetryPolicy.max_attempts must be at least 1, got {self.max_attempts}")
        if self.base_delay_s < 0 or self.max_delay_s < 0 or self.budget_s < 0:
            raise ValueError("RetryPolicy delays and budget must not be negative")

    def backoff(self, retry: int) -> float:
        """The jittered wait before retry number `retry` (1 for the first retry), in seconds."""
        ceiling = min(self.max_delay_s, self.base_delay_s * 2.0 ** (retry - 1))
        return ceiling / 2 + ceiling / 2 * self.random()

    def is_retryable(self, status: int) -> bool:
        """Whether an answer with this HTTP status is worth another attempt."""
        return status >= 500 or status in RETRYABLE_STATUSES


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """How long the provider asks to wait, from `retry-after-ms` or `Retry-After`, in seconds.

    Args:
        headers: The response headers (case-insensitive mapping, e.g. `httpx.Headers`).
        now: The current Unix time, for an HTTP-date `Retry-After`; defaults to `time.time()`.

    Returns:
        The wait (never negative), or None when neither header is present and valid.
    """
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
