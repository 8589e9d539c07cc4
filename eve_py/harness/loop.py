"""The agent loop: model step → tool calls → results → next step, with parking and resume.

Every state change is one store commit (record + events, compare-and-set on the version):

1. A model step is taken. Calls to executable tools that need no approval run at once (in
   one task group). Calls to client-resolved tools and calls that need approval become input
   requests. Calls to unknown tools or with invalid input get an error result.
2. With requests, the step is stored as `pending` (assistant message + known results + the
   batch) and the session waits. Without, the assistant message and one tool message with a
   result per call are appended to the conversation, and the loop goes on.
3. When the batch is settled (`respond()`), the parked calls get their one result each:
   the answer, `{"status": "ignored"}`, an approved executor's output, or a denial error. Then
   the step's messages are appended together, and the loop goes on.

A crash anywhere leaves the last committed state; `Session.resume()` continues from it. The
answers are durable from the moment they are accepted, the conversation gets a step's results
in one write, and a settling batch stores each approved executor's result as soon as it has
it, so a retry can neither lose an answer nor duplicate a result, and never runs an approved
executor whose result was stored.
"""

from __future__ import annotations

import functools
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import anyio
import jsonschema
import pydantic

from eve_py._json import JsonValue, canonical_dumps, to_json_value
from eve_py._wire import describe_validation_error
from eve_py.agent import Agent
from eve_py.authoring._signature import NeedsInput
from eve_py.context import ApprovalContext, ToolContext
from eve_py.errors import PairingError, SessionConflictError, ToolError
from eve_py.events import AnyEvent, Event, new_id, now_iso
from eve_py.events.payloads import (
    ActionsRequestedData,
    InputRequestedData,
    InputResolvedData,
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
    TurnWaitingData,
)
from eve_py.harness.conversation import Conversation, ConversationCache
from eve_py.harness.deltas import DeltaWriter
from eve_py.harness.heartbeat import LeaseKeeper
from eve_py.harness.results import action_result, error_result, input_problem, step_messages, structured_result
from eve_py.harness.stamp import stamp
from eve_py.models.base import Model, ModelRequest
from eve_py.models.messages import (
    AssistantMessage,
    Message,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    UserMessage,
)
from eve_py.parking import resolutions
from eve_py.parking.answers import (
    approval_decision,
    client_result,
    denied_output,
    elicitation_outcome,
    schema_validator,
)
from eve_py.parking.batch import PendingStep, QuestionRef
from eve_py.parking.build import approval_request, client_request, elicitation_request
from eve_py.parking.requests import InputRequest, ToolCallAction
from eve_py.resolvers.solver import Question, RecordedOutcome
from eve_py.sessions.record import Lease, SessionRecord, TurnInput, TurnState
from eve_py.sessions.store import SessionStore
from eve_py.tools.resolved import ResolvedTool

__all__ = ("Committed", "EventListener", "TurnDriver", "TurnResult", "TurnStatus")

_log = logging.getLogger("eve_py")

TurnStatus = Literal["waiting", "completed", "failed"]


@dataclass(frozen=True, slots=True)
class Committed:
    """One committed write's events, and where they landed in the session's log."""

    session_id: str
    first_index: int
    """The log index of `events[0]`."""
    events: Sequence[Event]


@dataclass(frozen=True, slots=True)
class Write:
    """What one commit writes: the record, the events, the messages appended to the conversation."""

    record: SessionRecord
    events: list[Event]
    messages: Sequence[Message] = ()


EventListener = Callable[[Committed], "Awaitable[None] | None"]
"""Called with each committed write's events right after the commit."""


