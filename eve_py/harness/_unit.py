"""`TurnUnit`: one unit of work on a session; it alone holds the record, writes it and keeps the lease.

Every call on a session (`send`, `respond`, `resume`, `expire`, `cancel`, ...) makes one
`TurnUnit` with the record it starts from; the unit's methods are the turn's transitions, each
with a typed outcome, and every write of the call goes through `TurnUnit.write`:

| method | from | outcome |
|---|---|---|
| `start` | idle, waiting (a dead worker's turn: finished first) | turn started, or batch dismissed; `Stale` |
| `accept` | waiting | the answers written, and whether the batch settled; `Stale` |
| `expire` | waiting on a request past its deadline | whether the batch settled; None: nothing due |
| `step` | running | None (the loop goes on), or the turn parked, completed or failed (`TurnResult`) |
| `park` | running | the step's batch open: the session waits |
| `settle` | settling | every parked call has its result (or a dependent question parks again) |
| `complete` | running | the turn ended with the model's answer |

Each transition's source state is checked by the record's own transition (`SessionRecord.park`,
...), which raises `SessionStateError` before anything is written.

`Stale` means a transition was refused on the record the unit was handed (the handle's last one,
read without a store round trip): nothing was written, and `Session` reads the session again, in
one place (`Session._redo`): the refusal stands when nothing changed, else the call is redone on
the stored record. On a record the unit read itself, a refusal is raised.

**One owner of the record.** `TurnUnit.record` is the session as this unit last wrote or read it.
A write is a compare-and-set on its version; while a turn runs, the unit's heartbeat renews its
lease with writes of their own, under the same lock, so a write the unit based on its own last
state goes on the version of its latest beat (the beats change nothing else). Anyone else's write
still conflicts, as it must.

**The acknowledgement.** A caller that answers a request once its effect is durable (the
server's `202`) passes `acknowledge`: the unit calls it once, right after the write that makes
the call's effect durable (an answer's acceptance, a message's `turn.started`, the first write of
anything else), with every event the call wrote so far, and before the turn goes on. If the call
ends having written something but never reached that write, it is called then.

**Durability.** A write is *durable* (synced to disk before `write` returns, on stores that can
tell the difference) when its outcome leaves the process: the last write of a call (a park, a
completed or failed turn, a cancel), a checkpoint of an approved executor's result, and every
write when an event listener is installed. The writes in between (a turn's start, an accepted
answer that settles the batch, a step whose calls ran) need not be synced on their own: a store
keeps writes in order, so the call's last, durable write syncs them too, and a power loss before
it loses only work nobody was told about; `resume()` redoes it (see `docs/sessions.md`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

import anyio
import pydantic

from eve_py._camel import describe_validation_error
from eve_py._json import JsonSchema, JsonValue, json_problem
from eve_py.agent import Agent
from eve_py.errors import PairingError, SessionConflictError, SessionError, SessionStateError, StoreUnavailableError
from eve_py.harness._accept import accepted_events, check_answers, needs_history
from eve_py.harness._commit import Committed, EventListener, Write, notify
from eve_py.harness._conversation import Conversation, ConversationCache
from eve_py.harness._deltas import DeltaWriter
from eve_py.harness._execute import ModelChannel
from eve_py.harness._heartbeat import Heartbeat, check_not_running
from eve_py.harness._park import run_step_calls
from eve_py.harness._settle import checkpoint, parked_again, rerun
from eve_py.harness._steps import assistant_message, step_instructions
from eve_py.harness._structured import structured_result
from eve_py.harness._turns import ActiveTurns
from eve_py.models import Model, ModelRequest, ModelResponse
from eve_py.parking._accept import Acceptance
from eve_py.parking._expire import expire_due, with_deadlines
from eve_py.parking._park import elicitation_requests, park_events
from eve_py.parking._results import action_result, edited_result, error_result, step_messages
from eve_py.parking._settle import dismissal, plan_settlement, withdraw
from eve_py.protocol import AnyEvent, Event, TurnStarted, new_event, new_id, now_iso
from eve_py.protocol.messages import AssistantMessage, Message, ToolResultPart, UserMessage
from eve_py.protocol.payloads import (
    ActionsRequestedData,
    ContextClearedData,
    MessageCompletedData,
    MessageReceivedData,
    ReceivedPart,
    ResultCompletedData,
    SessionCompletedData,
    SessionWaitingData,
    StepCompletedData,
    StepFailedData,
    StepStartedData,
    TurnCancelledData,
    TurnCompletedData,
    TurnFailedData,
    TurnStartedData,
)
from eve_py.protocol.pending import PendingStep, QuestionRef
from eve_py.protocol.requests import InputRequest, InputResponse
from eve_py.protocol.turns import TurnInput, TurnResult, TurnResultStatus, TurnState
from eve_py.sessions import Lease, SessionRecord, SessionStore
from eve_py.tools import ResolvedTool
from eve_py.tools._client import with_client_tools
from eve_py.tracing._spans import mark_parked, request_model, turn_span

__all__ = ("Acknowledge", "Stale", "TurnUnit", "UnitParts")

Acknowledge = Callable[[Committed], Awaitable[None]]
"""Told once that a call's effect is durable, with every event the call wrote up to then."""


