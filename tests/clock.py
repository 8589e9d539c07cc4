"""A clock the tests move forward: `time.time` shifted for everyone, or for one task only.

Deadlines (request expiry, answer links) are Unix times, so a shifted `time.time` is all a
passed deadline needs: no test sleeps. The per-task shift (a context variable) lets one task
stand after a deadline while another stands before it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextvars import ContextVar

import pytest

_task_shift: ContextVar[float] = ContextVar("clock_shift", default=0.0)


class Clock:
    """`time.time` moved forward: `set(61)` for everyone, `set_for_task(61)` for the current task only."""

    def __init__(self) -> None:
        self.shift = 0.0

    def set(self, seconds: float) -> None:
        """Stand `seconds` later from now on, in every task."""
        self.shift = seconds

    def set_for_task(self, seconds: float) -> None:
        """Stand `seconds` later (beyond `set`'s shift) in the current task and the tasks it starts."""
        _task_shift.set(seconds)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    """A `Clock` for the test; `time.time` is restored after it."""
    real = time.time
    made = Clock()
    monkeypatch.setattr(time, "time", lambda: real() + made.shift + _task_shift.get())
    yield made
