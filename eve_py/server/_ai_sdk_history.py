"""What a `useChat` request adds to the session it names: the new answers and the new user message, nothing else.

The AI SDK's `DefaultChatTransport` sends the whole chat every time (`{id, messages, trigger,
messageId}`). eve-py keeps the session itself, so `plan_chat` (pure, no I/O) reads the resent
messages against what the session stored and takes only what is new:

- a last message from the user whose id is not the current turn's (its id becomes the turn's
  delivery id, so a resent message never starts a second turn; one sent with `messageId`, an
  edit, is refused);
- a client tool's output (`addToolOutput`: `output-available`, or `output-error`, a decline)
  for a call parked on it, and an approval's decision (`addToolApprovalResponse`) for an
  approval parked on it (`approvalId` is the eve-py request id).

Everything else must agree with the store, or the request is refused and nothing is stored:
an earlier user message that differs from the stored one, a tool part the session never made,
a decision or output that contradicts an answer already recorded (409 `history_conflict`); an
answer for a call the session does not know (422 `unknown_request`). A client may send fewer
messages than were stored (only the last one, say): what it sends must match the end of the
stored conversation. A resent answer that was already recorded is not answered again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eve_py._camel import describe_validation_error
from eve_py._json import JsonValue
from eve_py.errors import ApiError, InvalidAnswerError, UnknownRequestError
from eve_py.parking._answers import DENIED_MESSAGE, IGNORED_RESULT
from eve_py.protocol import messages as eve
from eve_py.protocol.pending import PendingStep
from eve_py.protocol.requests import InputRequest, InputResponse
from eve_py.server._answers import approval_answer, value_answer

__all__ = ("ChatPlan", "ChatRequest", "StoredChat", "parse_chat", "plan_chat")

_ANSWERED = ("output-available", "output-error")


class _Loose(BaseModel):
    # The AI SDK adds fields over time (metadata, providerMetadata, ...): eve-py reads what it needs.
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class UiPart(_Loose):
    """One part of a UI message (`text`, `step-start`, `tool-<name>`, `dynamic-tool`, ...)."""

    type: str


class UiMessage(_Loose):
    """One UI message as `useChat` keeps it."""

    id: str
    role: Literal["system", "user", "assistant"]
    parts: list[UiPart] = Field(default_factory=list)


class ChatRequest(_Loose):
    """`DefaultChatTransport`'s body: the chat id, every message, and why it was sent."""

    id: str
    messages: list[UiMessage]
    trigger: Literal["submit-message", "regenerate-message"] = "submit-message"
    message_id: str | None = Field(default=None, alias="messageId")


class _Approval(_Loose):
    id: str
    approved: bool | None = None
    reason: str | None = None


class _ToolPart(_Loose):
    type: str
    tool_call_id: str = Field(alias="toolCallId")
    tool_name: str | None = Field(default=None, alias="toolName")
    state: str
    output: JsonValue = None
    error_text: str | None = Field(default=None, alias="errorText")
    approval: _Approval | None = None

    @property
    def name(self) -> str:
        return self.tool_name or "" if self.type == "dynamic-tool" else self.type.removeprefix("tool-")


@dataclass(frozen=True)
class StoredChat:
    """What the session stored, as far as a chat request is checked against it."""

    users: list[str]
    """The user messages' texts, oldest first."""
    calls: dict[str, str]
    """Every tool call made (the parked step's too): call id -> tool name."""
    results: dict[str, eve.ToolResultPart]
    """The calls that have their result, by call id."""
    pending: PendingStep | None
    """The parked step, while the session waits."""
    delivery_ids: list[str]
    """The current turn's messages' ids."""
    client_tools: frozenset[str]
    """The names of the client-resolved tools (their result is a person's answer)."""

    @classmethod
    def of(
        cls,
        conversation: Sequence[eve.Message],
        pending: PendingStep | None,
        delivery_ids: Sequence[str],
        client_tools: frozenset[str],
    ) -> StoredChat:
        """The stored view of a conversation, its parked step and its current turn."""
        assistants = [m for m in conversation if isinstance(m, eve.AssistantMessage)]
        if pending is not None:
            assistants.append(pending.assistant)
        results = {p.tool_call_id: p for m in conversation if isinstance(m, eve.ToolMessage) for p in m.content}
        return cls(
            users=[m.content for m in conversation if isinstance(m, eve.UserMessage)],
            calls={c.tool_call_id: c.tool_name for m in assistants for c in m.tool_calls},
            results=results | (dict(pending.results) if pending is not None else {}),
            pending=pending,
            delivery_ids=list(delivery_ids),
            client_tools=client_tools,
        )

    def request_for(self, call_id: str) -> InputRequest | None:
        """The parked batch's approval or question for a call (not a resolver's elicitation)."""
        requests = self.pending.requests if self.pending is not None else []
        return next((r for r in requests if r.action.call_id == call_id and r.kind != "elicitation"), None)


