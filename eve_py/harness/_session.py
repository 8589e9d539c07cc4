"""`Session`: a handle on one stored session: send messages, answer parked input requests, resume, cancel.

```python
session = await runtime.get_session(session_id)        # any process on the same store
result = await session.send("Pick a template")          # TurnResult, maybe status "waiting"
result = await session.respond([{"requestId": result.input_requests[0].request_id, "optionId": "blue"}])
await session.resume()                                  # after a crash: finish what the last write left
```

A `Session` is a handle: every write is a compare-and-set on the record's version, so handles
in different processes on one store see the same session. Each call is one unit of work
(`eve_py.harness._unit.TurnUnit`), which owns the record while the call runs; the handle keeps
the record the last one left. `send` and `respond` start from that record, and read it again
only when it turns out stale (`_fresh`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any, Literal

import anyio

from eve_py._json import JsonSchema, JsonValue
from eve_py.errors import RequestExpiredError, SessionConflictError, SessionStateError, UsageError
from eve_py.harness._conversation import ConversationCache
from eve_py.harness._expire import Sweeper
from eve_py.harness._heartbeat import check_takeover
from eve_py.harness._inputs import as_response, check_turn_input, context_text, turn_input
from eve_py.harness._links import AnswerLink, answer_link
from eve_py.harness._turns import ActiveTurns
from eve_py.harness._unit import Acknowledge, Stale, TurnUnit, UnitParts
from eve_py.protocol import Event, new_event
from eve_py.protocol.messages import Message
from eve_py.protocol.payloads import DeliveryIgnoredData
from eve_py.protocol.requests import InputRequest, InputResponse
from eve_py.protocol.turns import ClientTool, SessionStatus, TurnResult
from eve_py.sessions import SessionRecord, SessionStore

__all__ = ("Session",)


class Session:
    """A handle on one stored session. Get one from `Runtime.create_session` or `get_session`."""

    def __init__(
        self,
        record: SessionRecord,
        *,
        store: SessionStore,
        conversations: ConversationCache,
        parts: Callable[[], UnitParts],
        turns: ActiveTurns,
        sweeper: Sweeper | None = None,
    ) -> None:
        """A handle on `record`'s session (`Runtime.create_session` and `get_session` make them).

        Args:
            record: The session as last read or written.
            store: Where the session lives.
            conversations: Recent sessions' conversations, shared by the runtime's handles.
            parts: The runtime's agent, model, store and listeners, for each call's unit of work.
            turns: The turns running in this process (what `cancel` stops).
            sweeper: The runtime's expiry sweep: while it runs, a late answer leaves expiring to it.
        """
        self._record = record
        self._parts = parts
        self._turns = turns
        self._sweeper = sweeper
        self._store = store
        self._conversations = conversations

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
        self._record = await self._store.load(self.id)
        conversation = await self._conversations.load(self._store, self._record)
        return conversation.messages

    @property
    def input_requests(self) -> list[InputRequest]:
        """The open input requests (empty unless waiting)."""
        pending = self._record.pending
        return pending.open_requests() if pending is not None and self._record.status == "waiting" else []

    async def refresh(self) -> Session:
        """Re-read the session from the store; returns self."""
        self._record = await self._store.load(self.id)
        return self

    async def events(self, start: int = 0, stop: int | None = None) -> list[Event]:
        """The session's events with index in `[start, stop)`, oldest first."""
        return await self._store.read_events(self.id, start, stop)

    async def send(
        self,
        message: str | Sequence[str],
        *,
        client_context: str | Sequence[str] | Mapping[str, JsonValue] | None = None,
        output_schema: JsonSchema | None = None,
        delivery_id: str | None = None,
        client_tools: Sequence[ClientTool] | None = None,
        acknowledge: Acknowledge | None = None,
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
            client_tools: Client-resolved tools offered for this turn only (AG-UI's frontend tools).
            acknowledge: Called once the message is durable (the write that starts its turn), with
                every event written so far, before the turn goes on (the server's `202`).

        Raises:
            InvalidMessageError: The message has no non-whitespace text, or the message, client
                context or output schema holds NaN, Infinity or a lone UTF-16 surrogate.
            ToolDefinitionError: A client tool's name or schema is invalid, or is an app tool's name.
            SessionStateError: A turn is running in a worker that still holds its lease.
            ModelConfigurationError: No model is configured.
            SessionConflictError: Another writer changed the session meanwhile.
        """
        sent = turn_input(message, client_context, output_schema, delivery_id, client_tools, self._parts().agent.tools)
        unit = await self._held(acknowledge, at_turn=True)
        outcome = await unit.start(sent)
        if isinstance(outcome, Stale):
            unit = await self._redo(unit, outcome, acknowledge, at_turn=True)
            await unit.start(sent)
        return await self._finish(unit)

    async def respond(
        self,
        responses: Sequence[InputResponse | Mapping[str, Any]],
        *,
        client_context: str | Sequence[str] | Mapping[str, JsonValue] | None = None,
        output_schema: JsonSchema | None = None,
        settle: bool = True,
        by: str = "local",
        delivery_id: str | None = None,
        acknowledge: Acknowledge | None = None,
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
            by: Who answers: recorded with each answer (`input.resolved`'s `answeredBy`). The
                HTTP API passes the caller's token name.
            delivery_id: The id of the delivery these answers came as, recorded with their
                `input.resolved` (eve 1.0's wire names it in `delivery.*` facts; the HTTP API passes
                the one an `idempotencyKey` names). None: derived from the event's id.
            acknowledge: Called once the answers are durable (their write), with its events, before
                the turn goes on (the server's `202`).

        Raises:
            SessionNotWaitingError: The session has no open input request.
            UnknownRequestError: A `requestId` is not in the parked batch.
            RequestAlreadyAnsweredError: A `requestId` was answered before, or twice here.
            InvalidAnswerError: An answer does not fit its request (option, value, schema), or holds
                NaN, Infinity or a lone UTF-16 surrogate (which could not be stored as given).
            InvalidMessageError: `client_context` or `output_schema` holds NaN, Infinity or a lone surrogate.
            SessionConflictError: Another `respond()` answered the batch first; nothing written.
            RequestExpiredError: A request's deadline passed. Nothing was written: `expire()` ends
                the due requests and goes on with the turn (a running expiry sweep, as a server's,
                is told to do it at once).
            InputResponseError: No response, or `settle=False` with no request left open.
            UsageError: `by` is not a non-empty string.
        """
        if not isinstance(by, str) or not by.strip():
            raise UsageError(f"respond(by=...) names who answers: a non-empty string, got {by!r}")
        checked = [as_response(r) for r in responses]
        check_turn_input({"clientContext": client_context, "outputSchema": output_schema})
        context = context_text(client_context)
        unit = await self._held(acknowledge)
        try:
            settled = await unit.accept(
                checked, client_context=context, output_schema=output_schema, settle=settle, by=by,
                delivery_id=delivery_id,
            )  # fmt: skip
            if isinstance(settled, Stale):
                unit = await self._redo(unit, settled, acknowledge)
                settled = await unit.accept(
                    checked, client_context=context, output_schema=output_schema, settle=settle, by=by,
                    delivery_id=delivery_id,
                )  # fmt: skip
        except RequestExpiredError:
            if self._sweeper is not None and self._sweeper.running:
                self._sweeper.poke()  # the sweep expires it within moments, as background work
            raise
        if not settled:
            self._record = unit.record
            return unit.result("waiting")
        return await self._finish(unit)

    async def resume(self, *, force: bool = False, acknowledge: Acknowledge | None = None) -> TurnResult:
        """Continue a turn whose worker stopped (crash, kill) from its last stored state.

        A session that is waiting or idle is returned as it is. Recorded answers are used as
        they were accepted; a step whose results were stored is not run again. A running turn
        is taken over only once its worker's lease expired (`Runtime(lease_s=...)`, renewed by
        every write the worker makes), so a live worker's turn is never run twice.

        Args:
            force: Take over even though the lease has not expired (you know the worker is dead).
                A lease written by another recovery (a worker that took the turn over itself) is
                never forced: of several processes recovering at once, one runs the turn.
            acknowledge: Called once the takeover is written (its first write), before the turn goes on.

        Raises:
            SessionStateError: Another worker holds the turn's lease (without `force`).
            SessionConflictError: Another worker took the turn over or wrote the session meanwhile;
                nothing was run here.
        """
        unit = await self._fresh(acknowledge)
        record = unit.record
        if record.status == "running":
            check_takeover(record, force=force)
            await unit.claim()
            return await self._finish(unit)
        self._record = record
        if record.status == "waiting":
            return unit.result("waiting")
        turn = record.turn
        if turn is not None and turn.status == "failed":
            return unit.result("failed", turn.error)
        conversation = await unit.conversation()
        return replace(unit.result("completed"), message=conversation.last_assistant_text())

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
        unit = await self._fresh()
        record = unit.record
        if record.status == "waiting" and record.pending is not None:
            # Parked as stored, though the turn's runner may not have returned yet (a client saw
            # `turn.waiting` first): stopping the runner would leave the question open.
            self._record = await unit.cancel_parked()
            return True
        return self._turns.cancel(self.id)

    async def clear(self) -> None:
        """Remove the conversation history, keeping the session (eve's `clear`).

        A parked turn is cancelled first (see `cancel`). Events: `context.cleared`, `session.waiting`.

        Raises:
            SessionStateError: A turn is running.
            SessionEndedError: The session was reset.
            SessionConflictError: Another writer changed the session meanwhile.
        """
        if self._turns.running(self.id):
            raise SessionStateError(
                f"Session {self.id!r} is running a turn; clear it once it settles.", status="running"
            )
        record = await self._store.load(self.id)
        if record.status == "waiting":
            await self.cancel()
            record = await self._store.load(self.id)
        # The record's own transition refuses a session that is not idle (a turn running elsewhere, or ended).
        self._record = await self._unit(record=record).clear()

    async def ignore_delivery(
        self,
        delivery_id: str,
        source: Literal["cancel", "answers"],
        reason: str,
        answers: Sequence[InputResponse] | None = None,
    ) -> None:
        """Record a delivery that found nothing to act on (`delivery.ignored`): a cancel with no turn
        to stop (or naming another turn), or stale `answers`; it settles `ignored` on eve 1.0's wire,
        and nothing else changes. While a turn of the session runs here, it goes with that turn's
        next write (a write of its own would conflict with the turn's).

        Raises:
            SessionConflictError: Another writer changed the session meanwhile (nothing recorded).
        """
        data = DeliveryIgnoredData(
            delivery_id=delivery_id, source=source, reason=reason, answers=list(answers) if answers else None
        )
        if not self._turns.note(self.id, [new_event(data)]):
            self._record = await (await self._fresh()).append([new_event(data)])

    async def reset(self) -> bool:
        """Retire the session for good (eve's `reset`): `session.completed`; later sends are refused.

        A parked turn is cancelled first.

        Returns:
            False if the session had been reset already.

        Raises:
            SessionStateError: A turn is running.
            SessionConflictError: Another writer changed the session meanwhile.
        """
        if self._turns.running(self.id):
            raise SessionStateError(
                f"Session {self.id!r} is running a turn; reset it once it settles.", status="running"
            )
        record = await self._store.load(self.id)
        if record.status == "ended":
            return False
        if record.status == "waiting":
            await self.cancel()
            record = await self._store.load(self.id)
        # The record's own transition refuses a turn running elsewhere.
        self._record = await self._unit(record=record).end()
        return True

    async def expire(self, *, acknowledge: Acknowledge | None = None) -> TurnResult | None:
        """End the open requests whose deadline passed as `expired`, then go on with the turn.

        Each one's call gets one error result (`INPUT_EXPIRED`); with no request left open the turn
        goes on as after an answer. `Runtime.expiring` (a server) calls this on its own; without it,
        `Runtime.get_session` does (see `eve_py.harness._expire`).

        Args:
            acknowledge: Called once the expiry is written, with its events, before the turn goes on.

        Returns:
            The turn's result, or None when no open request was due.

        Raises:
            SessionConflictError: Another writer (an answer, another worker) wrote first.
        """
        return await self._expire_from(await self._store.load(self.id), acknowledge)

    async def _expire_from(self, record: SessionRecord, acknowledge: Acknowledge | None = None) -> TurnResult | None:
        """`expire`, from `record` as just loaded (the sweeper's read: the session is read once).

        Raises:
            SessionConflictError: Another writer wrote since `record` was read.
        """
        unit = self._unit(acknowledge, record=record)
        settled = await unit.expire(time.time())
        if settled is None:
            return None
        if not settled:
            self._record = unit.record
            return unit.result("waiting")
        return await self._finish(unit)

    async def answer_link(
        self, request_id: str, *, expires_after: float | timedelta | None = None, base_url: str | None = None
    ) -> AnswerLink:
        """A signed, one-shot link that answers the open request `request_id` (see `eve_py.harness._links`)."""
        return await answer_link(self, request_id, expires_after=expires_after, base_url=base_url)

    def _unit(
        self, acknowledge: Acknowledge | None = None, *, at_turn: bool = False, record: SessionRecord | None = None
    ) -> TurnUnit:
        """A unit of work on `record`, just read, or else on the record this handle holds (it may be stale)."""
        held = record if record is not None else self._record
        return TurnUnit(
            self._parts(), held, fresh=record is not None, acknowledge=acknowledge, acknowledge_at_turn=at_turn
        )

    async def _held(self, acknowledge: Acknowledge | None = None, *, at_turn: bool = False) -> TurnUnit:
        """A unit of work on the record this handle holds (no store read); a running turn is always
        read first (its lease decides)."""
        if self._record.status in ("idle", "waiting"):
            return self._unit(acknowledge, at_turn=at_turn)
        return await self._fresh(acknowledge, at_turn=at_turn)

    async def _fresh(self, acknowledge: Acknowledge | None = None, *, at_turn: bool = False) -> TurnUnit:
        """A unit of work on the session as stored now: where a stale handle's call is redone."""
        return self._unit(acknowledge, at_turn=at_turn, record=await self._store.load(self.id))

    async def _redo(
        self, unit: TurnUnit, stale: Stale, acknowledge: Acknowledge | None, *, at_turn: bool = False
    ) -> TurnUnit:
        """Where a call refused on the handle's record is settled: a unit on the stored record, to redo
        the call on, when the session changed since; else the refusal stands.

        Raises:
            SessionError: `stale.error`, when the record the call was refused on is the stored one.
        """
        fresh = await self._fresh(acknowledge, at_turn=at_turn)
        if fresh.record.version == unit.record.version:
            self._record = fresh.record
            raise stale.error
        return fresh

    async def _finish(self, unit: TurnUnit) -> TurnResult:
        """Drive the unit's turn to where it stops (registered, so `cancel` can stop it); keep its record."""
        result: TurnResult | None = None
        with self._turns.run(self.id):
            try:
                result = await unit.drive()
            finally:
                if result is not None and unit.wrote:
                    self._record = unit.record  # what the turn's last write stored
                else:
                    with anyio.CancelScope(shield=True):
                        await self.refresh()
                if unit.acknowledging:  # it wrote, but not the write it acknowledges at (a failure)
                    with anyio.CancelScope(shield=True):
                        await unit.acknowledge()
        if noted := self._turns.take_notes(self.id):  # recorded after the turn's last write
            # Someone wrote meanwhile: the notes' receipts stand, as a direct write's would (`ignore_delivery`).
            with anyio.CancelScope(shield=True), contextlib.suppress(SessionConflictError):
                self._record = await (await self._fresh()).append(noted)
        if result is None:  # cancelled through cancel()
            return unit.result("failed", "The turn was cancelled.")
        return result
