"""The argparse types of the command line's numeric options: each refuses what makes no sense, with a message."""

from __future__ import annotations

import argparse
import math

__all__ = ("port", "positive_int", "seconds")


def seconds(text: str) -> float:
    """A finite number of seconds > 0 (`--lease-s`, `--timeout`, ...)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """A whole number >= 1 (`--workers`, `--concurrency`, ...)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def port(text: str) -> int:
    """A TCP port, 0 to 65535 (0: the system picks a free one)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535 (0 picks a free one), got {text!r}")
    return value