@dataclass
class ChatPlan:
    """What a chat request does: send a message, answer requests, or neither (report where the chat stands)."""

    message: tuple[str, str] | None = None
    """The new user message: (its UI message id, its text)."""
    answers: list[InputResponse] = field(default_factory=list)
    settle: bool = True
    """False when the answers leave requests of the batch open (the batch stays parked)."""
    continues: str | None = None
    """The assistant message the response continues (the request's last message), else None."""


def conflict(message: str) -> ApiError:
    """A 409 `history_conflict`: the request's messages contradict the stored session."""
    return ApiError(message, status=409, code="history_conflict")


def parse_chat(raw: Any) -> ChatRequest:
    """The body as `DefaultChatTransport`'s request.

    Raises:
        ApiError: 400 when it is not one.
    """
    if not isinstance(raw, dict):
        raise ApiError("Expected the AI SDK chat request: {id, messages, trigger}.", status=400, code="bad_request")
    try:
        return ChatRequest.model_validate(raw)
    except ValidationError as exc:
        detail = describe_validation_error(exc, root="(body)")
        raise ApiError(f"Invalid chat request: {detail}", status=400, code="bad_request") from exc


def _text(message: UiMessage) -> str:
    kinds = {part.type for part in message.parts} - {"text", "step-start"}
    if kinds:
        raise ApiError(
            f"Message {message.id!r} has parts eve-py cannot take ({', '.join(sorted(kinds))}): send text only.",
            status=415,
            code="unsupported_media_type",
        )
    return "\n".join(str(getattr(part, "text", "")) for part in message.parts if part.type == "text")


def plan_chat(request: ChatRequest, stored: StoredChat) -> ChatPlan:
    """What the request adds to the stored session.

    Raises:
        ApiError: 409 `history_conflict` when the messages contradict the stored session (nothing
            is stored then); 415 when the new message has parts other than text; 400 for a tool
            part without its fields.
        UnknownRequestError: An answer names a tool call the session never made (422).
    """
    if request.trigger == "regenerate-message":
        raise conflict("eve-py keeps the conversation as it happened: a response cannot be regenerated.")
    messages = [m for m in request.messages if m.role != "system"]
    last = messages[-1] if messages else None
    plan = ChatPlan()
    earlier = messages
    if last is not None and last.role == "user":
        if request.message_id == last.id:
            raise conflict("eve-py keeps the conversation as it happened: a sent message cannot be edited.")
        earlier = messages[:-1]
        if last.id in stored.delivery_ids:
            earlier = messages  # the current turn's own message, resent: it is not sent again
        else:
            plan.message = (last.id, _text(last))
    elif last is not None:
        plan.continues = last.id
    _check_users([_text(m) for m in earlier if m.role == "user"], stored.users)
    parts = [_tool_part(p) for m in messages if m.role == "assistant" for p in m.parts if _is_tool(p)]
    plan.answers = _answers(parts, stored)
    if plan.answers and plan.message is not None:
        raise conflict("This request both answers open tool calls and sends a new message: send the answers first.")
    if plan.answers and stored.pending is not None:
        answered = {a.request_id for a in plan.answers}
        plan.settle = all(r.request_id in answered for r in stored.pending.open_requests())
    return plan


def _check_users(sent: list[str], stored: list[str]) -> None:
    """The request's earlier user messages must be the stored conversation's last ones, in order."""
    if len(sent) > len(stored):
        raise conflict(
            f"The request holds {len(sent)} earlier user messages; the session stored {len(stored)}. "
            "eve-py keeps the conversation: start a new chat id for a new conversation."
        )
    tail = stored[len(stored) - len(sent) :]
    for index, (mine, theirs) in enumerate(zip(sent, tail, strict=True)):
        if mine != theirs:
            raise conflict(
                f"User message {index + 1} of the request ({mine[:80]!r}) is not what the session stored "
                f"({theirs[:80]!r}): eve-py keeps the conversation as it happened (no edits)."
            )


def _is_tool(part: UiPart) -> bool:
    return part.type.startswith("tool-") or part.type == "dynamic-tool"


def _tool_part(part: UiPart) -> _ToolPart:
    try:
        return _ToolPart.model_validate({**(part.model_extra or {}), "type": part.type})
    except ValidationError as exc:
        detail = describe_validation_error(exc, root=part.type)
        raise ApiError(f"Invalid tool part {part.type!r}: {detail}", status=400, code="bad_request") from exc


