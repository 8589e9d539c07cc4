"""How `chat` and `run` show a turn to a person: the agent's text as it streams, tool results,
failures, and a status line while a model request is being retried.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from eve_py.models._http import RETRY_LOGGER
from eve_py.protocol import ActionResult, AnyEvent, MessageAppended, MessageCompleted, TurnFailed

__all__ = ("Renderer", "say", "showing_retries")


def say(text: str = "", *, err: bool = False) -> None:
    """Print one line to stdout (or stderr), flushed: a person is watching."""
    print(text, file=sys.stderr if err else sys.stdout, flush=True)


class Renderer:
    """Shows events to a person: the agent's text (streamed as it arrives), tool results, failures."""

    def __init__(self) -> None:
        self._streaming: set[tuple[str, int]] = set()

    def __call__(self, event: AnyEvent) -> None:
        if isinstance(event, MessageAppended):
            step = (event.data.turn_id, event.data.step_index)
            if step not in self._streaming:
                self._streaming.add(step)
                print("agent > ", end="", flush=True)
            print(event.data.message_delta, end="", flush=True)
        elif isinstance(event, MessageCompleted):
            step = (event.data.turn_id, event.data.step_index)
            if step in self._streaming:
                self._streaming.discard(step)
                say()  # the text is already on screen
            else:
                say(f"agent > {event.data.message}")
        elif isinstance(event, ActionResult):
            result = event.data.result
            mark = "x" if result.is_error else "<-"
            say(f"  {mark} {result.tool_name}: {json.dumps(result.output, ensure_ascii=False)}")
        elif isinstance(event, TurnFailed):
            say(f"turn failed: {event.data.message}", err=True)


class _RetryLine(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        say(f"  ... {record.getMessage()}", err=True)


@contextmanager
def showing_retries() -> Iterator[None]:
    """While inside, each retry of a model request prints a status line on stderr (the wait is otherwise silent)."""
    handler = _RetryLine(logging.INFO)
    level = RETRY_LOGGER.level
    RETRY_LOGGER.addHandler(handler)
    RETRY_LOGGER.setLevel(logging.INFO)
    try:
        yield
    finally:
        RETRY_LOGGER.removeHandler(handler)
        RETRY_LOGGER.setLevel(level)
