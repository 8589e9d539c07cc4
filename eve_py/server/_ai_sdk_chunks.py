"""The Vercel AI SDK's UI message stream from eve-py: a run's stored events as `ai` 7 chunks.

Pure translation, no I/O; `eve_py.server._ai_sdk` serves it. The chunk shapes are those the
`ai` package's `uiMessageChunkSchema` accepts (its `DefaultChatTransport` validates each).

| eve-py event | UI message chunks |
|---|---|
| `step.started` | `finish-step` (of the step before, if open), `start-step` |
| `message.appended` | `text-start` (first delta of the step), `text-delta` |
| `message.completed` | `text-end` (with the whole text first when no delta streamed) |
| `action.input.appended` | `tool-input-start` (first delta of the call), `tool-input-delta` |
| `actions.requested`, `input.requested` | `tool-input-available` for each call not yet available |
| `input.requested` (an approval) | `tool-approval-request` (`approvalId`: the eve-py request id) |
| `action.progress` | `data-tool-progress` (`id`: the call's id, so each report replaces the last), live |
| `action.log` | `data-tool-log` (`id`: the event's id: one part per entry), live |
| `action.result` | `tool-output-available`, `tool-output-error`, or `tool-output-denied` (a denial) |
| `turn.completed` / `turn.waiting` / `turn.cancelled` | `finish-step`, `finish` (`stop` / `tool-calls` / `other`) |
| `turn.failed`, `session.failed` | `error` |

A client tool's call (and a typed `ask_question` picker, whose input carries its options)
ends the stream with its `tool-input-available` and no output: the client answers it with
`addToolOutput` and sends the messages again. The part of a call parked on a person carries
the request in `toolMetadata.eve` (`requestId`, `kind`, `prompt`, the answer's `responseSchema`
when it has one, `expiresAt` when it expires). A text part's id is `text_<turn>_<step>`.

A running tool's reports come as they happen, as data parts the message keeps (not transient:
the last progress and every log line stay in the message `useChat` shows, and a client that
resends the messages sends them back, which eve-py ignores): `data-tool-progress`'s data is
`{toolCallId, toolName, progress, total?, message?}`, `data-tool-log`'s
`{toolCallId, toolName, level, data, logger?}`.
"""

from __future__ import annotations

from typing import Any

