"""The eval driver `t`: drives real sessions of the app and checks what happened.

Every call on `t` is a numbered *step*. Driving steps (`send`, `respond`, `respond_all`,
`new_session`) talk to a session; checking steps (`completed`, `called_tool`, ...) look at
what the session recorded and raise `EvalAssertionError` when it is not what the eval expects.
The error names the eval and the step and shows the events that matter for the check.

Scope: `completed`, `waiting`, `expect_input_requests` and `message_includes` look at the last
turn (the last `send`/`respond`); `called_tool`, `not_called_tool`, `single_result`,
`did_not_fail` and `event_order` look at the whole current session (`new_session` starts over).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import NoReturn

from eve_py._json import JsonValue
from eve_py.errors import EvalAssertionError, EvalConfigurationError
from eve_py.evals._backend import EvalBackend, EvalSession
from eve_py.evals._calls import ToolCall, collect_tool_calls
from eve_py.evals._matching import Expected, describe, matches, render_json
from eve_py.parking._answers import pick_field
from eve_py.protocol import ActionResult, AnyEvent, payload
from eve_py.protocol.events import EVENT_TYPES
from eve_py.protocol.messages import Message
from eve_py.protocol.requests import Display, InputRequest, InputResponse
from eve_py.protocol.turns import TurnResult, TurnResultStatus

__all__ = ("EvalDriver", "Turn", "option_answer")

_EVENT_TYPES: frozenset[str] = EVENT_TYPES
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

    def __init__(self, driver: EvalDriver, result: TurnResult, events: list[AnyEvent], start: int) -> None:
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


class EvalDriver:
    """The `t` an eval's `test(t)` gets: drive sessions, then check them.

    Args:
        backend: Where the sessions run (the runner passes an `InProcessBackend`).
        eval_id: The eval's id, named in failure messages.
    """

    def __init__(self, backend: EvalBackend, *, eval_id: str) -> None:
        self.eval_id = eval_id
        self._backend = backend
        self._session: EvalSession | None = None
        self._events: list[AnyEvent] = []
        self._conversation: list[Message] | None = None
        self._turns: list[Turn] = []
        self._all_events: list[AnyEvent] = []
        self._sessions: list[str] = []
        self.step = 0
        """The number of the current step (0 before the first)."""
        self.label = ""
        """The current step's call, e.g. `respond_all('approve')`."""

    # -- state ---------------------------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The current session's id (None before the first `send`)."""
        return self._session.id if self._session is not None else None

    @property
    def sessions(self) -> list[str]:
        """Every session this eval created, in order."""
        return list(self._sessions)

    @property
    def events(self) -> list[AnyEvent]:
        """The current session's events so far, oldest first (its log, index for index)."""
        return list(self._events)

    @property
    def all_events(self) -> list[AnyEvent]:
        """The events of every session of this eval, session after session."""
        return list(self._all_events)

    @property
    def last_turn(self) -> Turn | None:
        """The result of the last `send`/`respond` in the current session."""
        return self._turns[-1] if self._turns else None

    @property
    def input_requests(self) -> list[InputRequest]:
        """The requests the last turn is waiting on (empty unless it is waiting)."""
        turn = self.last_turn
        return list(turn.input_requests) if turn is not None and turn.status == "waiting" else []

    def tool_calls(self, name: str | None = None) -> list[ToolCall]:
        """The current session's tool calls (only those of tool `name`, if given), in order."""
        calls = collect_tool_calls(self._events, self._conversation)
        return [call for call in calls if name is None or call.tool_name == name]

    # -- driving -------------------------------------------------------------------------------

    async def send(self, message: str) -> Turn:
        """Send a user message (starting a session if there is none) and run the turn.

        On a waiting session the open requests are dismissed first, as `Session.send` does.
        """
        self._begin(_label("send", message))
        session = await self._current()
        return await self._record(session, await session.send(message))

    async def new_session(self) -> str:
        """Start a new session; later steps use it. Returns its id."""
        self._begin("new_session()")
        await self._open()
        assert self._session is not None
        return self._session.id

    async def respond(
        self,
        request: InputRequest | str,
        *,
        option_id: str | None = None,
        text: str | None = None,
        value: JsonValue | None = None,
        action: str | None = None,
    ) -> Turn:
        """Answer one open request (by the request or its id) and run the turn on.

        Args:
            request: An `InputRequest` from `expect_input_requests`, or a request id.
            option_id: The chosen option (`approve`/`deny` for an approval).
            text: Free text, or a denial's reason.
            value: A structured answer matching the request's `schema`.
            action: `accept`, `decline` or `cancel`.

        Raises:
            EvalAssertionError: Nothing was given to answer with.
            InputResponseError: The session rejected the answer.
        """
        request_id = request.request_id if isinstance(request, InputRequest) else request
        self._begin(
            _label("respond", request_id, option_id=option_id, text=text, value=value, action=action, omit_none=True)
        )
        if option_id is None and text is None and value is None and action is None:
            self._fail("respond() needs option_id, text, value or action", [])
        if action not in (None, "accept", "decline", "cancel"):
            self._fail(f"respond(action=...) takes 'accept', 'decline' or 'cancel', not {action!r}", [])
        response = InputResponse.model_validate(
            {"requestId": request_id, "optionId": option_id, "text": text, "value": value, "action": action}
        )
        return await self._answer([response])

    async def respond_many(self, responses: Sequence[InputResponse | Mapping[str, JsonValue]]) -> Turn:
        """Answer several open requests at once (`InputResponse`s or their JSON form)."""
        self._begin(f"respond_many({len(responses)} responses)")
        return await self._answer(
            [r if isinstance(r, InputResponse) else InputResponse.model_validate(r) for r in responses]
        )

    async def respond_all(self, option_id: str, *, text: str | None = None) -> Turn:
        """Answer every open request with the option `option_id`, then run the turn on.

        Each request gets the answer its shape expects (see `option_answer`): `optionId` for
        approvals, questions and typed pickers (a `select` whose schema has a single required
        string or string-array property, such as `{pickedIds: [...]}`: the runtime turns the
        option id into that value).

        Raises:
            EvalAssertionError: Nothing is open, or a request does not offer `option_id`.
        """
        self._begin(_label("respond_all", option_id, text=text, omit_none=True))
        requests = self.input_requests
        if not requests:
            status = self.last_turn.status if self.last_turn else "no turn yet"
            self._fail(f"respond_all(): no open input requests (last turn: {status})", self._last_turn_events())
        responses = []
        for request in requests:
            answer = option_answer(request, option_id, text=text)
            if answer is None:
                offered = "; ".join(_request_line(r) for r in requests)
                self._fail(
                    f"request {request.request_id} ({request.action.tool_name}) cannot be answered with option "
                    f"{option_id!r}\n  open requests: {offered}",
                    self._indexed(lambda e: e.type == "input.requested"),
                )
            responses.append(answer)
        return await self._answer(responses)

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
            _label(
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
            lines = "\n".join(f"    - {_request_line(r)}" for r in turn.input_requests)
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
        self._begin(_label("message_includes", expected))
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
            _label("called_tool", name, input=input, output=output, is_error=is_error, times=times, omit_none=True)
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
                f"expected {wanted} call(s) of {name!r}{where}, found {len(found)}\n{_calls_block(calls)}",
                self._indexed(lambda e: e.type in _TOOL_EVENTS),
            )
        return found

    def not_called_tool(self, name: str) -> None:
        """Check that the model never called tool `name` in this session."""
        self._begin(_label("not_called_tool", name))
        calls = self.tool_calls()
        if any(call.tool_name == name for call in calls):
            self._fail(f"expected no call of {name!r}\n{_calls_block(calls)}", self._indexed(_tool_event(name)))

    def single_result(self, call_id: str | None = None) -> None:
        """Check that a call (every call of the session, without `call_id`) has exactly one result.

        Counts the results in the session's conversation (what the model is sent), so a parked
        call that got two results, or none, is caught. Where the conversation cannot be read,
        counts them in the events.
        """
        self._begin(_label("single_result", call_id, omit_none=True))
        calls = self.tool_calls()
        if call_id is not None and not any(call.call_id == call_id for call in calls):
            self._fail(f"no tool call with id {call_id!r} in this session\n{_calls_block(calls)}", [])
        bad = [call for call in calls if (call_id is None or call.call_id == call_id) and call.result_count != 1]
        if bad:
            where = "in the conversation" if self._conversation is not None else "in the events"
            counts = ", ".join(f"{call.tool_name} {call.call_id}: {call.result_count}" for call in bad)
            self._fail(
                f"expected exactly one result per call {where}; found {counts}\n{_calls_block(calls)}",
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
        self._begin(_label("event_order", *patterns))
        if not patterns:
            raise EvalConfigurationError("event_order() needs at least one pattern")
        checks = [_event_pattern(pattern) for pattern in patterns]
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
                    self._indexed(_pattern_types(pattern)),
                )
            found.append(self._events[position])
            position += 1
        return found

    def check(self, condition: object, message: str) -> None:
        """Check any condition; a false one fails the eval with `message` (and the last turn's events)."""
        self._begin(_label("check", message))
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

    def _expect_status(self, status: TurnResultStatus) -> Turn:
        self._begin(f"{status}()")
        turn = self.last_turn
        if turn is None:
            self._fail(f"expected the last turn to be {status}, but no turn ran yet", [])
        if turn.status != status:
            extra = f" ({turn.error})" if turn.error else ""
            if turn.status == "waiting":
                extra = f" on {len(turn.input_requests)} request(s): " + "; ".join(
                    _request_line(r) for r in turn.input_requests
                )
            self._fail(
                f"expected the last turn to be {status}, but it is {turn.status}{extra}", self._last_turn_events()
            )
        return turn

    async def _current(self) -> EvalSession:
        if self._session is None:
            await self._open()
        assert self._session is not None
        return self._session

    async def _open(self) -> None:
        self._session = await self._backend.create_session()
        self._sessions.append(self._session.id)
        self._events = []
        self._turns = []
        self._conversation = None
        await self._sync(self._session)

    async def _sync(self, session: EvalSession) -> list[AnyEvent]:
        new = await session.events(len(self._events))
        self._events += new
        self._all_events += new
        self._conversation = await session.conversation()
        return new

    async def _answer(self, responses: list[InputResponse]) -> Turn:
        if self._session is None:
            self._fail("there is no session to answer in; call send() first", [])
        return await self._record(self._session, await self._session.respond(responses))

    async def _record(self, session: EvalSession, result: TurnResult) -> Turn:
        start = len(self._events)
        turn = Turn(self, result, await self._sync(session), start)
        self._turns.append(turn)
        return turn

    def _indexed(self, keep: Callable[[AnyEvent], bool]) -> list[tuple[int, AnyEvent]]:
        return [(index, event) for index, event in enumerate(self._events) if keep(event)]

    def _last_turn_events(self) -> list[tuple[int, AnyEvent]]:
        turn = self.last_turn
        if turn is None:
            return []
        return [(turn._start + offset, event) for offset, event in enumerate(turn.events)]


