"""How `chat` and `run` show a turn to a person: the agent's text as it streams, tool results,
failures, how a request ended when someone else answered it (`approved by alice`) or nobody did
(`expired`), a running tool's progress reports and log entries (dim on a terminal), and a status
line while a model request is being retried.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from eve_py._lru import Recent
from eve_py.cli._deadlines import clock, deadline_of
from eve_py.cli._prompts import _plain, describe_answer
from eve_py.models._http import RETRY_LOGGER, noticing_waits
from eve_py.protocol import (
    ActionLog,
    ActionProgress,
    ActionResult,
    AnyEvent,
    InputRequested,
    InputResolved,
    MessageAppended,
    MessageCompleted,
    TurnFailed,
)
from eve_py.protocol.payloads import InputResolution
from eve_py.protocol.requests import InputRequest

__all__ = ("Renderer", "say", "showing_retries")


def say(text: str = "", *, err: bool = False) -> None:
    """Print one line to stdout (or stderr), flushed: a person is watching."""
    print(text, file=sys.stderr if err else sys.stdout, flush=True)


def _dim(text: str) -> None:
    """A side line (a tool's progress or log entry): dim on a terminal, plain when piped."""
    say(f"\x1b[2m{text}\x1b[0m" if sys.stdout.isatty() else text)


_LOCAL = "local"
"""Who answered in this terminal (`respond()`'s default): the person watching, so not named."""

_KEPT = 4096
"""How many requests (and shown event ids) a renderer remembers."""


class Renderer:
    """Shows events to a person: the agent's text (streamed as it arrives), tool results, failures,
    and each request answered by someone else (`approved by alice`) or by nobody (`expired`).

    Args:
        now: The clock (Unix seconds): a deadline on another UTC day is shown with its date.
    """

    def __init__(self, *, now: Callable[[], float] = time.time) -> None:
        self._streaming: set[tuple[str, int]] = set()
        self._now = now
        self._requests: Recent[str, InputRequest] = Recent(_KEPT)
        self._shown: Recent[str, bool] = Recent(_KEPT)

    def remember(self, requests: Iterable[InputRequest]) -> None:
        """Know these requests (prompt, options, deadline) for their resolutions, e.g. a batch
        parked before this process started, whose `input.requested` it never saw."""
        for request in requests:
            self._requests.put(request.request_id, request)

    def catch_up(self, events: Iterable[AnyEvent]) -> None:
        """Show those of `events` not shown yet: what another process wrote (its answers, results, replies)."""
        for event in events:
            if event.meta is None or self._shown.get(event.meta.id) is None:
                self(event)

    def __call__(self, event: AnyEvent) -> None:
        if event.meta is not None:
            self._shown.put(event.meta.id, True)
        if isinstance(event, InputRequested):
            self.remember(event.data.input_requests())
        elif isinstance(event, InputResolved):
            for resolution in event.data.resolutions:
                line = self._resolution(resolution)
                if line is not None:
                    say(line)
        elif isinstance(event, MessageAppended):
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
        elif isinstance(event, ActionProgress):
            done = event.data
            of = "" if done.total is None else f"/{done.total:g}"
            _dim(f"  .. {done.tool_name} {done.progress:g}{of}" + (f": {done.message}" if done.message else ""))
        elif isinstance(event, ActionLog):
            entry = event.data
            text = entry.data if isinstance(entry.data, str) else json.dumps(entry.data, ensure_ascii=False)
            _dim(f"  .. {entry.tool_name} {entry.level}" + (f" {entry.logger}" if entry.logger else "") + f": {text}")
        elif isinstance(event, TurnFailed):
            say(f"turn failed: {event.data.message}", err=True)

    def _resolution(self, resolution: InputResolution) -> str | None:
        """`  ? <prompt> - approved by alice`, `... - expired: nobody answered by 10:05:00 UTC`, or None
        (an answer given here, or a request withdrawn: nothing the person does not know)."""
        request = self._requests.get(resolution.request_id)
        subject = f"  ? {request.prompt if request is not None else resolution.request_id} - "
        if resolution.outcome == "expired":
            at = deadline_of(request.expires_at) if request is not None else None
            return subject + "expired: nobody answered " + ("in time" if at is None else f"by {clock(at, self._now())}")
        who, response = resolution.answered_by, resolution.response
        if who is None or who == _LOCAL:
            return None
        if resolution.outcome == "approved" and response is not None and response.edited_input is not None:
            return subject + f"approved by {who} with changes: {_plain(response.edited_input)}"
        if resolution.outcome == "denied" and response is not None and response.text:
            return subject + f"denied by {who}: {response.text}"
        if resolution.outcome == "answered" and request is not None and response is not None:
            return subject + f"answered by {who}: {describe_answer(request, response)}"
        return subject + f"{resolution.outcome} by {who}"


class _RetryLine(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        say(f"  ... {record.getMessage()}", err=True)


@contextmanager
def showing_retries() -> Iterator[None]:
    """While inside, each retry of a model request, and a model slow to answer, prints a status line
    on stderr (the wait is otherwise silent)."""
    handler = _RetryLine(logging.INFO)
    level = RETRY_LOGGER.level
    RETRY_LOGGER.addHandler(handler)
    RETRY_LOGGER.setLevel(logging.INFO)
    try:
        with noticing_waits():
            yield
    finally:
        RETRY_LOGGER.removeHandler(handler)
        RETRY_LOGGER.setLevel(level)