from eve_py._json import JsonValue
from eve_py.protocol import (
    ActionInputAppended,
    ActionLog,
    ActionProgress,
    ActionResult,
    ActionsRequested,
    Event,
    InputRequested,
    MessageAppended,
    MessageCompleted,
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
from eve_py.protocol.requests import InputRequest, ToolCallAction

__all__ = ("Chunk", "ChunkProjection")

Chunk = dict[str, Any]
"""One UI message chunk (`{"type": ..., ...}`), sent as one SSE `data:` line."""

_DENIED = "TOOL_EXECUTION_DENIED"


def _metadata(request: InputRequest) -> dict[str, JsonValue]:
    """What a parked call's part carries besides its input (`toolMetadata.eve`): the request, its answer schema."""
    eve: dict[str, JsonValue] = {"requestId": request.request_id, "kind": request.kind, "prompt": request.prompt}
    if request.response_schema is not None:
        eve["responseSchema"] = dict(request.response_schema)
    if request.expires_at is not None:
        eve["expiresAt"] = request.expires_at
    return {"eve": eve}


def _report(event: ActionProgress | ActionLog) -> Chunk:
    """A tool's progress report or log entry as a data part."""
    data = event.model_dump(mode="json", by_alias=True, exclude_none=True)["data"]
    for coordinate in ("sequence", "turnId", "stepIndex"):
        data.pop(coordinate, None)
    if isinstance(event, ActionProgress):
        return {"type": "data-tool-progress", "id": event.data.tool_call_id, "data": data}
    return {"type": "data-tool-log", "id": event.meta.id, "data": data}


class ChunkProjection:
    """Turns one response's eve-py events into UI message chunks, remembering what it opened.

    Args:
        message_id: The assistant message the chunks build (`start`'s `messageId`).
        delivery_id: For a new user message, its id: the chunks start at the `turn.started` of its turn.
    """

    def __init__(self, message_id: str, *, delivery_id: str | None = None) -> None:
        self.message_id = message_id
        self._delivery_id = delivery_id
        """A new message's id: events before its `turn.started` (a dismissed batch's turn ending) are not its."""
        self.ended = False
        """Whether the response's last chunk (`finish` or `error`) was made."""
        self._step_open = False
        self._texts: set[str] = set()
        self._calls: dict[str, bool] = {}
        """Tool calls streamed in this response: id -> input available."""

    def start(self) -> list[Chunk]:
        """The response's first chunk."""
        return [{"type": "start", "messageId": self.message_id}]

    def events(self, event: Event) -> list[Chunk]:
        """The chunks for one eve-py event."""
        if self.ended:
            return []
        if self._delivery_id is not None:
            if isinstance(event, TurnStarted) and self._delivery_id in (event.meta.delivery_ids or ()):
                self._delivery_id = None
            return []
        if isinstance(event, StepStarted | StepCompleted | StepFailed | MessageAppended | MessageCompleted):
            return self._step(event)
        if isinstance(event, ActionInputAppended):
            delta = event.data
            start = self._start_call(delta.call_id, delta.tool_name)
            return [
                *start,
                {"type": "tool-input-delta", "toolCallId": delta.call_id, "inputTextDelta": delta.input_text_delta},
            ]
        if isinstance(event, ActionsRequested):
            return [chunk for call in event.data.actions for chunk in self._available(call)]
        if isinstance(event, InputRequested):
            made: list[Chunk] = []
            for request in event.data.input_requests():
                made += self._available(request.action, _metadata(request))
                if request.kind == "tool-approval":
                    call_id = request.action.call_id
                    made.append(
                        {"type": "tool-approval-request", "approvalId": request.request_id, "toolCallId": call_id}
                    )
            return made
        if isinstance(event, ActionProgress | ActionLog):
            return [_report(event)]
        if isinstance(event, ActionResult):
            return [self._result(event)]
        return self._ending(event)

    def _ending(self, event: Event) -> list[Chunk]:
        if isinstance(event, TurnCompleted):
            return self.finish("stop")
        if isinstance(event, TurnWaiting):
            return self.finish("tool-calls")
        if isinstance(event, TurnCancelled):
            return self.finish("other")
        if isinstance(event, TurnFailed | SessionFailed):
            return self.error(event.data.message)
        return []

    def _step(
        self, event: StepStarted | StepCompleted | StepFailed | MessageAppended | MessageCompleted
    ) -> list[Chunk]:
        data = event.data
        text_id = f"text_{data.turn_id}_{data.step_index}"
        if isinstance(event, StepStarted):
            made = self._close_step()
            self._step_open = True
            return [*made, {"type": "start-step"}]
        if isinstance(event, MessageAppended):
            if not event.data.message_delta:
                return []
            return [
                *self._start_text(text_id),
                {"type": "text-delta", "id": text_id, "delta": event.data.message_delta},
            ]
        if isinstance(event, MessageCompleted):
            if text_id in self._texts:
                self._texts.discard(text_id)
                return [{"type": "text-end", "id": text_id}]
            if not event.data.message:
                return []
            delta = {"type": "text-delta", "id": text_id, "delta": event.data.message}
            return [*self._start_text(text_id), delta, self._end_text(text_id)]
        # The step's tool results and parked calls follow its `step.completed`: `finish-step` waits for them.
        return [self._end_text(text_id)] if text_id in self._texts else []

    def _start_text(self, text_id: str) -> list[Chunk]:
        if text_id in self._texts:
            return []
        self._texts.add(text_id)
        return [{"type": "text-start", "id": text_id}]

    def _end_text(self, text_id: str) -> Chunk:
        self._texts.discard(text_id)
        return {"type": "text-end", "id": text_id}

    def _start_call(self, call_id: str, tool_name: str) -> list[Chunk]:
        if call_id in self._calls:
            return []
        self._calls[call_id] = False
        return [{"type": "tool-input-start", "toolCallId": call_id, "toolName": tool_name}]

    def _available(self, call: ToolCallAction, metadata: dict[str, JsonValue] | None = None) -> list[Chunk]:
        """A call's `tool-input-available` (after its `tool-input-start`), once per response."""
        if self._calls.get(call.call_id):
            return []
        made = self._start_call(call.call_id, call.tool_name)
        self._calls[call.call_id] = True
        available = {"type": "tool-input-available", "toolCallId": call.call_id, "toolName": call.tool_name}
        return [*made, available | {"input": call.input} | ({"toolMetadata": metadata} if metadata else {})]

    def _result(self, event: ActionResult) -> Chunk:
        result, error = event.data.result, event.data.error
        if error is not None and error.code == _DENIED:
            return {"type": "tool-output-denied", "toolCallId": result.call_id}
        if result.is_error or error is not None:
            text = result.output if isinstance(result.output, str) else (error.message if error else str(result.output))
            return {"type": "tool-output-error", "toolCallId": result.call_id, "errorText": text}
        return {"type": "tool-output-available", "toolCallId": result.call_id, "output": result.output}

    def _close_step(self) -> list[Chunk]:
        made: list[Chunk] = [{"type": "text-end", "id": t} for t in sorted(self._texts)]
        self._texts.clear()
        if self._step_open:
            made.append({"type": "finish-step"})
            self._step_open = False
        return made

    def finish(self, reason: str) -> list[Chunk]:
        """The response's end: the open step closed, then `finish` with the AI SDK's finish reason."""
        self.ended = True
        return [*self._close_step(), {"type": "finish", "finishReason": reason}]

    def error(self, message: str) -> list[Chunk]:
        """An `error` chunk ending the response (the client's chat reports it)."""
        self.ended = True
        return [*self._close_step(), {"type": "error", "errorText": message}]
