"""The agent loop: model step → tool calls → results → next step, until the turn parks, completes or fails.

`TurnDriver.drive` runs one call's worth of a turn:

1. A model step is taken. Calls that need no person run at once (`_park.run_step_calls`); calls to client-resolved
   tools and calls that need approval become input requests; unknown tools or invalid input get an error result.
2. With requests, the step is stored as the parked step and the session waits (one write). Without,
   the assistant message and one tool message with a result per call are appended, and the loop goes on.
3. A settled batch (`respond()`, or a message that dismisses it) gives each parked call its one
   result (`_settle.settle`), the step's messages are appended together, and the loop goes on.

A crash anywhere leaves the last committed state; `Session.resume()` continues from it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from collections.abc import Set as AbstractSet

import anyio
import pydantic

from eve_py._camel import describe_validation_error
from eve_py._json import JsonValue, canonical_dumps, json_problem
from eve_py.agent import Agent
from eve_py.errors import PairingError, SessionConflictError, StoreUnavailableError
from eve_py.harness._commit import EventListener, Write, Writer
from eve_py.harness._conversation import Conversation, ConversationCache
from eve_py.harness._deltas import DeltaWriter
from eve_py.harness._heartbeat import LeaseKeeper
from eve_py.harness._park import LiveListener, ModelChannel, park, run_step_calls
from eve_py.harness._settle import settle
from eve_py.harness._structured import structured_result
from eve_py.models._base import Model, ModelRequest, ModelResponse
from eve_py.parking._results import step_messages
from eve_py.parking._settle import withdraw
from eve_py.protocol import AnyEvent, Event, new_id
from eve_py.protocol.messages import AssistantMessage, Message, TextPart, ToolCallPart, UserMessage
from eve_py.protocol.payloads import (
    ActionsRequestedData,
    MessageCompletedData,
    MessageReceivedData,
    ReceivedPart,
    ResultCompletedData,
    SessionWaitingData,
    StepCompletedData,
    StepFailedData,
    StepStartedData,
    TurnCancelledData,
    TurnCompletedData,
    TurnFailedData,
    TurnStartedData,
)
from eve_py.protocol.turns import TurnInput, TurnResult, TurnResultStatus, TurnState
from eve_py.sessions._record import SessionRecord
from eve_py.sessions._store import SessionStore
from eve_py.tools._client import with_client_tools
from eve_py.tools._resolved import ResolvedTool
from eve_py.tracing._spans import request_model, turn_span

__all__ = ("TurnDriver",)


class TurnDriver:
    """Runs steps of one session until it waits, completes or fails. One per call."""

    def __init__(
        self,
        *,
        agent: Agent,
        model: Model,
        store: SessionStore,
        max_steps: int,
        listener: EventListener | None,
        lease_s: float,
        conversations: ConversationCache | None = None,
        live: LiveListener | None = None,
    ) -> None:
        self._agent, self._model = agent, model
        self._channel = ModelChannel(model, live)
        self._max_steps = max_steps
        self._streams = listener is not None
        self.writer = Writer(
            LeaseKeeper(store, lease_s),
            listener=listener,
            lease_s=lease_s,
            conversations=conversations if conversations is not None else ConversationCache(size=1),
        )
        self._message: str | None = None
        self._result: JsonValue | None = None

    @property
    def tools(self) -> Mapping[str, ResolvedTool]:
        """The agent's tools by name."""
        return self._agent.tools

    def turn_tools(self, record: SessionRecord) -> Mapping[str, ResolvedTool]:
        """The tools of the session's turn: the agent's, and the client tools it was offered."""
        return with_client_tools(self._agent.tools, record.turn.client_tools if record.turn is not None else None)

    def start_turn(self, record: SessionRecord, sent: TurnInput) -> Write:
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

    def result(self, record: SessionRecord, status: TurnResultStatus, error: str | None = None) -> TurnResult:
        """The `TurnResult` for the session as it now stands."""
        return TurnResult(
            session_id=record.id,
            turn_id=record.turn.turn_id if record.turn else None,
            status=status,
            input_requests=record.pending.open_requests() if status == "waiting" and record.pending else [],
            message=self._message,
            events=list[AnyEvent](self.writer.events),
            error=error,
            result=self._result,
        )

    async def drive(self, record: SessionRecord) -> TurnResult:
        """Run steps until the session parks, the model answers without tool calls, or it fails.

        Raises:
            PairingError: The conversation would break the pairing rule (nothing is sent).
            SessionConflictError: Another writer changed the session meanwhile.
        """
        keeper = self.writer.store
        assert isinstance(keeper, LeaseKeeper)
        with turn_span(self._agent.name, self._model, record) as traced:
            try:
                async with keeper.beating():  # heartbeat: a slow step keeps its lease
                    result = await self._drive(record)
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    ended = await self._cancelled(record.id)
                traced.cancelled(ended=ended)
                raise
            traced.ended(result)
            return result

    async def claim(self, record: SessionRecord) -> SessionRecord:
        """Take over a running turn: write this driver's lease before doing any work.

        Of several workers taking over at once, one wins; the others get `SessionConflictError`
        here, before they run anything. The lease is marked as a takeover, so a forced `resume()`
        that reads it afterwards is refused too.
        """
        self.writer.takeover = True
        return await self.writer.commit(record, [], durable=False)

    async def cancel_parked(self, record: SessionRecord) -> SessionRecord:
        """End a parked turn: each parked call answered as cancelled, open requests withdrawn.

        Events: `input.resolved` (outcome `cancelled`), `turn.cancelled`, `session.waiting`.
        """
        assert record.pending is not None and record.turn is not None
        with turn_span(self._agent.name, self._model, record, cancelling=True) as traced:
            settled, events = withdraw(record.turn, record.pending)
            events.append(record.turn.stamp(SessionWaitingData()))
            cancelled = await self.writer.commit(record.cancel(), events, messages=step_messages(settled))
            traced.cancelled(ended=True)
            return cancelled

    async def _cancelled(self, session_id: str) -> bool:
        """After a cancellation: a turn of this driver with no parked step goes back to idle.

        Mid-settle (answers accepted, results being computed) the turn stays `running`, but the
        lease is released so `resume()` or a new message can finish it at once. True if this
        ended the turn (`turn.cancelled`).
        """
        record = await self.writer.store.load(session_id)
        lease = record.lease
        if record.status != "running" or lease is None or lease.owner != self.writer.owner:
            return False  # parked, or settled elsewhere
        try:
            if record.pending is not None or record.queued is not None:
                await self.writer.commit(record, [], release=True)
                return False
            turn = record.turn
            assert turn is not None
            cancelled = TurnCancelledData(sequence=turn.sequence, turn_id=turn.turn_id)
            await self.writer.commit(record.cancel(), [turn.stamp(cancelled), turn.stamp(SessionWaitingData())])
        except SessionConflictError:
            return False  # someone else wrote meanwhile; their state stands
        return True

    async def _drive(self, record: SessionRecord) -> TurnResult:
        while True:
            tools = self.turn_tools(record)
            if record.pending is not None:
                queued = record.queued
                if queued is not None:  # a message dismissed this batch: settle it, start that turn
                    then = functools.partial(self._next_turn, sent=queued)
                    record = await settle(self.writer, tools, record, dismiss=True, then=then, channel=self._channel)
                    continue
                expiry_s = self._agent.input_expires_after_s
                record = await settle(self.writer, tools, record, default_expiry_s=expiry_s, channel=self._channel)
                if record.status == "waiting":
                    return self.result(record, "waiting")
                continue
            if record.queued is not None:
                started = self.start_turn(record, record.queued)
                record = await self.writer.commit(
                    started.record, started.events, messages=started.messages, durable=False
                )
                continue
            assert record.turn is not None
            if record.turn.steps_since_input >= self._max_steps:
                limit = f"The turn reached its limit of {self._max_steps} model steps without a person's input."
                return await self._fail(record, [], None, "STEP_LIMIT", limit)
            record, outcome = await self._step(record)
            if outcome is not None:
                return outcome

    def _next_turn(self, record: SessionRecord, sent: TurnInput) -> Write:
        """End the settled turn (`turn.completed`, `session.waiting`) and start the one `sent` asks for."""
        ended: list[Event] = []
        turn = record.turn
        if turn is not None:
            ended.append(turn.stamp(TurnCompletedData(sequence=turn.sequence, turn_id=turn.turn_id)))
            ended.append(turn.stamp(SessionWaitingData()))
            record = record.complete()
        started = self.start_turn(record, sent)
        return Write(started.record, ended + started.events, started.messages)

    async def _fail(
        self,
        record: SessionRecord,
        events: list[Event],
        step_index: int | None,
        code: str,
        message: str,
        *,
        messages: list[Message] | None = None,
    ) -> TurnResult:
        """Fail the turn: `step.failed` (when a step failed), `turn.failed`, `session.waiting`."""
        turn = record.turn
        assert turn is not None
        coords = {"sequence": turn.sequence, "turn_id": turn.turn_id}
        if step_index is not None:
            events.append(turn.stamp(StepFailedData(**coords, step_index=step_index, code=code, message=message)))
        events.append(turn.stamp(TurnFailedData(**coords, code=code, message=message)))
        events.append(turn.stamp(SessionWaitingData()))
        record = await self.writer.commit(record.fail(message), events, messages=messages or [])
        return self.result(record, "failed", message)

    def _instructions(self, turn: TurnState) -> str | None:
        """The system prompt for a step of `turn`: the agent's, plus the turn's context and output schema."""
        parts = [self._agent.instructions] if self._agent.instructions else []
        if turn.client_context is not None:
            parts.append(f"Context from the client for this turn:\n{turn.client_context}")
        if turn.output_schema is not None:
            parts.append(
                "When you give your final answer in this turn, reply with only a JSON value (no prose, no code "
                f"fence) that is valid against this JSON Schema:\n{canonical_dumps(turn.output_schema)}"
            )
        return "\n\n".join(parts) if parts else None

    async def _request(
        self, record: SessionRecord, conversation: Conversation, events: list[Event]
    ) -> tuple[SessionRecord, ModelResponse]:
        """Send the model the step's request; with a listener, its deltas are stored as they arrive.

        `events` (`step.started`) go first: with a delta writer, in the first delta's write.

        Raises:
            Exception: Whatever the model raised.
        """
        turn = record.turn
        assert turn is not None
        writer = DeltaWriter(self.writer, turn, turn.steps, lead=events) if self._streams else None
        request = ModelRequest(
            instructions=self._instructions(turn),
            messages=list(conversation.messages),
            tools=[tool.spec for tool in self.turn_tools(record).values()],
            on_delta=writer.on_delta if writer is not None else None,
        )
        if writer is None:
            return record, await request_model(self._model, request, record.id)
        try:
            async with writer.writing(record):
                response = await request_model(self._model, request, record.id)
        finally:
            record = writer.record or record
        return record, response

    async def _step(self, record: SessionRecord) -> tuple[SessionRecord, TurnResult | None]:
        turn = record.turn
        assert turn is not None
        step_index = turn.steps
        coords = {"sequence": turn.sequence, "turn_id": turn.turn_id, "step_index": step_index}
        events: list[Event] = [turn.stamp(StepStartedData(**coords, model_id=self._model.name))]
        conversation = await self.writer.conversation(record)
        try:
            conversation.check()
        except PairingError as exc:
            await self._fail(record, events, step_index, "PAIRING", str(exc))
            raise
        try:
            record, response = await self._request(record, conversation, events)
        except StoreUnavailableError:
            # The store failed, not the provider: the turn is left running for recovery (its lease
            # lapses and a worker resumes it), as a crash would leave it, not failed for good.
            raise
        except Exception as exc:  # a provider failure fails the turn, not the session
            return record, await self._fail(record, events, step_index, "MODEL_ERROR", f"{type(exc).__name__}: {exc}")
        # A call's input that is not JSON (NaN, a lone surrogate) fails only that call, in `_assistant`.
        calls = [{"id": c.id, "name": c.name} for c in response.tool_calls]
        problem = json_problem({"text": response.text, "toolCalls": calls})
        if problem is not None:  # it could not be stored (a lone surrogate)
            message = f"The model returned a response that is not JSON text: {problem}"
            return record, await self._fail(record, events, step_index, "MODEL_ERROR", message)
        try:
            assistant, unparsed = _assistant(response, conversation.used_call_ids())
        except pydantic.ValidationError as exc:
            message = f"The model returned a response that is not valid JSON data: {describe_validation_error(exc)}"
            return record, await self._fail(record, events, step_index, "MODEL_ERROR", message)
        turn = turn.stepped()  # the record takes it with the step's write: one copy of each, not two
        text = assistant.text if assistant.text.strip() else None
        finish = "tool-calls" if assistant.tool_calls else "stop"
        if text:
            self._message = text
            events.append(turn.stamp(MessageCompletedData(**coords, finish_reason=finish, message=text)))
        if not assistant.tool_calls:
            return await self._complete(record, turn, assistant if assistant.content else None, events)
        tools = self.turn_tools(record)
        plan, rejected, ran = await run_step_calls(record, turn, step_index, assistant, tools, unparsed, self._channel)
        if plan.actions:
            events.append(turn.stamp(ActionsRequestedData(**coords, actions=plan.actions)))
        # eve's order: the step's calls are announced, the step completes, then the calls report.
        events += [turn.stamp(StepCompletedData(**coords, finish_reason="tool-calls")), *rejected, *ran]
        pending = plan.pending(turn.turn_id, step_index, assistant)
        if pending.requests:
            record = await park(
                self.writer,
                record,
                pending,
                events,
                tools=tools,
                default_expiry_s=self._agent.input_expires_after_s,
                turn=turn,
            )
            return record, self.result(record, "waiting")
        record = record.with_turn(turn)
        return await self.writer.commit(record, events, messages=step_messages(pending), durable=False), None

    async def _complete(
        self, record: SessionRecord, turn: TurnState, assistant: AssistantMessage | None, events: list[Event]
    ) -> tuple[SessionRecord, TurnResult]:
        """The model answered without tool calls: end `turn`, as the step left it (or fail it: off its schema)."""
        step_index = turn.steps - 1
        coords = {"sequence": turn.sequence, "turn_id": turn.turn_id, "step_index": step_index}
        events.append(turn.stamp(StepCompletedData(**coords, finish_reason="stop")))
        # Providers reject empty (or blank) assistant text, so a blank response adds nothing.
        messages: list[Message] = [assistant] if assistant is not None else []
        if turn.output_schema is not None:
            result, problem = structured_result(assistant.text if assistant is not None else "", turn.output_schema)
            if problem is not None:
                failed = record.with_turn(turn)
                return failed, await self._fail(failed, events, None, "OUTPUT_INVALID", problem, messages=messages)
            self._result = result
            events.append(turn.stamp(ResultCompletedData(**coords, result=result)))
        events.append(turn.stamp(TurnCompletedData(sequence=turn.sequence, turn_id=turn.turn_id)))
        events.append(turn.stamp(SessionWaitingData()))
        record = await self.writer.commit(record.complete(turn), events, messages=messages)
        return record, self.result(record, "completed")