def option_answer(request: InputRequest, option_id: str, *, text: str | None = None) -> InputResponse | None:
    """The answer that picks option `option_id` on `request`, in the shape the request expects.

    - An approval (`tool-approval`): `optionId` (`approve` or `deny`), `text` as the reason.
    - A request with options and a JSON Schema whose single required property is a string or
      an array of strings (a typed picker such as `{pickedIds: [...]}`): `optionId`, which the
      runtime turns into `{prop: [option_id]}` (or `{prop: option_id}`); for a freeform picker
      that does not offer it, that `value` directly.
    - Any other request with a schema: None (an option id cannot fill it; send `value`).
    - Otherwise: `optionId` (or, for a freeform question that does not offer it, `text`).

    Returns None when the request does not offer `option_id` and accepts no free text.
    """
    offered = request.option_ids()
    if request.kind == "tool-approval":
        return (
            InputResponse(request_id=request.request_id, option_id=option_id, text=text)
            if option_id in offered
            else None
        )
    if option_id not in offered and not request.allow_freeform:
        return None
    picker = pick_field(request)
    if request.response_schema is not None and picker is None:
        return None  # a schema an option id cannot answer
    if picker is not None and option_id not in offered:  # free text in a freeform picker
        field, many = picker
        return InputResponse(request_id=request.request_id, value={field: [option_id] if many else option_id})
    if option_id in offered:
        # For a typed picker the runtime turns the option id into the schema's value.
        return InputResponse(request_id=request.request_id, option_id=option_id, text=text)
    return InputResponse(request_id=request.request_id, text=option_id)


