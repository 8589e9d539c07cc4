"""The checking steps of the eval driver `t`: look at what a session recorded, and fail with a report.

`EvalChecks` holds them; `EvalDriver` (`eve_py.evals._driver`, the driving steps) inherits them.
A check is a numbered step like a driving step; it reads the state the driver keeps and raises
`EvalAssertionError` when it is not what the eval expects. The error names the eval and the step
and shows the events that matter for the check.

Scope: `completed`, `waiting`, `expect_input_requests` and `message_includes` look at the last
turn (the last `send`/`respond`); `called_tool`, `not_called_tool`, `single_result`,
`did_not_fail` and `event_order` look at the whole current session (`new_session` starts over).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import NoReturn

from eve_py.errors import EvalAssertionError, EvalConfigurationError
from eve_py.evals._calls import ToolCall
from eve_py.evals._labels import calls_block, request_line, step_label
from eve_py.evals._matching import Expected, describe, event_pattern, matches, pattern_types, render_json
from eve_py.protocol import ActionResult, AnyEvent, payload
from eve_py.protocol.messages import Message
from eve_py.protocol.requests import Display, InputRequest
from eve_py.protocol.turns import TurnResult, TurnResultStatus

__all__ = ("EvalChecks", "Turn")

_TOOL_EVENTS = frozenset({"actions.requested", "action.result", "input.requested", "input.resolved"})
_FAILURE_EVENTS = frozenset({"turn.failed", "session.failed"})
_MAX_SHOWN_EVENTS = 30


class Turn:
    """What one `send`, `respond` or `respond_all` call left the session in.

    Attributes:
        status: `completed`, `waiting` (parked on `input_requests`) or `failed` (see `error`).
        input_requests: The open requests when waiting, else empty.
        message: The assistant's last text during this call, if any.
        error: Why the turn failed.
        events: The events stored during this call, oldest first.
        session_id: The session the call ran in.
    """

    def __init__(self, driver: EvalChecks, result: TurnResult, events: list[AnyEvent], start: int) -> None:
        self._driver = driver
        self._start = start
        self.status: TurnResultStatus = result.status
        self.input_requests: list[InputRequest] = list(result.input_requests)
        self.message: str | None = result.message
        self.error: str | None = result.error
        self.events = events
        self.session_id = result.session_id

    def expect_ok(self) -> Turn:
        """Check that this turn did not fail (it completed or is waiting for input); returns self.

        Raises:
            EvalAssertionError: The turn failed.
        """
        self._driver._begin("expect_ok()")
        if self.status == "failed":
            self._driver._fail(f"the turn failed: {self.error}", self._driver._last_turn_events())
        return self

    def __repr__(self) -> str:
        return f"Turn(status={self.status!r}, requests={len(self.input_requests)}, message={self.message!r})"


class EvalChecks(ABC):
    """The checking steps of `t`, and the failure reports they raise; `EvalDriver` inherits them.

    The checks read the state the driver keeps: `eval_id`; `step` and `label`, which `_begin`
    moves on at every step, driving or checking; the current session's events (`_events`) and
    conversation (`_conversation`, None where it cannot be read); and the accessors a driver
    implements: `session_id`, `last_turn`, `tool_calls` and `_last_turn_events`.
    """

    eval_id: str
    step: int
    label: str
    _events: list[AnyEvent]
    _conversation: list[Message] | None

    @property
    @abstractmethod
    def session_id(self) -> str | None:
        """The current session's id (None before the first `send`)."""

    @property
    @abstractmethod
    def last_turn(self) -> Turn | None:
        """The result of the last `send`/`respond` in the current session."""

    @abstractmethod
    def tool_calls(self, name: str | None = None) -> list[ToolCall]:
        """The current session's tool calls (only those of tool `name`, if given), in order."""

    @abstractmethod
    def _last_turn_events(self) -> list[tuple[int, AnyEvent]]:
        """The last turn's events with their indices in the session's log."""

    # -- checks on the last turn ---------------------------------------------------------------

    def expect_input_requests(
        self,
        *,
        tool_name: str | None = None,
        display: Display | None = None,
        option_ids: Collection[str] | None = None,
        prompt: str | re.Pattern[str] | None = None,
        kind: str | None = None,
        times: int | None = None,
    ) -> list[InputRequest]:
        """Check that the last turn parked on requests like these, and return them.

        Args:
            tool_name: The parked call's tool.
            display: `text`, `select`, `confirmation` or `form`.
            option_ids: The offered option ids, in any order (exactly these).
            prompt: A substring of the prompt, or a pattern it must contain.
            kind: `question`, `client-tool`, `tool-approval` or `elicitation`.
            times: Exactly this many open requests must match (default: at least one).

        Raises:
            EvalAssertionError: The turn is not waiting, or too few or too many requests match.
        """
        self._begin(
            step_label(
                "expect_input_requests",
                tool_name=tool_name,
                display=display,
                option_ids=list(option_ids) if option_ids is not None else None,
                prompt=prompt,
                kind=kind,
                times=times,
                omit_none=True,
            )
        )
        turn = self.last_turn
        if turn is None:
            self._fail("expected the last turn to wait for input, but no turn ran yet", [])
        if turn.status != "waiting":
            state = turn.status + (f" ({turn.error})" if turn.error else "")
            self._fail(f"expected the last turn to wait for input, but it is {state}", self._last_turn_events())

        def fits(request: InputRequest) -> bool:
            return (
                (tool_name is None or request.action.tool_name == tool_name)
                and (display is None or request.display == display)
                and (kind is None or request.kind == kind)
                and (option_ids is None or sorted(request.option_ids()) == sorted(option_ids))
                and (prompt is None or _text_has(request.prompt, prompt))
            )

        found = [request for request in turn.input_requests if fits(request)]
        if (times is None and not found) or (times is not None and len(found) != times):
            wanted = "at least 1" if times is None else f"exactly {times}"
            lines = "\n".join(f"    - {request_line(r)}" for r in turn.input_requests)
            self._fail(
                f"expected {wanted} matching input request(s), found {len(found)}; the open requests:\n{lines}",
                self._indexed(lambda e: e.type == "input.requested"),
            )
        return found

    def completed(self) -> Turn:
        """Check that the last turn completed (did not fail and is not waiting for input)."""
        return self._expect_status("completed")

    def waiting(self) -> Turn:
        """Check that the last turn is parked, waiting for input."""
        return self._expect_status("waiting")

    def message_includes(self, expected: str | re.Pattern[str]) -> str:
        """Check that the last turn's final assistant text contains `expected` (a substring, or a
        pattern it must contain; use `re.compile(..., re.I)` to ignore case). Returns the text."""
        self._begin(step_label("message_includes", expected))
        turn = self.last_turn
        text = turn.message if turn is not None else None
        if text is None:
            self._fail("the last turn has no assistant text", self._indexed(_message_event))
        if not _text_has(text, expected):
            self._fail(f"the assistant's text does not contain {describe(expected)}:\n    {text!r}", [])
        return text

    # -- checks on the whole session -----------------------------------------------------------

    def did_not_fail(self) -> None:
        """Check that no turn of the current session failed (no `turn.failed`/`session.failed`)."""
        self._begin("did_not_fail()")
        failures = self._indexed(lambda e: e.type in _FAILURE_EVENTS)
        if failures:
            self._fail(f"{len(failures)} failure event(s) in the session", failures)
        turn = self.last_turn
        if turn is not None and turn.status == "failed":
            self._fail(f"the last turn failed: {turn.error}", self._last_turn_events())

    def called_tool(
        self,
        name: str,
        *,
        input: Expected | None = None,  # noqa: A002  # the tool call's field is named input
        output: Expected | None = None,
        is_error: bool | None = None,
        times: int | None = None,
    ) -> list[ToolCall]:
        """Check that the model called tool `name` in this session, and return the matching calls.

        Args:
            name: The tool's name.
            input: The call's input must match (dicts match on the keys given; see
                `eve_py.evals._matching`).
            output: The call's result must match (a call without a result yet never does).
            is_error: Whether the result must be an error (True) or not (False).
            times: Exactly this many calls must match (default: at least one).

        Raises:
            EvalAssertionError: Too few or too many calls match.
        """
        self._begin(
            step_label("called_tool", name, input=input, output=output, is_error=is_error, times=times, omit_none=True)
        )
        calls = self.tool_calls()
        found = [
            call
            for call in calls
            if call.tool_name == name
            and (input is None or matches(input, call.input))
            and (output is None or (call.has_result and matches(output, call.output)))
            and (is_error is None or (call.has_result and call.is_error == is_error))
        ]
        if (times is None and not found) or (times is not None and len(found) != times):
            wanted = "at least 1" if times is None else f"exactly {times}"
            conditions = [
                f"{key}={describe(value)}" for key, value in (("input", input), ("output", output)) if value is not None
            ]
            if is_error is not None:
                conditions.append(f"is_error={is_error}")
            where = f" with {', '.join(conditions)}" if conditions else ""
            self._fail(
                f"expected {wanted} call(s) of {name!r}{where}, found {len(found)}\n{calls_block(calls)}",
                self._indexed(lambda e: e.type in _TOOL_EVENTS),
            )
        return found

    def not_called_tool(self, name: str) -> None:
        """Check that the model never called tool `name` in this session."""
        self._begin(step_label("not_called_tool", name))
        calls = self.tool_calls()
        if any(call.tool_name == name for call in calls):
            self._fail(f"expected no call of {name!r}\n{calls_block(calls)}", self._indexed(_tool_event(name)))

    def single_result(self, call_id: str | None = None) -> None:
        """Check that a call (every call of the session, without `call_id`) has exactly one result.

        Counts the results in the session's conversation (what the model is sent), so a parked
        call that got two results, or none, is caught. Where the conversation cannot be read,
        counts them in the events.
        """
        self._begin(step_label("single_result", call_id, omit_none=True))
        calls = self.tool_calls()
        if call_id is not None and not any(call.call_id == call_id for call in calls):
            self._fail(f"no tool call with id {call_id!r} in this session\n{calls_block(calls)}", [])
        bad = [call for call in calls if (call_id is None or call.call_id == call_id) and call.result_count != 1]
        if bad:
            where = "in the conversation" if self._conversation is not None else "in the events"
            counts = ", ".join(f"{call.tool_name} {call.call_id}: {call.result_count}" for call in bad)
            self._fail(
                f"expected exactly one result per call {where}; found {counts}\n{calls_block(calls)}",
                self._indexed(lambda e: e.type in _TOOL_EVENTS),
            )

    def event_order(self, *patterns: str | Mapping[str, object]) -> list[AnyEvent]:
        """Check that events like these occur in this order in the session (others may come between).

        Args:
            patterns: An event type (`"input.requested"`), or a mapping with `type` and fields
                its `data` must match (`{"type": "action.result", "result": {"toolName": "note"}}`).

        Returns:
            The matched events, one per pattern.

        Raises:
            EvalConfigurationError: A pattern names no event type eve-py emits.
            EvalAssertionError: The events do not occur in that order.
        """
        self._begin(step_label("event_order", *patterns))
        if not patterns:
            raise EvalConfigurationError("event_order() needs at least one pattern")
        checks = [event_pattern(pattern) for pattern in patterns]
        found: list[AnyEvent] = []
        position = 0
        for (check, shown), pattern in zip(checks, patterns, strict=True):
            while position < len(self._events) and not check(self._events[position]):
                position += 1
            if position == len(self._events):
                after = f"after event #{self._events.index(found[-1])}" if found else "in the session"
                listing = " ".join(f"#{i}:{e.type}" for i, e in enumerate(self._events))
                self._fail(
                    f"no {shown} {after} (matched {len(found)} of {len(patterns)} pattern(s))\n"
                    f"  event types: {listing}",
                    self._indexed(pattern_types(pattern)),
                )
            found.append(self._events[position])
            position += 1
        return found

    def check(self, condition: object, message: str) -> None:
        """Check any condition; a false one fails the eval with `message` (and the last turn's events)."""
        self._begin(step_label("check", message))
        if not condition:
            self._fail(message, self._last_turn_events())

    # -- failure reports -----------------------------------------------------------------------

    def failure_report(self, reason: str) -> str:
        """The text of a failure at the current step: eval, step, reason, the last turn's events."""
        return self._format(reason, self._last_turn_events() or self._indexed(lambda e: True)[-10:])

    def _begin(self, label: str) -> None:
        self.step += 1
        self.label = label

    def _fail(self, reason: str, events: Sequence[tuple[int, AnyEvent]]) -> NoReturn:
        raise EvalAssertionError(
            self._format(reason, events), eval_id=self.eval_id, step=self.step, label=self.label, reason=reason
        )

    def _format(self, reason: str, events: Sequence[tuple[int, AnyEvent]]) -> str:
        lines = [f"eval {self.eval_id!r} failed at step {self.step} `{self.label}`: {reason}"]
        if events:
            shown = events[-_MAX_SHOWN_EVENTS:]
            more = f", the last {len(shown)} of {len(events)}" if len(shown) < len(events) else ""
            lines.append(f"  events of session {self.session_id}{more}:")
            lines += [f"    #{index:<3} {event.type:<18} {render_json(payload(event), 300)}" for index, event in shown]
        return "\n".join(lines)

    # -- internals -----------------------------------------------------------------------------

    def _indexed(self, keep: Callable[[AnyEvent], bool]) -> list[tuple[int, AnyEvent]]:
        return [(index, event) for index, event in enumerate(self._events) if keep(event)]

    def _expect_status(self, status: TurnResultStatus) -> Turn:
        self._begin(f"{status}()")
        turn = self.last_turn
        if turn is None:
            self._fail(f"expected the last turn to be {status}, but no turn ran yet", [])
        if turn.status != status:
            extra = f" ({turn.error})" if turn.error else ""
            if turn.status == "waiting":
                extra = f" on {len(turn.input_requests)} request(s): " + "; ".join(
                    request_line(r) for r in turn.input_requests
                )
            self._fail(
                f"expected the last turn to be {status}, but it is {turn.status}{extra}", self._last_turn_events()
            )
        return turn


def _text_has(text: str, expected: str | re.Pattern[str]) -> bool:
    return expected.search(text) is not None if isinstance(expected, re.Pattern) else expected in text


def _message_event(event: AnyEvent) -> bool:
    return event.type in ("message.completed", "turn.completed", "turn.failed")


def _tool_event(name: str) -> Callable[[AnyEvent], bool]:
    def keep(event: AnyEvent) -> bool:
        if isinstance(event, ActionResult):
            return event.data.result.tool_name == name
        return event.type in _TOOL_EVENTS and name in render_json(payload(event), 100_000)

    return keep
