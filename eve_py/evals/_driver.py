"""The eval driver `t`: drives real sessions of the app; the checks on them come with it.

Every call on `t` is a numbered *step*. Driving steps (`send`, `respond`, `respond_all`,
`new_session`) talk to a session; they live here, in `EvalDriver`, with the session plumbing and
the `Turn` each of them returns. Checking steps (`completed`, `called_tool`, ...) look at what
the session recorded and raise `EvalAssertionError` when it is not what the eval expects; they
live in `eve_py.evals._checks` (`EvalChecks`, which `EvalDriver` inherits), with the failure
reports and which turn or session each check looks at.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from eve_py._json import JsonValue
from eve_py.evals._backend import EvalBackend, EvalSession
from eve_py.evals._calls import ToolCall, collect_tool_calls
from eve_py.evals._checks import EvalChecks, Turn
from eve_py.evals._labels import request_line, step_label
from eve_py.parking._answers import pick_field
from eve_py.protocol import AnyEvent
from eve_py.protocol.messages import Message
from eve_py.protocol.requests import InputRequest, InputResponse
from eve_py.protocol.turns import TurnResult

__all__ = ("EvalDriver", "Turn", "option_answer")  # `Turn` is re-exported from `_checks`


class EvalDriver(EvalChecks):
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
        self._begin(step_label("send", message))
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
            step_label(
                "respond", request_id, option_id=option_id, text=text, value=value, action=action, omit_none=True
            )
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
        self._begin(step_label("respond_all", option_id, text=text, omit_none=True))
        requests = self.input_requests
        if not requests:
            status = self.last_turn.status if self.last_turn else "no turn yet"
            self._fail(f"respond_all(): no open input requests (last turn: {status})", self._last_turn_events())
        responses = []
        for request in requests:
            answer = option_answer(request, option_id, text=text)
            if answer is None:
                offered = "; ".join(request_line(r) for r in requests)
                self._fail(
                    f"request {request.request_id} ({request.action.tool_name}) cannot be answered with option "
                    f"{option_id!r}\n  open requests: {offered}",
                    self._indexed(lambda e: e.type == "input.requested"),
                )
            responses.append(answer)
        return await self._answer(responses)

    # -- session plumbing ----------------------------------------------------------------------

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