def _text_has(text: str, expected: str | re.Pattern[str]) -> bool:
    return expected.search(text) is not None if isinstance(expected, re.Pattern) else expected in text


def _request_line(request: InputRequest) -> str:
    options = f" options={request.option_ids()}" if request.options else ""
    return (
        f"{request.action.tool_name} [{request.kind}, {request.display}]{options} "
        f"id={request.request_id} prompt={request.prompt[:80]!r}"
    )


def _calls_block(calls: Sequence[ToolCall]) -> str:
    if not calls:
        return "  tool calls in this session: none"
    lines = ["  tool calls in this session:"]
    for call in calls:
        result = (
            f"-> {'error ' if call.is_error else ''}{render_json(call.output, 160)}"
            if call.has_result
            else "(no result)"
        )
        parked = f" [{call.request_kind}]" if call.request_kind else ""
        lines.append(
            f"    - {call.tool_name} {call.call_id}{parked} input={render_json(call.input, 160)} {result} "
            f"({call.result_count} result(s))"
        )
    return "\n".join(lines)


def _message_event(event: AnyEvent) -> bool:
    return event.type in ("message.completed", "turn.completed", "turn.failed")


def _tool_event(name: str) -> Callable[[AnyEvent], bool]:
    def keep(event: AnyEvent) -> bool:
        if isinstance(event, ActionResult):
            return event.data.result.tool_name == name
        return event.type in _TOOL_EVENTS and name in render_json(payload(event), 100_000)

    return keep


