"""AG-UI 1.0 from eve-py: a run's stored events as AG-UI events, open requests as interrupts, resumes as answers.

Pure translation, no I/O; `eve_py.server._ag_ui` serves it. The AG-UI shapes are AG-UI's own
Python types (package `ag-ui-protocol`).

| eve-py event | AG-UI events |
|---|---|
| `step.started` / `step.completed` / `step.failed` | `STEP_STARTED` / `STEP_FINISHED` (`stepName` `step N`) |
| `message.appended` | `TEXT_MESSAGE_START` (first delta of the step), `TEXT_MESSAGE_CONTENT` |
| `message.completed` | `TEXT_MESSAGE_END` (with the whole text first when no delta streamed) |
| `action.input.appended` | `TOOL_CALL_START` (first delta of the call), `TOOL_CALL_ARGS` |
| `actions.requested`, `input.requested` | `TOOL_CALL_START` / `_ARGS` / `_END` for each call not yet streamed |
| `action.progress`, `action.log` | `ACTIVITY_SNAPSHOT` / `ACTIVITY_DELTA` of the call's activity (`_ag_ui_activity`) |
| `action.result` | `TOOL_CALL_RESULT` (the output as JSON text) |
| `input.resolved` | `TOOL_CALL_RESULT` for each client-resolved call it gives a result (`_ag_ui_results`) |
| `turn.completed` (`result.completed`) | `RUN_FINISHED` (its `result`) |
| `turn.waiting` | `RUN_FINISHED` with the `interrupt` outcome: one interrupt per open request |
| `turn.cancelled` | `RUN_FINISHED` with the `cancelled` outcome |
| `turn.failed`, `session.failed` | `RUN_ERROR` with eve-py's code |

A text message's id is `msg_<turn>_<step>`, the parent of its step's tool calls; a result's
is `result_<callId>`. An interrupt's id is the eve-py request id (also in its `metadata`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ag_ui.core import (
    BaseEvent,
    Interrupt,
    ResumeEntry,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from eve_py._json import JsonObject, JsonValue
from eve_py.errors import InvalidAnswerError
from eve_py.protocol import (
    ActionInputAppended,
    ActionLog,
    ActionProgress,
    ActionResult,
    ActionsRequested,
    Event,
    InputRequested,
    InputResolved,
    MessageAppended,
    MessageCompleted,
    ResultCompleted,
    SessionFailed,
    StepCompleted,
    StepFailed,
    StepStarted,
    TurnCancelled,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
    TurnWaiting,
)
from eve_py.protocol.requests import InputRequest, InputResponse, ToolCallAction
from eve_py.server._ag_ui_activity import ToolActivity
from eve_py.server._ag_ui_results import answer_results
from eve_py.server._answers import approval_answer, value_answer

__all__ = ("RunProjection", "approval_schema", "interrupt_of", "response_of")


def approval_schema(request: InputRequest) -> JsonObject:
    """An approval's `responseSchema`: `{approved, reason?, editedArgs?}` (`editedArgs` only when editable)."""
    properties: dict[str, JsonValue] = {
        "approved": {"type": "boolean", "description": "Run the call (true) or deny it (false)."},
        "reason": {"type": "string", "description": "Why it was denied (shown to the model)."},
    }
    if request.edit_schema is not None:
        edited = dict(request.edit_schema) | {"description": "The input the call runs with instead (approve only)."}
        properties["editedArgs"] = edited
    return {"type": "object", "properties": properties, "required": ["approved"], "additionalProperties": False}


def _picker_schema(request: InputRequest) -> JsonObject:
    """A question's answer schema: its typed schema, else its options' ids or free text."""
    if request.response_schema is not None:
        return dict(request.response_schema)
    ids: list[JsonValue] = list(request.option_ids())
    if ids and not request.allow_freeform:
        return {"type": "string", "enum": ids, "description": "The id of the chosen option."}
    return {"type": "string", "description": "The answer, as text (or an option's id)."}


def interrupt_of(request: InputRequest) -> Interrupt:
    """One open eve-py request as an AG-UI interrupt."""
    approval = request.kind == "tool-approval"
    return Interrupt(
        id=request.request_id,
        reason="tool_call" if approval else "input_required",
        message=request.prompt,
        tool_call_id=request.action.call_id,
        response_schema=approval_schema(request) if approval else _picker_schema(request),
        expires_at=request.expires_at,
        metadata={"eveRequestId": request.request_id, "kind": request.kind, "toolName": request.action.tool_name},
    )