@dataclass(frozen=True, slots=True)
class Stale:
    """The outcome of a transition refused on a record the unit did not read itself: nothing was written.

    The record may have been out of date (then the call is redone on the stored one), or the
    refusal stands (the stored record is the same version: `error` is the call's).
    """

    error: SessionError
    """What the transition was refused with."""


@dataclass(frozen=True, slots=True)
class UnitParts:
    """What every unit of work of one runtime shares (`Runtime` makes it)."""

    agent: Agent
    model: Model
    store: SessionStore
    max_steps: int
    listener: EventListener | None
    """Told about every committed write (and makes every write durable)."""
    lease_s: float
    conversations: ConversationCache
    channel: ModelChannel
    """The tool context channel of the calls the units run (`ctx.sample`, live reports)."""
    turns: ActiveTurns
    """The turns running in this process (and what waits for their next write)."""


class TurnUnit:
    """One call's work on one session: the record it holds, every write, the lease. One per call.

    Args:
        parts: The runtime's agent, model, store and listener.
        record: The session to start from.
        fresh: True when `record` was just read from the store (a refusal on it is final).
        acknowledge: Told once when the call's effect is durable (see the module's docstring).
        acknowledge_at_turn: Acknowledge at the write that starts a turn (a message), not the first write.
    """

    def __init__(
        self,
        parts: UnitParts,
        record: SessionRecord,
        *,
        fresh: bool,
        acknowledge: Acknowledge | None = None,
        acknowledge_at_turn: bool = False,
    ) -> None:
        self._parts = parts
        self._record = record
        self._stored = record
        """The session as this unit last wrote or read it (its beats included)."""
        self._fresh = fresh
        self._acknowledge = acknowledge
        self._at_turn = acknowledge_at_turn
        self.events: list[Event] = []
        """Every event this unit wrote, oldest first."""
        self._first_index: int | None = None
        """The log index of this unit's first event (None until it writes)."""
        self._owner = new_id("wkr")
        self._takeover = False
        self._lock = anyio.Lock(fast_acquire=True)  # a free lock is taken without a trip around the loop
        self._state_version = record.version
        """The version of the unit's last state (its last write or read); beats since moved the version on."""
        self._beating = False
        self._conversation: Conversation | None = None
        self._unwritten: Write | None = None
        """A settled step computed from stored answers alone: it rides with the next write (settling
        again after a crash gives the same results, so it needs no write of its own)."""
        self._message: str | None = None
        self._result: JsonValue | None = None

    @property
    def record(self) -> SessionRecord:
        """The session as this unit holds it: as it last wrote or read it, or a transition of that which
        its next write carries (a settled step computed from stored answers alone)."""
        return self._record

    @property
    def tools(self) -> Mapping[str, ResolvedTool]:
        """The agent's tools by name."""
        return self._parts.agent.tools

    def turn_tools(self) -> Mapping[str, ResolvedTool]:
        """The tools of the session's turn: the agent's, and the client tools it was offered."""
        turn = self._record.turn
        return with_client_tools(self._parts.agent.tools, turn.client_tools if turn is not None else None)

    # The one way a state change reaches the store.

    async def write(
        self,
        record: SessionRecord,
        events: list[Event],
        *,
        messages: Sequence[Message] = (),
        release: bool = False,
        durable: bool = True,
    ) -> SessionRecord:
        """Write `record`, `events` and `messages` atomically, then tell the listener (and maybe acknowledge).

        `record` is a transition of this unit's record. A `running` record carries this unit's
        lease, renewed by the write (unless `release`, which lets another worker take the turn
        over at once); any other record is freed.

        Args:
            durable: Sync before returning (see the module's docstring); False only for a write the
                same call follows with a durable one.

        Raises:
            SessionConflictError: Another writer changed the session since this unit's last state.
        """
        parts = self._parts
        lease = None
        if record.status == "running" and not release:
            lease = Lease(owner=self._owner, expires_at=time.time() + parts.lease_s, takeover=self._takeover)
        carried, self._unwritten = self._unwritten, None
        written = messages
        if carried is not None:
            events = [*carried.events, *events]
            written = [*carried.messages, *messages]
        if noted := parts.turns.take_notes(record.id):
            events = [*events, *noted]  # what others recorded while this turn ran here (`ActiveTurns.note`)
        async with self._lock:
            version = self._stored.version if record.version == self._state_version else record.version
            updated = record.model_copy(update={"lease": lease, "updated_at": now_iso(), "version": version})
            stored = await parts.store.commit(updated, events, written, durable=durable or parts.listener is not None)
            self._record = self._stored = stored
            self._state_version = stored.version
        self._remember(stored, written, messages)
        if self._first_index is None:
            self._first_index = record.event_count
        self.events += events
        if parts.listener is not None:  # the library alone has none: no coroutine made for nothing
            await notify(parts.listener, Committed(record.id, record.event_count, events))
        if self._acknowledge is not None and (not self._at_turn or any(isinstance(e, TurnStarted) for e in events)):
            await self.acknowledge()
        return stored

    @property
    def wrote(self) -> bool:
        """Whether this unit wrote anything."""
        return self._first_index is not None

    @property
    def acknowledging(self) -> bool:
        """Whether the caller still waits to be told the call's effect is durable."""
        return self._acknowledge is not None

    async def acknowledge(self) -> None:
        """Tell the caller the call's effect is durable, if it was not told yet and something was written."""
        acknowledge, self._acknowledge = self._acknowledge, None
        if acknowledge is not None and self._first_index is not None:
            await acknowledge(Committed(self._record.id, self._first_index, list(self.events)))

    def _remember(self, stored: SessionRecord, written: Sequence[Message], messages: Sequence[Message]) -> None:
        """Keep the conversation cache up to date with what a write appended."""
        conversation = self._conversation
        if conversation is None:
            self._parts.conversations.extend(stored, written)
        # The kept conversation holds the carried messages already (see `conversation`).
        elif conversation.end == stored.message_count - len(messages):
            conversation.append(messages)
            self._parts.conversations.remember(stored.id, conversation)

    async def reload(self) -> SessionRecord:
        """Read the session again: the unit's state is the stored one from here on."""
        self._unwritten = None
        async with self._lock:
            self._record = self._stored = await self._parts.store.load(self._record.id)
            self._state_version = self._record.version
        return self._record

    async def conversation(self) -> Conversation:
        """The session's conversation as the unit's record has it (loaded once, then kept up to date).

        A settled step not yet written is in it already: the next write stores it.
        """
        record = self._record
        carried = self._unwritten.messages if self._unwritten is not None else ()
        kept = self._conversation
        if kept is None or kept.end != record.message_count + len(carried) or kept.start != record.history_start:
            kept = self._conversation = await self._parts.conversations.load(self._parts.store, record)
            kept.append(carried)
        return kept

    async def _beat(self) -> None:
        async with self._lock:
            held = self._stored
            if not self._beating or held.status != "running" or held.lease is None:
                return
            lease = held.lease.model_copy(update={"expires_at": time.time() + self._parts.lease_s})
            try:
                # Only the lease changes: a beat lost to a power loss costs nothing.
                stored = await self._parts.store.commit(held.leased(lease, held.updated_at), [], durable=False)
            except SessionConflictError:
                self._beating = False  # taken over: this unit's next write will be refused anyway
                return
            self._stored = stored

    # Transitions.

    async def start(self, sent: TurnInput) -> Stale | None:
        """`send`'s first write: the turn started, or the open batch dismissed with the message queued.

        A running turn whose worker died is finished first, as `resume()` would; claiming it first
        means that of several workers taking over, only one runs anything.

        Raises:
            SessionStateError: A live worker runs the session's turn, or it is still running after the takeover.
            SessionEndedError: The session was reset.
            SessionConflictError: Another writer changed the session meanwhile.
        """
        record = self._record
        try:
            record.active()
            if record.status == "running":
                check_not_running(record)
                await self.claim()
                await self.drive()
                if (await self.reload()).status == "running":
                    raise SessionStateError(f"Session {record.id!r} is still running a turn.", status="running")
                record = self._record
            pending = record.pending
            if record.status == "waiting" and pending is not None and record.turn is not None:
                # One write dismisses the batch and queues the message; settling the batch and starting
                # the new turn follow. A crash in between loses neither: resume() does both.
                dismissed, event = dismissal(record.turn, pending, time.time())
                await self.write(record.dismiss(sent, dismissed), [event], durable=False)
                return None
            started = self._started(record, sent)
            await self.write(started.record, started.events, messages=started.messages, durable=False)
        except SessionError as exc:
            if self._fresh or self.wrote:
                raise
            return Stale(exc)
        return None

    def _started(self, record: SessionRecord, sent: TurnInput) -> Write:
        """`record` with a new turn started by what a person `sent`, its first events and its message."""
        turn = TurnState.begin(new_id("turn"), record.next_sequence, sent)
        received = MessageReceivedData(
            sequence=turn.sequence,
            turn_id=turn.turn_id,
            message=sent.text,
            parts=[ReceivedPart(text=part) for part in sent.parts],
        )
        events = [turn.stamp(TurnStartedData(sequence=turn.sequence, turn_id=turn.turn_id)), turn.stamp(received)]
        return Write(record.start_turn(turn), events, [UserMessage(content=sent.text)])

    async def accept(
        self,
        responses: Sequence[InputResponse],
        *,
        client_context: str | None,
        output_schema: JsonSchema | None,
        settle: bool,
        by: str,
        delivery_id: str | None,
    ) -> bool | Stale:
        """Check `responses` against the parked batch (`harness._accept`) and write them with `input.resolved`.

        Returns:
            Whether the batch settled (its results are computed next, so the write is durable only
            when it did not: then it is the call's last); `Stale` when the unit's record was out of date.

        Raises:
            EveError: What `check_answers` refuses with (nothing written); `SessionConflictError`
                when another writer answered first.
        """
        record = self._record
        try:
            history = (await self.conversation()).messages if needs_history(record, responses) else None
            accepted = check_answers(
                record, responses, history=history, tools=self.tools, settle=settle, by=by, now=time.time()
            )
            assert record.turn is not None
            await self._write_acceptance(
                record.with_turn(record.turn.with_context(client_context, output_schema)), accepted, delivery_id
            )
        except SessionError as exc:
            if self._fresh:
                raise
            return Stale(exc)
        return accepted.settled

    async def expire(self, now: float) -> bool | None:
        """End the parked batch's requests whose deadline is `now` (Unix s) or earlier as `expired`, in one write.

        Returns:
            Whether the batch settled; None when the session waits on no due request.

        Raises:
            SessionConflictError: Another writer (an answer, another worker's sweep) wrote first.
        """
        record = self._record
        pending = record.pending
        if record.status != "waiting" or pending is None or record.turn is None:
            return None
        expired = expire_due(pending, now)
        if expired is None:
            return None
        await self._write_acceptance(record, expired)
        return expired.settled

    async def _write_acceptance(
        self, record: SessionRecord, accepted: Acceptance, delivery_id: str | None = None
    ) -> SessionRecord:
        assert record.turn is not None and record.pending is not None, "only a parked batch accepts anything"
        events = accepted_events(record.turn, record.pending, accepted, delivery_id)
        answered = record.answer(accepted.pending, settled=accepted.settled)
        return await self.write(answered, events, durable=not accepted.settled)

    async def claim(self) -> SessionRecord:
        """Take over a running turn: write this unit's lease before doing any work.

        Of several workers taking over at once, one wins; the others get `SessionConflictError`
        here, before they run anything. The lease is marked as a takeover, so a forced `resume()`
        that reads it afterwards is refused too.
        """
        self._takeover = True
        return await self.write(self._record, [], durable=False)

    async def drive(self) -> TurnResult:
        """Run steps until the session parks, the model answers without tool calls, or it fails.

        Raises:
            PairingError: The conversation would break the pairing rule (nothing is sent).
            SessionConflictError: Another writer changed the session meanwhile.
        """
        parts = self._parts
        heartbeat = Heartbeat(self._beat, parts.lease_s / 3)
        with turn_span(parts.agent.name, parts.model, self._record) as traced:
            self._beating = True
            try:
                async with heartbeat.beating():  # a slow step keeps its lease
                    result = await self._drive()
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    ended = await self._cancelled()
                traced.cancelled(ended=ended)
                raise
            finally:
                if self._lock.locked():  # a beat on its way finishes first; then none finds anything to renew
                    with anyio.CancelScope(shield=True):
                        async with self._lock:
                            self._beating = False
                else:  # no beat can start before this returns: nothing here awaits
                    self._beating = False
            traced.ended(result)
            return result

    async def _drive(self) -> TurnResult:
        while True:
            record = self._record
            if record.pending is not None:
                if record.queued is not None:  # a message dismissed this batch: settle it, start that turn
                    await self.settle(dismiss=True, next_turn=record.queued)
                    continue
                await self.settle()
                if self._record.status == "waiting":
                    return self.result("waiting")
                continue
            if record.queued is not None:
                started = self._started(record, record.queued)
                await self.write(started.record, started.events, messages=started.messages, durable=False)
                continue
            assert record.turn is not None
            if record.turn.steps_since_input >= self._parts.max_steps:
                limit = f"The turn reached its limit of {self._parts.max_steps} model steps without a person's input."
                return await self.fail([], None, "STEP_LIMIT", limit)
            outcome = await self.step()
            if outcome is not None:
                return outcome

    async def step(self) -> TurnResult | None:
        """One model step and its calls: None when the loop goes on, else how the turn stopped (parked,
        completed, failed).

        Raises:
            PairingError: The conversation would break the pairing rule (the turn fails first).
            StoreUnavailableError: The store failed mid-step (the turn is left running for recovery).
        """
        turn = self._record.turn
        assert turn is not None
        step_index = turn.steps
        coords = {"sequence": turn.sequence, "turn_id": turn.turn_id, "step_index": step_index}
        events: list[Event] = [turn.stamp(StepStartedData(**coords, model_id=self._parts.model.name))]
        conversation = await self.conversation()
        try:
            conversation.check()
        except PairingError as exc:
            await self.fail(events, step_index, "PAIRING", str(exc))
            raise
        try:
            response = await self._request(turn, conversation, events)
        except StoreUnavailableError:
            # The store failed, not the provider: the turn is left running for recovery (its lease
            # lapses and a worker resumes it), as a crash would leave it, not failed for good.
            raise
        except Exception as exc:  # a provider failure fails the turn, not the session
            return await self.fail(events, step_index, "MODEL_ERROR", f"{type(exc).__name__}: {exc}")
        # A call's input that is not JSON (NaN, a lone surrogate) fails only that call (`assistant_message`).
        calls = [{"id": c.id, "name": c.name} for c in response.tool_calls]
        problem = json_problem({"text": response.text, "toolCalls": calls})
        if problem is not None:  # it could not be stored (a lone surrogate)
            message = f"The model returned a response that is not JSON text: {problem}"
            return await self.fail(events, step_index, "MODEL_ERROR", message)
        try:
            assistant, unparsed = assistant_message(response, conversation.used_call_ids())
        except pydantic.ValidationError as exc:
            message = f"The model returned a response that is not valid JSON data: {describe_validation_error(exc)}"
            return await self.fail(events, step_index, "MODEL_ERROR", message)
        turn = turn.stepped()  # the record takes it with the step's write: one copy of each, not two
        text = assistant.text if assistant.text.strip() else None
        if text:
            self._message = text
            finish = "tool-calls" if assistant.tool_calls else "stop"
            events.append(turn.stamp(MessageCompletedData(**coords, finish_reason=finish, message=text)))
        if not assistant.tool_calls:
            return await self.complete(turn, assistant if assistant.content else None, events)
        tools = self.turn_tools()
        channel = self._parts.channel
        plan, rejected, ran = await run_step_calls(self._record, turn, step_index, assistant, tools, unparsed, channel)
        if plan.actions:
            events.append(turn.stamp(ActionsRequestedData(**coords, actions=list(plan.actions))))
        # eve's order: the step's calls are announced, the step completes, then the calls report.
        events += [turn.stamp(StepCompletedData(**coords, finish_reason="tool-calls")), *rejected, *ran]
        pending = plan.pending(turn.turn_id, step_index, assistant)
        if pending.requests:
            await self.park(pending, events, turn)
            return self.result("waiting")
        await self.write(self._record.with_turn(turn), events, messages=step_messages(pending), durable=False)
        return None

    async def _request(self, turn: TurnState, conversation: Conversation, events: list[Event]) -> ModelResponse:
        """Send the model the step's request; with a listener, its deltas are stored as they arrive.

        `events` (`step.started`) go first: with a delta writer, in the first delta's write (which
        takes them out of the list).

        Raises:
            Exception: Whatever the model raised.
        """
        parts = self._parts
        deltas = DeltaWriter(self.append, turn, turn.steps, lead=events) if parts.listener is not None else None
        request = ModelRequest(
            instructions=step_instructions(parts.agent, turn),
            messages=list(conversation.messages),
            tools=[tool.spec for tool in self.turn_tools().values()],
            on_delta=deltas.on_delta if deltas is not None else None,
        )
        if deltas is None:
            return await request_model(parts.model, request, self._record.id)
        async with deltas.writing():
            return await request_model(parts.model, request, self._record.id)

    async def park(self, pending: PendingStep, events: list[Event], turn: TurnState | None = None) -> SessionRecord:
        """Open `pending` as the session's batch, after `events`: `input.requested`, then `turn.waiting`.

        Each request gets its deadline when its tool or the agent sets one (`parking._expire.with_deadlines`).

        Args:
            pending: The batch, its requests without deadlines yet.
            events: What the step logged before it parked.
            turn: The current turn as the step left it, when the unit's record does not hold it yet.

        Raises:
            SessionConflictError: Another writer changed the session meanwhile.
        """
        expiry_s = self._parts.agent.input_expires_after_s
        pending = mark_parked(with_deadlines(pending, self.turn_tools(), expiry_s, time.time()))
        parked = self._record.park(pending, turn)
        assert parked.turn is not None
        return await self.write(parked, [*events, *park_events(parked.turn, pending)])

    async def settle(self, *, dismiss: bool = False, next_turn: TurnInput | None = None) -> SessionRecord:
        """Give every parked call of a settled batch its one result and append the step.

        An approved call's executor runs now; a call whose resolver questions were answered runs
        again with the answers. Each result is stored before anything else runs when the call was
        approved, so `resume()` after a crash never runs a person-approved executor twice. A call
        whose resolvers ask a further question parks again (the unit's record is then `waiting`).

        Args:
            dismiss: Settle every open request as unanswered, asking nothing further (a message
                dismissed the batch), so the step always completes.
            next_turn: Ends the settled turn and starts this one, in the same write.
        """
        record = self._record
        pending, turn = record.pending, record.turn
        assert pending is not None and turn is not None and record.settling, "only a settling batch is settled"
        tools = self.turn_tools()
        plan = plan_settlement(turn, pending, record.approved_tools, lambda name: _executable(tools.get(name)))
        results: dict[str, ToolResultPart] = dict(plan.results)
        recorded = {call_id: dict(entries) for call_id, entries in plan.recorded.items()}
        reports = dict(plan.reports)
        events: list[Event] = list(plan.events)
        questions: dict[str, QuestionRef] = {}
        requests: list[InputRequest] = []
        for call in plan.rerun:
            tool = tools.get(call.tool_name)
            if tool is None or tool.plan is None:
                gone = f"The tool {call.tool_name!r} is no longer available."
                results[call.tool_call_id] = error_result(call, gone)
                events.append(action_result(turn, pending.step_index, call, gone, "failed", "TOOL_UNAVAILABLE"))
                continue
            approved = call.tool_call_id in plan.approved_calls
            outcome = await rerun(
                record.id, turn, pending.step_index, call, tool, events, approved=approved,
                recorded=recorded, reports=reports, channel=self._parts.channel, dismiss=dismiss,
            )  # fmt: skip
            if isinstance(outcome, ToolResultPart):
                if (edited := plan.edited_inputs.get(call.tool_call_id)) is not None:
                    outcome = edited_result(outcome, edited)
                results[call.tool_call_id] = outcome
                recorded.pop(call.tool_call_id, None)
                pending = checkpoint(pending, results, plan, recorded)
                # Stored before anything else runs: after a crash, resume() finds the result and does
                # not run this executor again (durably so when a person approved it).
                kept = self._record.checkpoint(pending, list(plan.approved_tools))
                await self.write(kept, events, durable=approved)
                events = []
            else:
                requests += elicitation_requests(call, outcome, questions)
        if requests:
            again = parked_again(pending, plan, results, recorded, reports, requests, questions)
            self._record = self._record.checkpoint(pending, list(plan.approved_tools))
            return await self.park(again, events)
        messages: list[Message] = [*step_messages(pending.with_results(results))]
        settled = self._record.settle(list(plan.approved_tools), answered=bool(pending.answers))
        if next_turn is not None:
            ended: list[Event] = []
            if settled.turn is not None:
                ended.append(settled.turn.stamp(TurnCompletedData(sequence=turn.sequence, turn_id=turn.turn_id)))
                ended.append(settled.turn.stamp(SessionWaitingData()))
                settled = settled.complete()
            started = self._started(settled, next_turn)
            events += ended + started.events
            return await self.write(started.record, events, messages=[*messages, *started.messages], durable=False)
        if not plan.rerun:
            # Nothing ran: the results come from answers already stored, so settling again after a
            # crash gives the same ones. They ride with the next write (one write fewer).
            self._unwritten = Write(settled, events, messages)
            self._record = settled
            return settled
        return await self.write(settled, events, messages=messages, durable=False)

    async def complete(self, turn: TurnState, assistant: AssistantMessage | None, events: list[Event]) -> TurnResult:
        """The model answered without tool calls: end `turn`, as the step left it (or fail it: off its schema)."""
        step_index = turn.steps - 1
        coords = {"sequence": turn.sequence, "turn_id": turn.turn_id, "step_index": step_index}
        events.append(turn.stamp(StepCompletedData(**coords, finish_reason="stop")))
        # Providers reject empty (or blank) assistant text, so a blank response adds nothing.
        messages: list[Message] = [assistant] if assistant is not None else []
        if turn.output_schema is not None:
            result, problem = structured_result(assistant.text if assistant is not None else "", turn.output_schema)
            if problem is not None:
                self._record = self._record.with_turn(turn)
                return await self.fail(events, None, "OUTPUT_INVALID", problem, messages=messages)
            self._result = result
            events.append(turn.stamp(ResultCompletedData(**coords, result=result)))
        events.append(turn.stamp(TurnCompletedData(sequence=turn.sequence, turn_id=turn.turn_id)))
        events.append(turn.stamp(SessionWaitingData()))
        await self.write(self._record.complete(turn), events, messages=messages)
        return self.result("completed")

    async def fail(
        self,
        events: list[Event],
        step_index: int | None,
        code: str,
        message: str,
        *,
        messages: list[Message] | None = None,
    ) -> TurnResult:
        """Fail the turn: `step.failed` (when a step failed), `turn.failed`, `session.waiting`."""
        turn = self._record.turn
        assert turn is not None
        coords = {"sequence": turn.sequence, "turn_id": turn.turn_id}
        if step_index is not None:
            events.append(turn.stamp(StepFailedData(**coords, step_index=step_index, code=code, message=message)))
        events.append(turn.stamp(TurnFailedData(**coords, code=code, message=message)))
        events.append(turn.stamp(SessionWaitingData()))
        await self.write(self._record.fail(message), events, messages=messages or [])
        return self.result("failed", message)

    async def cancel_parked(self) -> SessionRecord:
        """End a parked turn: each parked call answered as cancelled, open requests withdrawn.

        Events: `input.resolved` (outcome `cancelled`), `turn.cancelled`, `session.waiting`.
        """
        record = self._record
        assert record.pending is not None and record.turn is not None
        with turn_span(self._parts.agent.name, self._parts.model, record, cancelling=True) as traced:
            settled, events = withdraw(record.turn, record.pending)
            events.append(record.turn.stamp(SessionWaitingData()))
            cancelled = await self.write(record.cancel(), events, messages=step_messages(settled))
            traced.cancelled(ended=True)
            return cancelled

    async def _cancelled(self) -> bool:
        """After a cancellation: a turn of this unit with no parked step goes back to idle.

        Mid-settle (answers accepted, results being computed) the turn stays `running`, but the
        lease is released so `resume()` or a new message can finish it at once. True if this
        ended the turn (`turn.cancelled`).
        """
        try:
            record = await self.reload()
        except SessionError:
            return False
        lease = record.lease
        if record.status != "running" or lease is None or lease.owner != self._owner:
            return False  # parked, or settled elsewhere
        try:
            if record.pending is not None or record.queued is not None:
                await self.write(record, [], release=True)
                return False
            turn = record.turn
            assert turn is not None
            cancelled = TurnCancelledData(sequence=turn.sequence, turn_id=turn.turn_id)
            await self.write(record.cancel(), [turn.stamp(cancelled), turn.stamp(SessionWaitingData())])
        except SessionConflictError:
            return False  # someone else wrote meanwhile; their state stands
        return True

    async def clear(self) -> SessionRecord:
        """Leave the history out of what the model is sent from now on: `context.cleared`, `session.waiting`."""
        record = self._record
        turn_id = record.turn.turn_id if record.turn is not None else f"turn_{record.next_sequence}"
        sequence = record.turn.sequence if record.turn is not None else record.next_sequence
        cleared = ContextClearedData(sequence=sequence, turn_id=turn_id, session_id=record.id)
        return await self.write(record.clear(), [new_event(cleared), new_event(SessionWaitingData())])

    async def end(self) -> SessionRecord:
        """Retire the session: `session.completed`; it takes no more messages."""
        return await self.write(self._record.end(), [new_event(SessionCompletedData())])

    async def append(self, events: list[Event]) -> SessionRecord:
        """Record `events` that change nothing else (a model's deltas, a delivery that found nothing to act on)."""
        return await self.write(self._record, events, durable=False)

    def result(self, status: TurnResultStatus, error: str | None = None) -> TurnResult:
        """The `TurnResult` for the session as it now stands."""
        record = self._record
        return TurnResult(
            session_id=record.id,
            turn_id=record.turn.turn_id if record.turn else None,
            status=status,
            input_requests=record.pending.open_requests() if status == "waiting" and record.pending else [],
            message=self._message,
            events=list[AnyEvent](self.events),
            error=error,
            result=self._result,
        )


def _executable(tool: ResolvedTool | None) -> bool:
    return tool is not None and tool.plan is not None
