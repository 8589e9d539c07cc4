"""What an AG-UI run asks for: its frontend tools, and what its resent messages add to the stored thread.

The run's `tools` are client tools for the turn it starts (`eve_py.tools._client`): a bad
name or schema, or an app tool's name, is refused with 422 `invalid_tools` before anything runs.

An AG-UI client sends the whole conversation on every run. The session keeps its own, so a
run takes from the client's messages only what is new:

- a user message after the stored ones (one per run) starts a turn (text only: a new message
  with an image, file or audio part is refused with 415 `unsupported_media_type`); a user
  message the thread already has is a resend and starts nothing;
- a `ToolMessage` for an open call of a client tool (a frontend tool, or another
  `client-tool`/`question` request) answers it: its `content` as JSON when it parses, else as
  text; a `ToolMessage` for a call that already has its result is a resend and is skipped.

History that contradicts the stored thread (a user message that differs from the stored one
at its place, a tool call or tool result for a call the thread never had, a second new user
message) is refused with 409 `history_conflict`, and nothing is stored. A `ToolMessage` for an
open approval is refused with 422 (an approval is answered with a `resume` entry), unless the
same run's `resume` answers that call's interrupt and the message agrees with it: CopilotKit's
`useInterrupt` sends every answer both ways (a tool message holding the payload, and the resume
entry), so such a message is the answer's echo and is not a second answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ag_ui.core import AssistantMessage, Message, Tool, ToolMessage, UserMessage

from eve_py._json import JsonValue, strict_loads
from eve_py.errors import ApiError, ToolDefinitionError
from eve_py.protocol import messages as eve
from eve_py.protocol.pending import PendingStep
from eve_py.protocol.requests import InputResponse
from eve_py.protocol.turns import ClientTool
from eve_py.tools import ResolvedTool
from eve_py.tools._client import check_client_tools

__all__ = ("RunMessages", "client_tools_of", "read_messages", "user_text")

_ANSWERED_BY_TOOL_MESSAGE = ("client-tool", "question")
"""Request kinds a client's `ToolMessage` may answer (their answer is the call's result)."""


@dataclass(frozen=True)
class RunMessages:
    """What a run's messages add to the thread."""

    message: str | None = None
    """The new user message's text, when the run sends one."""
    answers: list[InputResponse] = field(default_factory=list)
    """Answers to open client-tool calls, from the client's `ToolMessage`s."""


def client_tools_of(tools: Sequence[Tool], app_tools: Mapping[str, ResolvedTool]) -> list[ClientTool] | None:
    """The run's frontend tools as client tools for its turn (None when it sends none).

    Raises:
        ApiError: 422 `invalid_tools`: a name or schema is invalid, repeats, or is an app tool's name.
    """
    if not tools:
        return None
    offered: list[ClientTool] = []
    for tool in tools:
        schema = tool.parameters if tool.parameters is not None else {"type": "object", "properties": {}}
        if not isinstance(schema, dict):
            raise ApiError(
                f"Tool {tool.name!r}: its parameters must be a JSON Schema object.", status=422, code="invalid_tools"
            )
        offered.append(ClientTool(name=tool.name, description=tool.description, input_schema=schema))
    try:
        check_client_tools(offered, app_tools)
    except ToolDefinitionError as exc:
        raise ApiError(str(exc), status=422, code="invalid_tools") from exc
    return offered


def user_text(message: UserMessage) -> str:
    """A user message's text (its text parts, joined, for a multimodal one)."""
    if isinstance(message.content, str):
        return message.content
    return "\n".join(text for part in message.content if isinstance(text := getattr(part, "text", None), str))


def _conflict(message: str) -> ApiError:
    return ApiError(
        f"{message} Start from the thread as stored: run once with no messages to get its MESSAGES_SNAPSHOT.",
        status=409,
        code="history_conflict",
    )