def response_of(entry: ResumeEntry, request: InputRequest | None) -> InputResponse:
    """A resume entry as the eve-py answer to its request (checked later by `Session.respond`).

    An entry for a request that is not open keeps its id, so `Session.respond` names the error.

    Raises:
        InvalidAnswerError: The payload does not fit the request (an approval's is not
            `{"approved": bool, "reason"?: str, "editedArgs"?: object}`, or a resolved entry has none).
    """
    request_id = entry.interrupt_id
    if entry.status == "cancelled":
        return InputResponse(request_id=request_id, action="cancel")
    payload: Any = entry.payload
    if request is None:
        return InputResponse(request_id=request_id, value=payload)
    if payload is None:
        raise InvalidAnswerError(
            f"Resume entry {request_id!r} is resolved but carries no payload.", request_id=request_id
        )
    if request.kind != "tool-approval":
        return value_answer(request_id, request, payload)
    if not isinstance(payload, dict) or not isinstance(payload.get("approved"), bool):
        raise InvalidAnswerError(
            f'Approval {request_id!r} takes {{"approved": true | false}} as its payload.', request_id=request_id
        )
    if set(payload) - {"approved", "reason", "editedArgs"}:
        raise InvalidAnswerError(
            f"Approval {request_id!r} takes only approved, reason and editedArgs.", request_id=request_id
        )
    reason, edited = payload.get("reason"), payload.get("editedArgs")
    if reason is not None and not isinstance(reason, str):
        raise InvalidAnswerError(f"Approval {request_id!r}: reason is text.", request_id=request_id)
    if edited is not None and (not isinstance(edited, dict) or not payload["approved"]):
        raise InvalidAnswerError(
            f"Approval {request_id!r}: editedArgs is an object, sent only with approved: true.", request_id=request_id
        )
    return approval_answer(request_id, payload["approved"], reason, edited)