def _assistant(response: ModelResponse, used: AbstractSet[str]) -> tuple[AssistantMessage, dict[str, str]]:
    """The step's assistant message, and the call ids whose arguments are not a JSON object (with why).

    Some compatible servers reuse ids (`call_0` every step); a repeated id would make every later
    request unpairable, so it gets a suffix, unique in the conversation (`used`) and the response.
    Arguments holding NaN, Infinity or a lone surrogate count as not a JSON object (stored as `{}`),
    like argument text that does not parse: the call gets an error result and the turn goes on.

    Raises:
        pydantic.ValidationError: The response holds data that is not JSON.
    """
    ids: list[str] = []
    for call in response.tool_calls:
        call_id, suffix = call.id, 1
        while call_id in used or call_id in ids:
            suffix += 1
            call_id = f"{call.id}#{suffix}"
        ids.append(call_id)
    text = response.text if response.text and response.text.strip() else None
    content: list[TextPart | ToolCallPart] = [TextPart(text=text)] if text else []
    unparsed: dict[str, str] = {}
    for call_id, call in zip(ids, response.tool_calls, strict=True):
        reason = call.input_error or json_problem(call.input)
        if reason is not None:
            unparsed[call_id] = reason
        content.append(
            ToolCallPart(tool_call_id=call_id, tool_name=call.name, input=call.input if reason is None else {})
        )
    return AssistantMessage(content=content, provider_data=response.provider_data), unparsed