def _answers(parts: list[_ToolPart], stored: StoredChat) -> list[InputResponse]:
    """The answers the tool parts carry that the session has not recorded yet."""
    found: dict[str, InputResponse] = {}
    for part in parts:
        call_id = part.tool_call_id
        decision = part.approval is not None and part.approval.approved is not None
        output = part.name in stored.client_tools and part.state in _ANSWERED
        if call_id not in stored.calls:
            if part.state == "input-streaming":
                continue  # a call whose input stopped streaming (the step failed, or the client stopped)
            if decision or output:
                raise UnknownRequestError(
                    f"Tool call {call_id!r} is not one this session made: nothing to answer.", request_id=call_id
                )
            raise conflict(f"Tool call {call_id!r} ({part.name}) is not one this session made.")
        if stored.calls[call_id] != part.name:
            raise conflict(f"Tool call {call_id!r} is a {stored.calls[call_id]} call in the session, not {part.name}.")
        if not (decision or output):
            continue
        answer = _answer(part, stored)
        if answer is None:
            continue
        earlier = found.setdefault(answer.request_id, answer)
        if earlier != answer:
            raise conflict(f"Tool call {call_id!r} is answered twice in the request, differently.")
    return list(found.values())


def _answer(part: _ToolPart, stored: StoredChat) -> InputResponse | None:
    """The part's answer when it is new; None when the session recorded the same already."""
    call_id = part.tool_call_id
    result = stored.results.get(call_id)
    request = stored.request_for(call_id)
    if result is not None or request is None:
        if result is not None and not _agrees(part, result):
            raise conflict(f"Tool call {call_id!r} already has its result, and the request's answer is another.")
        return None  # recorded already (or a call that waits for no one): never answered twice
    answer = _new_answer(part, request)
    recorded = stored.pending.answers.get(request.request_id) if stored.pending is not None else None
    if recorded is None:
        return answer
    if not _same(recorded, answer):
        raise conflict(f"Tool call {call_id!r} was answered already, and the request's answer is another.")
    return None


def _new_answer(part: _ToolPart, request: InputRequest) -> InputResponse:
    """The eve-py answer to the parked request the part answers.

    Raises:
        UnknownRequestError: An approval decision for a call parked on a question, or with another approval id.
        InvalidAnswerError: An output for a call parked on an approval.
    """
    request_id = request.request_id
    if request.kind == "tool-approval":
        if part.approval is None or part.approval.approved is None:
            raise InvalidAnswerError(
                f"Tool call {part.tool_call_id!r} waits for an approval: answer it with addToolApprovalResponse.",
                request_id=request_id,
            )
        if part.approval.id != request_id:
            raise UnknownRequestError(
                f"Approval {part.approval.id!r} is not the open approval of tool call {part.tool_call_id!r} "
                f"({request_id!r}).",
                request_id=part.approval.id,
            )
        return approval_answer(request_id, part.approval.approved, part.approval.reason)
    if part.state not in _ANSWERED:
        raise UnknownRequestError(
            f"Tool call {part.tool_call_id!r} waits for its output (addToolOutput), not an approval.",
            request_id=request_id,
        )
    if part.state == "output-error":
        return InputResponse(request_id=request_id, action="decline", text=part.error_text)
    return value_answer(request_id, request, part.output)


def _same(recorded: InputResponse, sent: InputResponse) -> bool:
    """Whether a resent answer says what the recorded (checked, normalized) one says."""
    if recorded.option_id in ("approve", "deny") or sent.option_id in ("approve", "deny"):
        return recorded.option_id == sent.option_id
    if sent.action is not None or recorded.action is not None:
        return sent.action == recorded.action
    said = sent.value if sent.value is not None else (sent.option_id or sent.text)
    return said in (recorded.value, recorded.option_id, recorded.text) or said == _picked(recorded.value)


def _picked(value: JsonValue) -> JsonValue:
    """A typed picker's answer `{field: [id]}` as the bare option id a select client sends."""
    if isinstance(value, Mapping) and len(value) == 1:
        (only,) = value.values()
        if isinstance(only, list) and len(only) == 1:
            return only[0]
    return None


def _agrees(part: _ToolPart, result: eve.ToolResultPart) -> bool:
    """Whether the part's answer agrees with the result its call already has."""
    if part.approval is not None and part.approval.approved is not None:
        denied = result.is_error and isinstance(result.output, str) and result.output.startswith(DENIED_MESSAGE)
        return part.approval.approved != denied
    if part.state == "output-error":
        return result.output == IGNORED_RESULT
    output = result.output
    if part.output == output:
        return True
    return isinstance(output, Mapping) and part.output in (output.get("optionId"), output.get("text"))
