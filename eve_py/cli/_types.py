"""The command line's argparse parts: a parser that takes positionals anywhere, and number types with messages.

Each number type refuses what makes no sense (a port past 65535, a lease of -1 s) with a message
saying what it expected.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence

__all__ = ("CommandParser", "port", "positive_int", "seconds")


class CommandParser(argparse.ArgumentParser):
    """An `ArgumentParser` that takes positionals among the options (`run APP --model mock "hi"`).

    Plain argparse fills every positional from the first run of bare words, so a message after
    an option is refused as unrecognized. A command's parser therefore parses the way
    `parse_intermixed_args` does; a parser holding subcommands (`eve-py` itself, `store`) cannot,
    and parses as argparse always has. Subcommands' parsers are of the parent's class.
    """

    _intermixing = False

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        # parse_known_intermixed_args calls back into this method for each of its two passes.
        if self._intermixing or any(action.nargs in (argparse.PARSER, argparse.REMAINDER) for action in self._actions):
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


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