def _new_user_message(sent: Sequence[Message], stored: Sequence[eve.Message]) -> str | None:
    """The text of the one user message the client has beyond the stored ones, if any.

    Raises:
        ApiError: 409 when the client's user messages are not the stored ones followed by at most one.
    """
    theirs = [user_text(m) for m in sent if isinstance(m, UserMessage)]
    ours = [m.content for m in stored if isinstance(m, eve.UserMessage)]
    for index, (their, our) in enumerate(zip(theirs, ours, strict=False)):
        if their != our:
            raise _conflict(f"User message {index + 1} differs from the thread's ({their[:60]!r} != {our[:60]!r}).")
    new = theirs[len(ours) :]
    if len(new) > 1:
        raise _conflict(f"The messages hold {len(new)} user messages the thread does not have; send one per run.")
    if not new:
        return None
    last = [m for m in sent if isinstance(m, UserMessage)][-1]
    if not isinstance(last.content, str) and any(getattr(part, "type", None) != "text" for part in last.content):
        # Dropping an image or a file unseen would answer a question the person did not ask.
        raise ApiError(
            "The new user message holds parts other than text (images, files, audio): eve-py takes text only.",
            status=415,
            code="unsupported_media_type",
        )
    return new[0]


def _tool_output(message: ToolMessage) -> JsonValue:
    """A client tool's result from its `ToolMessage`: the content as JSON when it is JSON, else the text."""
    if message.error:
        return {"error": message.error}
    content = message.content
    text = (
        content
        if isinstance(content, str)
        else "\n".join(t for p in content if isinstance(t := getattr(p, "text", None), str))
    )
    try:
        value = strict_loads(text)
    except ValueError:
        return text
    return text if value is None else value


def _echoes(output: JsonValue, payload: JsonValue) -> bool:
    """Whether a tool message's output repeats a resume entry's payload (an empty message repeats
    a cancelled entry, which has none)."""
    return output == payload or (payload is None and output in ("", None))


def read_messages(
    sent: Sequence[Message],
    stored: Sequence[eve.Message],
    pending: PendingStep | None,
    resumed: Mapping[str, JsonValue] | None = None,
) -> RunMessages:
    """What `sent` (the run's messages) adds to the thread (its `stored` conversation and parked step).

    Args:
        sent: The run's messages.
        stored: The thread's conversation.
        pending: The thread's parked step, if any.
        resumed: The run's `resume` entries' payloads by interrupt id (None for a cancelled entry):
            a `ToolMessage` agreeing with its call's entry is that answer's echo, and is skipped.

    Raises:
        ApiError: 409 `history_conflict` when `sent` contradicts the thread; 422 `invalid_answer`
            when a `ToolMessage` answers an approval or a resolver's question with no agreeing
            resume entry, or contradicts the resume entry of its call.
    """
    resumed = resumed or {}
    message = _new_user_message(sent, stored)
    known = {call.tool_call_id for m in stored if isinstance(m, eve.AssistantMessage) for call in m.tool_calls}
    done = {part.tool_call_id for m in stored if isinstance(m, eve.ToolMessage) for part in m.content}
    open_requests = {}
    if pending is not None:
        known.update(call.tool_call_id for call in pending.assistant.tool_calls)
        done.update(pending.results)
        done.update(pending.answers)  # a partial answer's calls: answered, not settled yet
        open_requests = {r.action.call_id: r for r in pending.open_requests()}
    for item in sent:
        calls = (item.tool_calls or []) if isinstance(item, AssistantMessage) else []
        unknown = [call.id for call in calls if call.id not in known]
        if unknown:
            raise _conflict(f"Tool call {unknown[0]!r} is not in the thread.")
    answers: dict[str, InputResponse] = {}
    for item in sent:
        if not isinstance(item, ToolMessage) or item.tool_call_id in done or item.tool_call_id in answers:
            continue  # a result the thread has (resent), or the second result of one call
        request = open_requests.get(item.tool_call_id)
        if request is None:
            raise _conflict(f"The tool result for call {item.tool_call_id!r} answers no call of the thread.")
        if request.request_id in resumed:
            if _echoes(_tool_output(item), resumed[request.request_id]):
                continue  # the resume entry is the answer; this message only repeats it
            raise ApiError(
                f"The tool message for call {item.tool_call_id!r} contradicts the resume entry for its interrupt "
                f"{request.request_id!r} in the same run: send one answer.",
                status=422,
                code="invalid_answer",
            )
        if request.kind not in _ANSWERED_BY_TOOL_MESSAGE or request.request_id != item.tool_call_id:
            raise ApiError(
                f"Call {item.tool_call_id!r} waits for a person's {request.kind}: answer its interrupt "
                f"{request.request_id!r} with a resume entry, not a tool message.",
                status=422,
                code="invalid_answer",
            )
        answers[item.tool_call_id] = InputResponse(request_id=request.request_id, value=_tool_output(item))
    return RunMessages(message, list(answers.values()))
