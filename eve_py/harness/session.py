"""`Session`: a handle on one stored session: send messages, answer parked input requests, resume, cancel.

```python
session = await runtime.get_session(session_id)        # any process on the same store
result = await session.send("Pick a template")          # TurnResult, maybe status "waiting"
result = await session.respond([{"requestId": result.input_requests[0].request_id, "optionId": "blue"}])
await session.resume()                                  # after a crash: finish what the last write left
```

A `Session` is a handle: every operation reads the stored record first and writes through
the store, so handles in different processes on one store see the same session.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio

from eve_py._json import JsonSchema, JsonValue
from eve_py.errors import (
    InputResponseError,
    InvalidMessageError,
    RequestAlreadyAnsweredError,
    SessionConflictError,
    SessionEndedError,
    SessionNotWaitingError,
    SessionStateError,
)
from eve_py.events import Event, new_event, new_id
from eve_py.events.payloads import (
    ContextClearedData,
    InputResolvedData,
    SessionCompletedData,
    SessionWaitingData,
    TurnWaitingData,
)
from eve_py.harness.inputs import as_response, check_turn_input, context_text
from eve_py.harness.loop import TurnDriver
from eve_py.harness.turn_result import TurnResult
from eve_py.models.messages import AssistantMessage, Message, ToolMessage
from eve_py.parking.accept import accept_answers, answered_before
from eve_py.parking.requests import InputRequest, InputResponse
from eve_py.parking.settle import dismissed_event
from eve_py.sessions.record import SessionRecord, SessionStatus, TurnInput

if TYPE_CHECKING:
    from eve_py.harness.runtime import Runtime

__all__ = ("Session",)


class Session:
    """A handle on one stored session. Get one from `Runtime.create_session` or `get_session`."""

    def __init__(self, runtime: Runtime, record: SessionRecord) -> None:
        self._runtime = runtime
        self._record = record

    @property
    def id(self) -> str:
        """The session id."""
        return self._record.id

    @property
    def status(self) -> SessionStatus:
        """The status when this handle last read or wrote the session (see `refresh`)."""
        return self._record.status

    @property
    def record(self) -> SessionRecord:
        """The stored record as this handle last saw it."""
        return self._record

    async def messages(self) -> list[Message]:
        """The conversation as stored now (a parked step is not in it yet; a cleared history is not either)."""
        self._record = await self._runtime.store.load(self.id)
        conversation = await self._runtime.conversations.load(self._runtime.store, self._record)
        return conversation.messages

    @property
    def input_requests(self) -> list[InputRequest]:
        """The open input requests (empty unless waiting)."""
        pending = self._record.pending
        return pending.open_requests() if pending is not None and self._record.status == "waiting" else []

    async def refresh(self) -> Session:
        """Re-read the session from the store; returns self."""
        self._record = await self._runtime.store.load(self.id)
        return self

    async def events(self, start: int = 0, stop: int | None = None) -> list[Event]:
        """The session's events with index in `[start, stop)`, oldest first."""
        return await self._runtime.store.read_events(self.id, start, stop)

    async def send(
        self,
        message: str | Sequence[str],
        *,
        client_context: str | Sequence[str] | Mapping[str, JsonValue] | None = None,
        output_schema: JsonSchema | None = None,
        delivery_id: str | None = None,
    ) -> TurnResult:
        """Start a turn with a user message and run it until it completes, parks or fails.

        On a waiting session the open requests are dismissed first: questions resolve as
        `{"status": "ignored"}` and approvals as denied ("Ignored because the user continued
        without responding."), so every parked call still gets exactly one result.

        A turn whose worker died (status `running`, lease expired) is finished first, as
        `resume()` would, so answers it accepted are used; then the message starts a new turn.

        Args:
            message: The text, or its text parts (joined by newlines for the model).
            client_context: Context for this turn only (eve's `clientContext`): a string, strings
                or a JSON object, shown to the model with the instructions at every step of the turn.
            output_schema: JSON Schema the turn's final answer must satisfy (eve's `outputSchema`):
                the model is asked for JSON, the answer is checked, `result.completed` carries it
                and `TurnResult.result` holds it; an answer that does not fit fails the turn.
            delivery_id: The id this message is known by (`meta.deliveryIds` of the turn's
                events); a new `dlv_...` id when None.

        Raises:
            InvalidMessageError: The message has no non-whitespace text, or the message, client
                context or output schema holds NaN, Infinity or a lone UTF-16 surrogate.
            SessionStateError: A turn is running in a worker that still holds its lease.
            ModelConfigurationError: No model is configured.
            SessionConflictError: Another writer changed the session meanwhile.
        """
        parts = [message] if isinstance(message, str) else list(message)
        if not "".join(parts).strip():
            raise InvalidMessageError("A message must contain some text (providers reject blank messages).")
        check_turn_input({"message": parts, "clientContext": client_context, "outputSchema": output_schema})
        sent = TurnInput(
            parts=parts,
            delivery_id=delivery_id or new_id("dlv"),
            client_context=context_text(client_context),
            output_schema=output_schema,
        )
        driver = self._runtime._driver()
        record = _active(await self._runtime.store.load(self.id))
        if record.status == "running":
            if record.lease_held():
                raise SessionStateError(
                    f"Session {self.id!r} is running a turn; wait for it, or call resume() if its worker died.",
                    status=record.status,
                )
            # The dead worker's turn is finished first, as resume() would; claiming it first means
            # that of several workers taking over, only one runs anything.
            await self._finish(driver, await driver.claim(record))
            record = await self._runtime.store.load(self.id)
            if record.status == "running":
                raise SessionStateError(f"Session {self.id!r} is still running a turn.", status=record.status)
        pending = record.pending
        if record.status == "waiting" and pending is not None and record.turn is not None:
            # One write dismisses the batch and queues the message; settling the batch and starting
            # the new turn follow. A crash in between loses neither: resume() does both.
            dismissed = dismissed_event(record.turn, pending)
            record = await driver.writer.commit(record.dismiss(sent), [dismissed], durable=False)
        else:
            started = driver.start_turn(record, sent)
            record = await driver.writer.commit(
                started.record, started.events, messages=started.messages, durable=False
            )
        return await self._finish(driver, record)

    async def respond(
        self,
        responses: Sequence[InputResponse | Mapping[str, Any]],
        *,
        client_context: str | Sequence[str] | Mapping[str, JsonValue] | None = None,
        output_schema: JsonSchema | None = None,
        settle: bool = True,
    ) -> TurnResult:
        """Answer open input requests of the parked batch, then continue the turn.

        Every response is checked before anything is written. Questions left unanswered
        resolve as `{"status": "ignored"}` once the batch settles; the batch settles when every
        approval request in it is answered (until then the answers are kept and the session
        keeps waiting for the rest).

        Args:
            responses: `InputResponse`s, or their JSON form (`{"requestId": ..., ...}`).
            client_context: Replaces the turn's client context from here on (see `send`).
            output_schema: Replaces the turn's output schema from here on (see `send`).
            settle: False: keep these answers and the batch open, even when every approval is
                answered, so a person who stops midway (a chat closed at the second of three
                questions) loses nothing; a later `respond()` settles it. At least one request
                must stay open.

        Raises:
            SessionNotWaitingError: The session has no open input request.
            UnknownRequestError: A `requestId` is not in the parked batch.
            RequestAlreadyAnsweredError: A `requestId` was answered before, or twice here.
            InvalidAnswerError: An answer does not fit its request (option, value, schema), or holds
                NaN, Infinity or a lone UTF-16 surrogate (which could not be stored as given).
            InvalidMessageError: `client_context` or `output_schema` holds NaN, Infinity or a lone surrogate.
            SessionConflictError: Another `respond()` answered the batch first; nothing written.
            InputResponseError: No response, or `settle=False` with no request left open.
        """
        checked_input = [as_response(r) for r in responses]
        check_turn_input({"clientContext": client_context, "outputSchema": output_schema})
        driver = self._runtime._driver()
        record = _active(await self._runtime.store.load(self.id))
        pending = record.pending
        if not checked_input:
            raise InputResponseError("respond() needs at least one input response", request_id="")
        running_hint = " (a turn is running, or its worker died: call resume())" if record.status == "running" else ""
        parked = {r.request_id for r in pending.requests} if pending is not None else set()
        for response in checked_input:
            earlier = answered_before(pending, response.request_id)
            # Only an id the batch does not hold sends us to the history (a refusal's path, so the
            # answer's path never reads the conversation).
            if not earlier and response.request_id not in parked:
                conversation = await driver.writer.conversation(record)
                earlier = _answered_in(conversation.messages, response.request_id)
            if earlier:
                # Its call has its one result: answered, or settled without an answer (dismissed
                # by a message, cancelled with its turn).
                raise RequestAlreadyAnsweredError(
                    f"Request {response.request_id!r} was already answered or withdrawn{running_hint}.",
                    request_id=response.request_id,
                )
        if record.status != "waiting" or pending is None or record.turn is None:
            raise SessionNotWaitingError(
                f"Session {self.id!r} is not waiting for input (status {record.status!r}){running_hint}.",
                status=record.status,
            )
        accepted = accept_answers(pending, checked_input, settle=settle)
        turn = record.turn.with_context(context_text(client_context), output_schema)
        coords = {"sequence": turn.sequence, "turn_id": turn.turn_id}
        resolved = InputResolvedData(**coords, step_index=pending.step_index, resolutions=accepted.resolutions)
        events = [turn.stamp(resolved)]
        if not accepted.settled:  # the rest of the batch is still awaited: the turn parks again
            events.append(turn.stamp(TurnWaitingData(**coords)))
        answered = record.with_turn(turn).answer(accepted.pending, settled=accepted.settled)
        # Settled, the answers are synced by the call's last write; not settled, this write is the last.
        record = await driver.writer.commit(answered, events, durable=not accepted.settled)
        if not accepted.settled:
            self._record = record
            return driver.result(record, "waiting")
        return await self._finish(driver, record)

    async def resume(self, *, force: bool = False) -> TurnResult:
        """Continue a turn whose worker stopped (crash, kill) from its last stored state.

        A session that is waiting or idle is returned as it is. Recorded answers are used as
        they were accepted; a step whose results were stored is not run again. A running turn
        is taken over only once its worker's lease expired (`Runtime(lease_s=...)`, renewed by
        every write the worker makes), so a live worker's turn is never run twice.

        Args:
            force: Take over even though the lease has not expired (you know the worker is dead).
                A lease written by another recovery (a worker that took the turn over itself) is
                never forced: of several processes recovering at once, one runs the turn.

        Raises:
            SessionStateError: Another worker holds the turn's lease (without `force`).
            SessionConflictError: Another worker took the turn over or wrote the session meanwhile;
                nothing was run here.
        """
        driver = self._runtime._driver()
        record = await self._runtime.store.load(self.id)
        if record.status == "running":
            lease = record.lease
            if lease is not None and record.lease_held() and force and lease.takeover:
                raise SessionConflictError(
                    f"Session {self.id!r} was taken over by worker {lease.owner!r}, which is finishing the turn "
                    f"(its lease ends in {lease.expires_at - time.time():.0f} s); nothing was run here. "
                    "resume() takes over if that lease expires."
                )
            if lease is not None and record.lease_held() and not force:
                raise SessionStateError(
                    f"Session {self.id!r} is running a turn in worker {lease.owner!r}, whose lease ends in "
                    f"{lease.expires_at - time.time():.0f} s; resume() takes over once it expires "
                    "(or call resume(force=True) if that worker is known to be dead).",
                    status=record.status,
                )
            return await self._finish(driver, await driver.claim(record))
        self._record = record
        if record.status == "waiting":
            return driver.result(record, "waiting")
        turn = record.turn
        if turn is not None and turn.status == "failed":
            return driver.result(record, "failed", turn.error)
        conversation = await driver.writer.conversation(record)
        return replace(driver.result(record, "completed"), message=_last_assistant_text(conversation.messages))

    async def cancel(self) -> bool:
        """Cancel this session's turn: a running one in this process, or a parked one.

        A running turn stops at once; with no parked step it goes back to `idle` with
        `turn.cancelled` and `session.waiting` (the call that ran it returns `failed`). A parked
        turn ends as eve ends one: its open requests are withdrawn (`input.resolved` with outcome
        `cancelled`), each parked call gets the result "The turn was cancelled before this call
        finished.", then `turn.cancelled` and `session.waiting`; a later answer is refused.

        Returns:
            True if a turn was cancelled, False if none runs here and none is parked.

        Raises:
            SessionConflictError: Another writer changed the parked session meanwhile.
        """
        scope = self._runtime._active.get(self.id)
        if scope is not None:
            scope.cancel()
            return True
        record = await self._runtime.store.load(self.id)
        if record.status != "waiting" or record.pending is None:
            return False
        self._record = await self._runtime._driver().cancel_parked(record)
        return True

    async def clear(self) -> None:
        """Remove the conversation history, keeping the session (eve's `clear`).

        A parked turn is cancelled first (see `cancel`). Events: `context.cleared`, `session.waiting`.

        Raises:
            SessionStateError: A turn is running.
            SessionEndedError: The session was reset.
            SessionConflictError: Another writer changed the session meanwhile.
        """
        record = _active(await self._runtime.store.load(self.id))
        if record.status == "waiting" and self._runtime._active.get(self.id) is None:
            await self.cancel()
            record = await self._runtime.store.load(self.id)
        if record.status != "idle" or self._runtime._active.get(self.id) is not None:
            raise SessionStateError(
                f"Session {self.id!r} is running a turn; clear it once it settles.", status=record.status
            )
        turn_id = record.turn.turn_id if record.turn is not None else f"turn_{record.next_sequence}"
        sequence = record.turn.sequence if record.turn is not None else record.next_sequence
        events: list[Event] = [
            new_event(ContextClearedData(sequence=sequence, turn_id=turn_id, session_id=self.id)),
            new_event(SessionWaitingData()),
        ]
        self._record = await self._runtime._driver().writer.commit(record.clear(), events)

    async def reset(self) -> bool:
        """Retire the session for good (eve's `reset`): `session.completed`; later sends are refused.

        A parked turn is cancelled first.

        Returns:
            False if the session had been reset already.

        Raises:
            SessionStateError: A turn is running.
            SessionConflictError: Another writer changed the session meanwhile.
        """
        record = await self._runtime.store.load(self.id)
        if record.status == "ended":
            return False
        if record.status == "running" or self._runtime._active.get(self.id) is not None:
            raise SessionStateError(
                f"Session {self.id!r} is running a turn; reset it once it settles.", status="running"
            )
        if record.status == "waiting":
            await self.cancel()
            record = await self._runtime.store.load(self.id)
        self._record = await self._runtime._driver().writer.commit(record.end(), [new_event(SessionCompletedData())])
        return True

    async def _finish(self, driver: TurnDriver, record: SessionRecord) -> TurnResult:
        result: TurnResult | None = None
        with anyio.CancelScope() as scope:
            self._runtime._active[self.id] = scope
            try:
                result = await driver.drive(record)
            finally:
                if self._runtime._active.get(self.id) is scope:
                    del self._runtime._active[self.id]
                if result is not None and driver.writer.last is not None:
                    self._record = driver.writer.last  # what the turn's last write stored
                else:
                    with anyio.CancelScope(shield=True):
                        await self.refresh()
        if result is None:  # cancelled through cancel()
            return driver.result(self._record, "failed", "The turn was cancelled.")
        return result


def _active(record: SessionRecord) -> SessionRecord:
    """The record, unless the session was reset.

    Raises:
        SessionEndedError: It was.
    """
    if record.status == "ended":
        raise SessionEndedError(f"Session {record.id!r} was reset; start a new session.", status=record.status)
    return record


def _answered_in(messages: Sequence[Message], request_id: str) -> bool:
    """Whether a tool result for this call id is in the conversation."""
    return any(
        isinstance(message, ToolMessage) and any(part.tool_call_id == request_id for part in message.content)
        for message in messages
    )


def _last_assistant_text(messages: Sequence[Message]) -> str | None:
    """The text of the newest assistant message that has text."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.text:
            return message.text
    return None