@dataclass(frozen=True, kw_only=True)
class TurnResult:
    """Where a turn stands after `send`, `respond` or `resume` returns."""

    session_id: str
    turn_id: str | None
    status: TurnStatus
    """`waiting`: parked on `input_requests`; `completed`: the model answered; `failed`: see `error`."""
    input_requests: list[InputRequest]
    """Open requests (empty unless waiting)."""
    message: str | None
    """The assistant's last text in this call, if any."""
    events: list[AnyEvent]
    """The events committed during this call (or read for it, by a client), oldest first."""
    error: str | None = None
    """Why the turn failed."""
    result: JsonValue | None = None
    """The turn's structured result, when it was sent an `output_schema` and completed."""


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
    ) -> None:
        self._agent = agent
        self._conversations = conversations if conversations is not None else ConversationCache(size=1)
        self._conversation: Conversation | None = None
        self._carry: Write | None = None
        """A settled batch not written yet: its events and messages go first in the next write."""
        self._lease_s = lease_s
        self.owner = new_id("wkr")
        self._model = model
        self._store = LeaseKeeper(store, lease_s)
        self._max_steps = max_steps
        self._listener = listener
        self.events: list[Event] = []
        self._message: str | None = None
        self._result: JsonValue | None = None

    async def commit(
        self,
        record: SessionRecord,
        events: list[Event],
        *,
        messages: Sequence[Message] = (),
        release: bool = False,
    ) -> SessionRecord:
        """Write `record`, `events` and `messages` (appended to the conversation) atomically, then tell the listener.

        A `running` record carries this driver's lease, renewed by the write (unless `release`,
        which lets another worker take the turn over at once); any other record is freed.
        """
        running = record.status == "running" and not release
        lease = Lease(owner=self.owner, expires_at=time.time() + self._lease_s) if running else None
        updated = record.model_copy(update={"updated_at": now_iso(), "lease": lease})
        carried = self._carry
        self._carry = None
        if carried is not None:
            events = [*carried.events, *events]
        stored = await self._store.commit(updated, events, [*carried.messages, *messages] if carried else messages)
        conversation = self._conversation
        if conversation is not None and conversation.end == stored.message_count - len(messages):
            conversation.append(messages)
            self._conversations.remember(record.id, conversation)
        self.events += events
        await notify(self._listener, Committed(record.id, record.event_count, events))
        return stored

    async def conversation(self, record: SessionRecord) -> Conversation:
        """The session's conversation as `record` has it (loaded once per driver, then kept up to date)."""
        carried = self._carry.messages if self._carry is not None else ()
        kept = self._conversation
        if kept is None or kept.end != record.message_count + len(carried) or kept.start != record.history_start:
            kept = self._conversation = await self._conversations.load(self._store, record)
            kept.append(carried)  # settled, not stored yet: the next write stores them
        return kept

    def start_turn(self, record: SessionRecord, sent: TurnInput) -> Write:
        """`record` with a new turn started by what a person `sent`, its first events and its message."""
        turn = TurnState(
            turn_id=new_id("turn"),
            sequence=record.next_sequence,
            delivery_ids=[sent.delivery_id],
            client_context=sent.client_context,
            output_schema=sent.output_schema,
        )
        started = record.model_copy(update={"status": "running", "turn": turn, "queued": None})
        received = MessageReceivedData(
            sequence=turn.sequence,
            turn_id=turn.turn_id,
            message=sent.text,
            parts=[ReceivedPart(text=part) for part in sent.parts],
        )
        events = [stamp(turn, TurnStartedData(sequence=turn.sequence, turn_id=turn.turn_id)), stamp(turn, received)]
        return Write(started, events, [UserMessage(content=sent.text)])

    def result(self, record: SessionRecord, status: TurnStatus, error: str | None = None) -> TurnResult:
        """The `TurnResult` for the session as it now stands."""
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

    async def drive(self, record: SessionRecord) -> TurnResult:
        """Run steps until the session parks, the model answers without tool calls, or it fails.

        Raises:
            PairingError: The conversation would break the pairing rule (nothing is sent).
            SessionConflictError: Another writer changed the session meanwhile.
        """
        try:
            async with self._store.beating():  # heartbeat: a slow step keeps its lease
                return await self._drive(record)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._cancelled(record.id)
            raise

    async def claim(self, record: SessionRecord) -> SessionRecord:
        """Take over a running turn: write this driver's lease before doing any work.

        Of several workers taking over at once, one wins; the others get `SessionConflictError`
        here, before they run anything.
        """
        return await self.commit(record, [])

    async def _cancelled(self, session_id: str) -> None:
        """After a cancellation: a turn of this driver with no parked step goes back to idle.

        Mid-settle (answers accepted, results being computed) the turn stays `running`, but the
        lease is released so `resume()` or a new message can finish it at once.
        """
        record = await self._store.load(session_id)
        lease = record.lease
        if record.status != "running" or lease is None or lease.owner != self.owner:
            return  # parked, or settled elsewhere
        if record.pending is not None or record.queued is not None:
            try:
                await self.commit(record, [], release=True)
            except SessionConflictError:
                pass
            return
        turn = record.turn
        assert turn is not None
        events = [
            stamp(turn, TurnCancelledData(sequence=turn.sequence, turn_id=turn.turn_id)),
            stamp(turn, SessionWaitingData()),
        ]
        turn = turn.model_copy(update={"status": "failed", "error": "The turn was cancelled."})
        try:
            await self.commit(record.model_copy(update={"status": "idle", "turn": turn}), events)
        except SessionConflictError:
            pass  # someone else wrote meanwhile; their state stands

    async def _drive(self, record: SessionRecord) -> TurnResult:
        while True:
            if record.pending is not None:
                queued = record.queued
                if queued is not None:  # a message dismissed this batch: settle it, start that turn
                    record = await self.settle(
                        record, dismiss=True, then=functools.partial(self._next_turn, sent=queued)
                    )
                    continue
                record = await self.settle(record)
                if record.status == "waiting":
                    return self.result(record, "waiting")
                continue
            if record.queued is not None:
                started = self.start_turn(record, record.queued)
                record = await self.commit(started.record, started.events, messages=started.messages)
                continue
            assert record.turn is not None
            if record.turn.steps_since_input >= self._max_steps:
                return await self._fail(
                    record,
                    [],
                    None,
                    "STEP_LIMIT",
                    f"The turn reached its limit of {self._max_steps} model steps without a person's input.",
                )
            record, outcome = await self._step(record)
            if outcome is not None:
                return outcome

    def _next_turn(self, record: SessionRecord, sent: TurnInput) -> Write:
        """End the settled turn (`turn.completed`, `session.waiting`) and start the one `sent` asks for."""
        ended: list[Event] = []
        turn = record.turn
        if turn is not None:
            ended.append(stamp(turn, TurnCompletedData(sequence=turn.sequence, turn_id=turn.turn_id)))
            ended.append(stamp(turn, SessionWaitingData()))
            record = record.model_copy(update={"turn": turn.model_copy(update={"status": "completed"})})
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
        messages: Sequence[Message] = (),
    ) -> TurnResult:
        """Fail the turn: `step.failed` (when a step failed), `turn.failed`, `session.waiting`."""
        turn = record.turn
        assert turn is not None
        if step_index is not None:
            failed = StepFailedData(
                sequence=turn.sequence, turn_id=turn.turn_id, step_index=step_index, code=code, message=message
            )
            events.append(stamp(turn, failed))
        events.append(
            stamp(turn, TurnFailedData(sequence=turn.sequence, turn_id=turn.turn_id, code=code, message=message))
        )
        events.append(stamp(turn, SessionWaitingData()))
        turn = turn.model_copy(update={"status": "failed", "error": message})
        ended = record.model_copy(update={"status": "idle", "turn": turn})
        record = await self.commit(ended, events, messages=messages)
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

    async def _step(self, record: SessionRecord) -> tuple[SessionRecord, TurnResult | None]:
        turn = record.turn
        assert turn is not None
        step_index = turn.steps
        coords = {"sequence": turn.sequence, "turn_id": turn.turn_id, "step_index": step_index}
        # Kept in front of the step's other events; with a delta writer, stored with the first delta
        # so that a stream shows the step (and its text as it arrives) while the model works.
        events: list[Event] = [stamp(turn, StepStartedData(**coords, model_id=self._model.name))]
        conversation = await self.conversation(record)
        try:
            conversation.check()
        except PairingError as exc:
            await self._fail(record, events, step_index, "PAIRING", str(exc))
            raise
        writer = DeltaWriter(self, turn, step_index, lead=events) if self._listener is not None else None
        request = ModelRequest(
            instructions=self._instructions(turn),
            messages=list(conversation.messages),
            tools=[tool.spec for tool in self._agent.tools.values()],
            on_delta=writer.on_delta if writer is not None else None,
        )
        try:
            if writer is None:
                response = await self._model.request(request)
            else:
                async with writer.writing(record):
                    response = await self._model.request(request)
        except Exception as exc:  # a provider failure fails the turn, not the session
            record = writer.record if writer is not None and writer.record is not None else record
            return record, await self._fail(record, events, step_index, "MODEL_ERROR", f"{type(exc).__name__}: {exc}")
        if writer is not None and writer.record is not None:
            record = writer.record

        # Some compatible servers reuse ids (`call_0` every step); a repeated id would make every
        # later request unpairable, so it gets a suffix, unique in the conversation.
        used = conversation.used_call_ids()
        ids = []
        for call in response.tool_calls:
            call_id, suffix = call.id, 1
            while call_id in used:
                suffix += 1
                call_id = f"{call.id}#{suffix}"
            used.add(call_id)
            ids.append(call_id)
        text = response.text if response.text and response.text.strip() else None
        content: list[TextPart | ToolCallPart] = []
        try:
            if text:
                content.append(TextPart(text=text))
            content += [
                ToolCallPart(tool_call_id=call_id, tool_name=c.name, input=c.input)
                for call_id, c in zip(ids, response.tool_calls, strict=True)
            ]
            unparsed = {
                call_id: c.input_error
                for call_id, c in zip(ids, response.tool_calls, strict=True)
                if c.input_error is not None
            }
        except pydantic.ValidationError as exc:
            message = f"The model returned a response that is not valid JSON data: {describe_validation_error(exc)}"
            return record, await self._fail(record, events, step_index, "MODEL_ERROR", message)
        assistant = AssistantMessage(content=content)
        turn = turn.model_copy(update={"steps": step_index + 1, "steps_since_input": turn.steps_since_input + 1})
        finish = "tool-calls" if assistant.tool_calls else "stop"
        if text:
            self._message = text
            events.append(stamp(turn, MessageCompletedData(**coords, finish_reason=finish, message=text)))
        if not assistant.tool_calls:
            return await self._complete(record, turn, assistant if content else None, events, step_index)
        pending = await self._run_calls(record, turn, step_index, assistant, events, unparsed)
        record = record.model_copy(update={"turn": turn})
        if pending.requests:
            record = await self._park(record, pending, events)
            return record, self.result(record, "waiting")
        record = await self.commit(record, events, messages=step_messages(pending))
        return record, None

    async def _complete(
        self,
        record: SessionRecord,
        turn: TurnState,
        assistant: AssistantMessage | None,
        events: list[Event],
        step_index: int,
    ) -> tuple[SessionRecord, TurnResult]:
        """The model answered without tool calls: end the turn (or fail it: an answer off its schema)."""
        coords = {"sequence": turn.sequence, "turn_id": turn.turn_id, "step_index": step_index}
        events.append(stamp(turn, StepCompletedData(**coords, finish_reason="stop")))
        # Providers reject empty (or blank) assistant text, so a blank response adds nothing.
        messages = [assistant] if assistant is not None else []
        if turn.output_schema is not None:
            result, problem = structured_result(assistant.text if assistant is not None else "", turn.output_schema)
            if problem is not None:
                record = record.model_copy(update={"turn": turn})
                return record, await self._fail(record, events, None, "OUTPUT_INVALID", problem, messages=messages)
            self._result = result
            events.append(stamp(turn, ResultCompletedData(**coords, result=result)))
        events.append(stamp(turn, TurnCompletedData(sequence=turn.sequence, turn_id=turn.turn_id)))
        events.append(stamp(turn, SessionWaitingData()))
        record = await self.commit(
            record.model_copy(update={"status": "idle", "turn": turn.model_copy(update={"status": "completed"})}),
            events,
            messages=messages,
        )
        return record, self.result(record, "completed")

    async def _park(self, record: SessionRecord, pending: PendingStep, events: list[Event]) -> SessionRecord:
        """Store `pending` as the session's open batch: `input.requested`, then `turn.waiting`."""
        turn = record.turn
        assert turn is not None
        requested = InputRequestedData.of(
            pending.requests, sequence=turn.sequence, turn_id=turn.turn_id, step_index=pending.step_index
        )
        events.append(stamp(turn, requested))
        events.append(stamp(turn, TurnWaitingData(sequence=turn.sequence, turn_id=turn.turn_id)))
        return await self.commit(
            record.model_copy(
                update={"pending": pending, "status": "waiting", "turn": turn.model_copy(update={"status": "waiting"})}
            ),
            events,
        )

    async def cancel_parked(self, record: SessionRecord) -> SessionRecord:
        """End a parked turn: each parked call answered as cancelled, open requests withdrawn.

        Events: `input.resolved` (outcome `cancelled`), `turn.cancelled`, `session.waiting`.
        """
        pending, turn = record.pending, record.turn
        assert pending is not None and turn is not None
        results = dict(pending.results)
        for call in pending.assistant.tool_calls:
            results.setdefault(call.tool_call_id, error_result(call, CANCELLED_CALL_RESULT))
        settled = pending.model_copy(update={"results": results})
        withdrawn = InputResolvedData(
            sequence=turn.sequence,
            turn_id=turn.turn_id,
            step_index=pending.step_index,
            resolutions=resolutions.unanswered(pending.open_requests(), "cancelled"),
        )
        events = [
            stamp(turn, withdrawn),
            stamp(turn, TurnCancelledData(sequence=turn.sequence, turn_id=turn.turn_id)),
            stamp(turn, SessionWaitingData()),
        ]
        update = {
            "pending": None,
            "queued": None,
            "status": "idle",
            "turn": turn.model_copy(update={"status": "failed", "error": "The turn was cancelled."}),
        }
        return await self.commit(record.model_copy(update=update), events, messages=step_messages(settled))

    async def _run_calls(
        self,
        record: SessionRecord,
        turn: TurnState,
        step_index: int,
        assistant: AssistantMessage,
        events: list[Event],
        unparsed: Mapping[str, str],
    ) -> PendingStep:
        """Classify a step's calls; run the executable ones; park the rest.

        `unparsed` maps call ids whose argument text was not a JSON object to the reason.
        """
        results: dict[str, ToolResultPart] = {}
        parked: dict[str, list[InputRequest]] = {}
        questions: dict[str, QuestionRef] = {}
        runnable: list[tuple[ToolCallPart, ResolvedTool]] = []
        actions: list[ToolCallAction] = []
        for call in assistant.tool_calls:
            tool = self._agent.tools.get(call.tool_name)
            if call.tool_call_id in unparsed:
                results[call.tool_call_id] = error_result(
                    call,
                    f"The arguments for tool {call.tool_name!r} are not a valid JSON object "
                    f"({unparsed[call.tool_call_id]}). Call it again with valid JSON arguments.",
                )
                continue
            if tool is None:
                offered = ", ".join(sorted(self._agent.tools))
                results[call.tool_call_id] = error_result(
                    call, f"Unknown tool {call.tool_name!r}. Available tools: {offered}."
                )
                continue
            problem = input_problem(tool, call)
            if problem is not None:
                results[call.tool_call_id] = error_result(call, problem)
                continue
            if tool.client_resolved:
                parked[call.tool_call_id] = [client_request(call, tool)]
                continue
            actions.append(ToolCallAction(call_id=call.tool_call_id, tool_name=call.tool_name, input=call.input))
            approval_ctx = ApprovalContext(
                session_id=record.id,
                call_id=call.tool_call_id,
                tool_name=call.tool_name,
                tool_input=call.input,
                approved_tools=frozenset(record.approved_tools),
            )
            try:
                needs_approval = await tool.approval_required(approval_ctx)
            except Exception as exc:
                results[call.tool_call_id] = error_result(
                    call, f"The approval policy of {call.tool_name!r} failed: {exc}"
                )
                continue
            if needs_approval:
                parked[call.tool_call_id] = [approval_request(call)]
            else:
                runnable.append((call, tool))
        coords = {"sequence": turn.sequence, "turn_id": turn.turn_id, "step_index": step_index}
        if actions:
            events.append(stamp(turn, ActionsRequestedData(**coords, actions=actions)))
        # eve's order: the step's calls are announced, the step completes, then the calls report.
        events.append(stamp(turn, StepCompletedData(**coords, finish_reason="tool-calls")))
        events += [
            action_result(turn, step_index, call, rejected.output, "failed", "INVALID_TOOL_CALL")
            for call in assistant.tool_calls
            if (rejected := results.get(call.tool_call_id)) is not None
        ]

        call_events: dict[str, list[Event]] = {call.tool_call_id: [] for call, _ in runnable}

        async def run(call: ToolCallPart, tool: ResolvedTool) -> None:
            own = call_events[call.tool_call_id]
            outcome = await self._execute(record.id, turn, step_index, call, tool, own, approved=False, recorded={})
            if isinstance(outcome, ToolResultPart):
                results[call.tool_call_id] = outcome
            else:
                parked[call.tool_call_id] = _elicitation_requests(call, outcome, questions)

        async with anyio.create_task_group() as group:
            for call, tool in runnable:
                group.start_soon(run, call, tool)
        for own in call_events.values():  # in call order, whatever order the calls finished in
            events += own
        return PendingStep(
            turn_id=turn.turn_id,
            step_index=step_index,
            assistant=assistant,
            results=results,
            requests=[r for call in assistant.tool_calls for r in parked.get(call.tool_call_id, [])],
            questions=questions,
        )

    async def _execute(
        self,
        session_id: str,
        turn: TurnState,
        step_index: int,
        call: ToolCallPart,
        tool: ResolvedTool,
        events: list[Event],
        *,
        approved: bool,
        recorded: Mapping[str, RecordedOutcome],
    ) -> ToolResultPart | list[Question]:
        """Run one call's resolvers and executor: its one result, or the questions it waits on.

        Whatever the resolvers or the executor raise becomes an error result the model sees.
        """
        assert tool.plan is not None, "client-resolved tools have no executor"
        ctx = ToolContext(
            session_id=session_id,
            turn_id=turn.turn_id,
            call_id=call.tool_call_id,
            tool_name=tool.name,
            approved=approved,
        )
        output: JsonValue
        is_error = False
        error_name: str | None = None
        try:
            outcome = await tool.plan.run(call.input, ctx, recorded)
            if isinstance(outcome, NeedsInput):
                return outcome.questions
            output = to_json_value(outcome.value)
            if tool.output_schema is not None:
                schema_validator(tool.output_schema).validate(output)
            model_output = output if tool.to_model_output is None else to_json_value(tool.to_model_output(output))
        except pydantic.ValidationError as exc:
            output = model_output = f"Invalid input for tool {tool.name!r}: {describe_validation_error(exc)}"
            is_error = True
        except jsonschema.ValidationError as exc:
            output = model_output = f"Tool {tool.name!r} returned output that fails its output schema: {exc.message}"
            is_error = True
        except ToolError as exc:
            output = model_output = f"Error executing tool {tool.name}: {exc}"
            is_error, error_name = True, type(exc).__name__
        except Exception as exc:
            output = model_output = f"Tool {tool.name!r} failed: {type(exc).__name__}: {exc}"
            is_error, error_name = True, type(exc).__name__
        if is_error:
            events.append(action_result(turn, step_index, call, output, "failed", "TOOL_ERROR", error_name))
        else:
            events.append(action_result(turn, step_index, call, output, "completed"))
        return ToolResultPart(
            tool_call_id=call.tool_call_id, tool_name=tool.name, output=model_output, is_error=is_error
        )

    async def settle(
        self,
        record: SessionRecord,
        *,
        dismiss: bool = False,
        then: Callable[[SessionRecord], Write] | None = None,
    ) -> SessionRecord:
        """Give every parked call of a settled batch its one result and append the step.

        Answered approvals run their executors; answered resolver questions re-run their calls.
        A call whose resolvers ask a further question parks again (a new batch of the same step,
        the returned record is `waiting`). With `dismiss`, further questions are cancelled too,
        so the step always completes, and `then` may add to the same commit (a new turn).

        Args:
            record: The session, its pending batch marked `resolving` (as stored).
            dismiss: Settle every open request as unanswered, asking nothing further.
            then: Called with the settled record; its record, events and messages join the commit.
        """
        pending = record.pending
        turn = record.turn
        assert pending is not None and pending.resolving, "only a settled batch is resolved"
        assert turn is not None and turn.turn_id == pending.turn_id
        step_index = pending.step_index
        events: list[Event] = []
        results = dict(pending.results)
        approved_calls = list(pending.approved_calls)
        approved_tools = list(record.approved_tools)
        recorded = {call_id: dict(entries) for call_id, entries in pending.elicitations.items()}
        calls = {call.tool_call_id: call for call in pending.assistant.tool_calls}
        rerun: set[str] = set()
        for request in pending.requests:
            call = calls[request.action.call_id]
            answer = pending.answers.get(request.request_id)
            if call.tool_call_id in pending.results and request.kind == "tool-approval":
                continue  # decided and stored before a crash: its event is in the log already
            if request.kind in ("question", "client-tool"):
                results[call.tool_call_id] = ToolResultPart(
                    tool_call_id=call.tool_call_id, tool_name=call.tool_name, output=client_result(request, answer)
                )
            elif request.kind == "elicitation":
                ref = pending.questions[request.request_id]
                recorded.setdefault(call.tool_call_id, {})[ref.key] = elicitation_outcome(answer, ref.digest)
                rerun.add(call.tool_call_id)
            else:
                approved, reason = approval_decision(answer)
                if approved and _executable(self._agent.tools.get(call.tool_name)):
                    if call.tool_call_id not in approved_calls:
                        approved_calls.append(call.tool_call_id)
                    if call.tool_name not in approved_tools:
                        approved_tools.append(call.tool_name)
                    rerun.add(call.tool_call_id)
                    continue
                if approved:
                    reason = f"the tool {call.tool_name!r} is no longer available"
                message = denied_output(reason)
                denial: JsonValue = {
                    "approval": {"requestId": request.request_id, "status": "denied" if answer else "ignored"},
                    "code": "TOOL_EXECUTION_DENIED",
                    "message": message,
                    "tool": {"result": "not_run"},
                }
                events.append(action_result(turn, step_index, call, denial, "rejected", "TOOL_EXECUTION_DENIED"))
                results[call.tool_call_id] = error_result(call, message)

        questions: dict[str, QuestionRef] = {}
        requests: list[InputRequest] = []
        for call in pending.assistant.tool_calls:
            if call.tool_call_id not in rerun or call.tool_call_id in pending.results:
                continue  # not parked here, or it ran and its result was stored before a crash
            tool = self._agent.tools.get(call.tool_name)
            if tool is None or tool.plan is None:
                gone = f"The tool {call.tool_name!r} is no longer available."
                results[call.tool_call_id] = error_result(call, gone)
                events.append(action_result(turn, step_index, call, gone, "failed", "TOOL_UNAVAILABLE"))
                continue
            for _ in range(_DISMISS_ROUNDS if dismiss else 1):
                outcome = await self._execute(
                    record.id,
                    turn,
                    step_index,
                    call,
                    tool,
                    events,
                    approved=call.tool_call_id in approved_calls,
                    recorded=recorded.get(call.tool_call_id, {}),
                )
                if isinstance(outcome, ToolResultPart):
                    results[call.tool_call_id] = outcome
                    recorded.pop(call.tool_call_id, None)
                    # Stored before anything else runs: after a crash, resume() finds the result
                    # and does not run this executor (a person approved it once) again.
                    checkpoint = pending.model_copy(
                        update={"results": results, "approved_calls": approved_calls, "elicitations": recorded}
                    )
                    record = await self.commit(
                        record.model_copy(update={"pending": checkpoint, "approved_tools": approved_tools}), events
                    )
                    pending, events = checkpoint, []
                    break
                if not dismiss:
                    requests += _elicitation_requests(call, outcome, questions)
                    break
                for question in outcome:
                    cancel = RecordedOutcome(action="cancel", q=question.digest)
                    recorded.setdefault(call.tool_call_id, {})[question.key] = cancel
            else:
                dismissed = "The call was dismissed while its resolvers kept asking."
                results[call.tool_call_id] = error_result(call, dismissed)
                events.append(action_result(turn, step_index, call, dismissed, "failed", "DISMISSED"))

        update: dict[str, object] = {"approved_tools": approved_tools}
        if requests:
            again = PendingStep(
                turn_id=turn.turn_id,
                step_index=step_index,
                assistant=pending.assistant,
                results=results,
                requests=requests,
                questions=questions,
                approved_calls=approved_calls,
                elicitations=recorded,
                answered=[*pending.answered, *(r.request_id for r in pending.requests)],
            )
            return await self._park(record.model_copy(update=update), again, events)
        settled = pending.model_copy(update={"results": results})
        messages: list[Message] = [*step_messages(settled)]
        update["pending"] = None
        if pending.answers and record.turn is not None:
            # A person answered: the model gets a fresh step budget to act on it.
            update["turn"] = record.turn.model_copy(update={"steps_since_input": 0})
        record = record.model_copy(update=update)
        if then is not None:
            more = then(record)
            record, events, messages = more.record, events + more.events, messages + list(more.messages)
        elif not rerun:
            # Nothing ran: the results come from answers already stored, so settling again after a
            # crash gives the same ones. They ride with the next step's write (one write fewer).
            self._carry = Write(record, events, messages)
            return record
        return await self.commit(record, events, messages=messages)


CANCELLED_CALL_RESULT = "The turn was cancelled before this call finished."
"""The result of a parked call whose turn was cancelled (eve's words)."""

_DISMISS_ROUNDS = 8
"""How many times a dismissed call's resolvers may ask again (each time cancelled) before it fails."""


def _executable(tool: ResolvedTool | None) -> bool:
    return tool is not None and tool.plan is not None


def _elicitation_requests(
    call: ToolCallPart, questions: list[Question], refs: dict[str, QuestionRef]
) -> list[InputRequest]:
    """One `elicitation` request per question; the id is stable (call id, resolver key, question digest)."""
    requests = []
    for question in questions:
        request = elicitation_request(call, question)
        refs[request.request_id] = QuestionRef(call_id=call.tool_call_id, key=question.key, digest=question.digest)
        requests.append(request)
    return requests


async def notify(listener: EventListener | None, committed: Committed) -> None:
    """Hand a committed write to a listener; its failure is logged and never breaks the turn.

    The events are already stored, and a turn stopped half-way would leave the session running.
    """
    if listener is None or not committed.events:
        return
    try:
        outcome = listener(committed)
        if inspect.isawaitable(outcome):
            await outcome
    except Exception:
        _log.exception("event listener failed; the session is unaffected")
