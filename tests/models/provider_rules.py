"""Each provider's tool-pairing rule, checked on a request body the way the provider checks it.

The rules and the error texts are the providers' own (see shared/reference/peers.md, section 3):
a violation raises `ProviderRejection` carrying the 400 `invalid_request_error` the real API
returns, so a test failure reads like the production failure it prevents. The fake provider
server runs these checks on every request it receives.

Anthropic Messages API: the message after an assistant message with `tool_use` blocks is a
user message that starts with exactly one `tool_result` per `tool_use` (any text after all of
them); a `tool_result` must answer a `tool_use` of the previous message; `tool_use` ids are
unique.

OpenAI Chat Completions: every assistant `tool_calls[i].id` is answered by exactly one
following `role: "tool"` message before any other message; a tool message must answer a call of
the assistant message it follows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ("ProviderRejection", "check_anthropic_body", "check_openai_body")


class ProviderRejection(Exception):
    """What the provider would answer: HTTP 400, `invalid_request_error`, this message."""

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.status = 400
        self.error_type = "invalid_request_error"


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise ProviderRejection(f"messages: content must be a string or a list of blocks, got {content!r}")
    return content


def check_anthropic_body(body: Mapping[str, Any]) -> None:
    """Raise `ProviderRejection` where the Messages API would reject `body`'s tool pairing.

    Raises:
        ProviderRejection: The first violation, with Anthropic's error text.
    """
    messages: Sequence[Mapping[str, Any]] = body.get("messages") or []
    if any(message.get("role") not in ("user", "assistant") for message in messages):
        raise ProviderRejection("messages: roles must be 'user' or 'assistant' (the system prompt is top-level)")
    if messages and messages[0].get("role") != "user":
        raise ProviderRejection('messages: first message must use the "user" role')
    seen: set[str] = set()
    for n, message in enumerate(messages):
        blocks = _blocks(message)
        for m, block in enumerate(blocks):
            if block.get("type") == "text" and not str(block.get("text", "")).strip():
                raise ProviderRejection(
                    f"messages.{n}.content.{m}.text: text content blocks must contain non-whitespace text"
                )
        if not blocks:
            raise ProviderRejection(f"messages.{n}: all messages must have non-empty content")
        if message["role"] == "assistant":
            uses = [block["id"] for block in blocks if block.get("type") == "tool_use"]
            if len(set(uses)) != len(uses) or seen & set(uses):
                raise ProviderRejection(f"messages.{n}: `tool_use` ids must be unique")
            seen.update(uses)
            if not uses:
                continue
            following = _blocks(messages[n + 1]) if n + 1 < len(messages) else []
            if n + 1 < len(messages) and messages[n + 1]["role"] != "user":
                following = []
            leading: list[str] = []
            for block in following:
                if block.get("type") != "tool_result":
                    break  # text before a result hides every later result
                leading.append(block["tool_use_id"])
            missing = [use for use in uses if use not in leading]
            if missing:
                raise ProviderRejection(
                    f"messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                    f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block "
                    "in the next message."
                )
        else:
            previous = messages[n - 1] if n > 0 else None
            offered = (
                {block["id"] for block in _blocks(previous) if block.get("type") == "tool_use"}
                if previous is not None and previous.get("role") == "assistant"
                else set()
            )
            answered: set[str | None] = set()
            for m, block in enumerate(blocks):
                if block.get("type") != "tool_result":
                    continue
                tool_use_id = block.get("tool_use_id")
                if tool_use_id not in offered:
                    raise ProviderRejection(
                        f"messages.{n}.content.{m}: unexpected `tool_use_id` found in `tool_result` blocks: "
                        f"{tool_use_id}. Each `tool_result` block must have a corresponding `tool_use` block in the "
                        "previous message."
                    )
                if tool_use_id in answered:
                    raise ProviderRejection(
                        f"messages.{n}.content.{m}: each tool_use must have a single result. Found multiple "
                        f"`tool_result` blocks with id: {tool_use_id}"
                    )
                answered.add(tool_use_id)


def check_openai_body(body: Mapping[str, Any]) -> None:
    """Raise `ProviderRejection` where Chat Completions would reject `body`'s tool pairing.

    Raises:
        ProviderRejection: The first violation, with OpenAI's error text.
    """
    messages: Sequence[Mapping[str, Any]] = body.get("messages") or []
    open_calls: dict[str, int] = {}  # call id -> index of the assistant message that made it
    calling: int | None = None  # index of the assistant message whose tool messages may follow
    answered: dict[str, int] = {}  # call id -> index of its tool message
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if calling is None or call_id not in open_calls and call_id not in answered:
                raise ProviderRejection(
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
                    "'tool_calls'.",
                    param=f"messages.[{i}].role",
                )
            if call_id in answered:
                raise ProviderRejection(
                    f"Invalid parameter: Duplicate value for 'tool_call_id' of '{call_id}' in "
                    f"messages[{answered[call_id]}] and messages[{i}].",
                    param=f"messages.[{i}].tool_call_id",
                )
            open_calls.pop(call_id)
            answered[call_id] = i
            continue
        if open_calls:
            assert calling is not None
            raise ProviderRejection(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(open_calls)}",
                param=f"messages.[{calling}].role",
            )
        calling = None
        answered = {}
        if role == "assistant" and message.get("tool_calls"):
            calling = i
            open_calls = {call["id"]: i for call in message["tool_calls"]}
    if open_calls:
        raise ProviderRejection(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(open_calls)}",
            param=f"messages.[{calling}].role",
        )
