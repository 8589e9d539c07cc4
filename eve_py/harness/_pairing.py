"""The pairing invariant: every tool call has exactly one result, and every result its call.

Providers reject requests that break it (Anthropic: "each tool_use must have a single
result"; OpenAI: "An assistant message with 'tool_calls' must be followed by tool
messages..."). eve-py checks it before every model request and raises `PairingError`
instead of sending.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from eve_py.errors import PairingError
from eve_py.protocol.messages import AssistantMessage, Message, ToolMessage

__all__ = ("check_pairing",)


def check_pairing(messages: Sequence[Message], *, start: int = 0, seen: set[str] | None = None) -> None:
    """Check the conversation the way the strictest provider does.

    Rules: each assistant message's tool calls are answered by the very next message, a tool
    message holding exactly one result per call and nothing else; a tool message only ever
    follows an assistant message with calls; call ids are unique in the conversation.

    Args:
        messages: The conversation.
        start: Check from this index on: `messages[:start]` passed an earlier check, and ended
            where a model request may be sent (no call left without its result).
        seen: The call ids of `messages[:start]`; the ids of the rest are added to it.

    Raises:
        PairingError: A rule is broken; `.call_ids` names the calls involved.
    """
    seen = set() if seen is None else seen
    for index in range(start, len(messages)):
        message = messages[index]
        if isinstance(message, AssistantMessage):
            ids = [call.tool_call_id for call in message.tool_calls]
            fresh = len(set(ids)) == len(ids) and seen.isdisjoint(ids)  # the usual case, said without Counters
            repeated = (
                [] if fresh else sorted({i for i in ids if i in seen} | {i for i, n in Counter(ids).items() if n > 1})
            )
            if repeated:
                raise PairingError(
                    f"messages[{index}]: tool call ids must be unique, repeated: {repeated}", call_ids=repeated
                )
            seen.update(ids)
            if not ids:
                continue
            following = messages[index + 1] if index + 1 < len(messages) else None
            if not isinstance(following, ToolMessage):
                raise PairingError(
                    f"messages[{index}]: tool calls without a result immediately after: {ids}", call_ids=ids
                )
            if [part.tool_call_id for part in following.content] == ids:
                continue  # one result per call, in call order: what eve-py itself writes
            counts = Counter(part.tool_call_id for part in following.content)
            missing = [i for i in ids if counts[i] == 0]
            duplicated = sorted(i for i, n in counts.items() if n > 1)
            orphans = sorted(i for i in counts if i not in ids)
            if missing:
                raise PairingError(f"messages[{index}]: tool calls without a result: {missing}", call_ids=missing)
            if duplicated:
                raise PairingError(
                    f"messages[{index + 1}]: tool calls with more than one result: {duplicated}", call_ids=duplicated
                )
            if orphans:
                raise PairingError(
                    f"messages[{index + 1}]: tool results without a matching call: {orphans}", call_ids=orphans
                )
        elif isinstance(message, ToolMessage):
            previous = messages[index - 1] if index > 0 else None
            if not isinstance(previous, AssistantMessage) or not previous.tool_calls:
                orphans = [part.tool_call_id for part in message.content]
                raise PairingError(
                    f"messages[{index}]: tool results without a preceding tool call: {orphans}", call_ids=orphans
                )