def _json_text(value: JsonValue) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class RunProjection:
    """Turns one run's eve-py events into AG-UI events, remembering what it opened.

    Args:
        thread_id: The run's thread (the eve-py session id).
        run_id: The run's id, from its input.
    """

    def __init__(self, thread_id: str, run_id: str) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.ended = False
        """Whether the run's last event (`RUN_FINISHED` or `RUN_ERROR`) was made."""
        self._steps: dict[tuple[str, int], str] = {}
        self._texts: set[str] = set()
        self._calls: dict[str, bool] = {}
        """Tool calls streamed in this run: id -> ended."""
        self._result: JsonValue = None
        self._activity = ToolActivity()
        self.requests: dict[str, InputRequest] = {}
        """The requests this run may see answered, by id (the thread's open ones and the run's own)."""
        self.answered_here: set[str] = set()
        """Calls the client answered with a tool message in this run: it has their results."""
        self.until_turn = False
        """Pass over turn ends until a `turn.started` (a message to a parked thread ends its turn first)."""

    def events(self, event: Event, open_requests: Sequence[InputRequest] = ()) -> list[BaseEvent]:
        """The AG-UI events for one eve-py event (`open_requests`: the session's, for `turn.waiting`)."""
        if self.ended:
            return []
        if isinstance(event, StepStarted | StepCompleted | StepFailed | MessageAppended | MessageCompleted):
            return self._step(event)
        if isinstance(event, ActionInputAppended):
            delta = event.data
            start = self._start_call(delta.call_id, delta.tool_name, _message_id(delta.turn_id, delta.step_index))
            return [*start, ToolCallArgsEvent(tool_call_id=delta.call_id, delta=delta.input_text_delta)]
        if isinstance(event, TurnStarted):
            self.until_turn = False
            return []
        if isinstance(event, InputResolved):
            return answer_results(event, self.requests, self.answered_here)
        if isinstance(event, InputRequested):
            self.requests.update((r.request_id, r) for r in event.data.input_requests())
        if isinstance(event, ActionsRequested | InputRequested):
            parent = _message_id(event.data.turn_id, event.data.step_index)
            calls = (
                event.data.actions if isinstance(event, ActionsRequested) else [r.action for r in event.data.requests]
            )
            return [e for call in calls for e in self._whole_call(call, parent)]
        if isinstance(event, ActionProgress | ActionLog):
            return self._activity.events(event)
        if isinstance(event, ActionResult):
            result = event.data.result
            content = _json_text(result.output) if not isinstance(result.output, str) else result.output
            message_id = f"result_{result.call_id}"
            return [ToolCallResultEvent(message_id=message_id, tool_call_id=result.call_id, content=content)]
        if isinstance(event, ResultCompleted):
            self._result = event.data.result
            return []
        return self._ending(event, open_requests)

    def _ending(self, event: Event, open_requests: Sequence[InputRequest]) -> list[BaseEvent]:
        if self.until_turn and isinstance(event, TurnCompleted | TurnWaiting | TurnCancelled | TurnFailed):
            return self._close()
        if isinstance(event, TurnCompleted):
            return self.finish(result=self._result)
        if isinstance(event, TurnWaiting) and open_requests:
            return self.interrupt(open_requests)
        if isinstance(event, TurnCancelled):
            return self.finish(cancelled=True)
        if isinstance(event, TurnFailed | SessionFailed):
            return self.error(event.data.message, event.data.code)
        return []

    def _step(
        self, event: StepStarted | StepCompleted | StepFailed | MessageAppended | MessageCompleted
    ) -> list[BaseEvent]:
        data = event.data
        key, message_id = (data.turn_id, data.step_index), _message_id(data.turn_id, data.step_index)
        if isinstance(event, StepStarted):
            self._steps[key] = f"step {data.step_index}"
            return [StepStartedEvent(step_name=self._steps[key])]
        if isinstance(event, MessageAppended):
            if not event.data.message_delta:
                return []
            start = self._start_text(message_id)
            return [*start, TextMessageContentEvent(message_id=message_id, delta=event.data.message_delta)]
        if isinstance(event, MessageCompleted):
            if message_id in self._texts:
                self._texts.discard(message_id)
                return [TextMessageEndEvent(message_id=message_id)]
            if not event.data.message:
                return []
            content = TextMessageContentEvent(message_id=message_id, delta=event.data.message)
            return [*self._start_text(message_id), content, self._end_text(message_id)]
        name = self._steps.pop(key, None)
        closing: list[BaseEvent] = [self._end_text(message_id)] if message_id in self._texts else []
        return closing + ([StepFinishedEvent(step_name=name)] if name is not None else [])

    def _start_text(self, message_id: str) -> list[BaseEvent]:
        if message_id in self._texts:
            return []
        self._texts.add(message_id)
        return [TextMessageStartEvent(message_id=message_id, role="assistant")]

    def _end_text(self, message_id: str) -> BaseEvent:
        self._texts.discard(message_id)
        return TextMessageEndEvent(message_id=message_id)

    def _start_call(self, call_id: str, tool_name: str, parent: str) -> list[BaseEvent]:
        if call_id in self._calls:
            return []
        self._calls[call_id] = False
        return [ToolCallStartEvent(tool_call_id=call_id, tool_call_name=tool_name, parent_message_id=parent)]

    def _whole_call(self, call: ToolCallAction, parent: str) -> list[BaseEvent]:
        """A call's start and arguments (unless streamed already) and its end (unless ended)."""
        if self._calls.get(call.call_id):
            return []
        made: list[BaseEvent] = []
        if call.call_id not in self._calls:
            made += self._start_call(call.call_id, call.tool_name, parent)
            made.append(ToolCallArgsEvent(tool_call_id=call.call_id, delta=_json_text(call.input)))
        self._calls[call.call_id] = True
        return [*made, ToolCallEndEvent(tool_call_id=call.call_id)]

    def _close(self) -> list[BaseEvent]:
        """Whatever is still open (an AG-UI run ends with every message, call and step closed)."""
        closing: list[BaseEvent] = [TextMessageEndEvent(message_id=m) for m in sorted(self._texts)]
        closing += [ToolCallEndEvent(tool_call_id=c) for c, ended in self._calls.items() if not ended]
        closing += [StepFinishedEvent(step_name=name) for name in self._steps.values()]
        self._texts.clear()
        self._steps.clear()
        self._calls = dict.fromkeys(self._calls, True)
        return closing

    def finish(self, *, result: JsonValue = None, cancelled: bool = False) -> list[BaseEvent]:
        """`RUN_FINISHED`: a success (with `result`), or the `cancelled` outcome."""
        outcome = RunFinishedCancelledOutcome() if cancelled else None
        done = RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id, result=result, outcome=outcome)
        return self._last([*self._close(), done])

    def interrupt(self, requests: Sequence[InputRequest]) -> list[BaseEvent]:
        """`RUN_FINISHED` with the `interrupt` outcome: one interrupt per open request."""
        outcome = RunFinishedInterruptOutcome(interrupts=[interrupt_of(r) for r in requests])
        return self._last(
            [*self._close(), RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id, outcome=outcome)]
        )

    def error(self, message: str, code: str | None) -> list[BaseEvent]:
        """`RUN_ERROR` with eve-py's error code."""
        return self._last([*self._close(), RunErrorEvent(message=message, code=code)])

    def _last(self, events: list[BaseEvent]) -> list[BaseEvent]:
        self.ended = True
        return events


def _message_id(turn_id: str, step_index: int) -> str:
    return f"msg_{turn_id}_{step_index}"