def _event_pattern(pattern: str | Mapping[str, object]) -> tuple[Callable[[AnyEvent], bool], str]:
    if isinstance(pattern, str):
        kind, fields = pattern, {}
    else:
        fields = {key: value for key, value in pattern.items() if key != "type"}
        raw = pattern.get("type")
        if not isinstance(raw, str):
            raise EvalConfigurationError(f"event_order() pattern {pattern!r} needs a 'type'")
        kind = raw
    if kind not in _EVENT_TYPES:
        raise EvalConfigurationError(
            f"event_order(): {kind!r} is not an event type; known types: {', '.join(sorted(_EVENT_TYPES))}"
        )

    def check(event: AnyEvent) -> bool:
        return event.type == kind and matches(fields, payload(event))

    shown = kind if not fields else f"{kind} with {describe(fields)}"
    return check, shown


def _pattern_types(pattern: str | Mapping[str, object]) -> Callable[[AnyEvent], bool]:
    kind = pattern if isinstance(pattern, str) else pattern.get("type")
    return lambda event: event.type == kind


def _label(name: str, *args: object, omit_none: bool = False, **kwargs: object) -> str:
    parts = [_short(arg) for arg in args]
    parts += [f"{key}={_short(value)}" for key, value in kwargs.items() if not (omit_none and value is None)]
    return f"{name}({', '.join(parts)})"


def _short(value: object) -> str:
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:59] + "…")
    if isinstance(value, re.Pattern) or callable(value):
        return describe(value)
    return render_json(value, 80)
