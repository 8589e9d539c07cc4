"""`Conversation`: a session's messages as a driver sends them, checked for pairing as they grow.

The store keeps a session's messages in an append-only log, so a prefix once read never
changes: a `ConversationCache` keeps each recent session's conversation in memory and reads only
what was appended since (from this process or any other). The pairing check runs on what is new
(the part already sent was checked when it was sent), so neither costs more as a session ages.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from eve_py._lru import Recent
from eve_py.harness._pairing import check_pairing
from eve_py.protocol.messages import AssistantMessage, Message
from eve_py.sessions import SessionRecord, SessionStore

__all__ = ("Conversation", "ConversationCache")


class Conversation:
    """Messages `[start, end)` of a session's log, the tool call ids they use, and how far pairing is checked.

    Args:
        messages: The messages, oldest first.
        start: The log index of `messages[0]` (the session's `history_start`).
    """

    def __init__(self, messages: Sequence[Message], *, start: int) -> None:
        self.messages: list[Message] = list(messages)
        self.start = start
        self._seen: set[str] = set()
        self._checked = 0

    @property
    def end(self) -> int:
        """The log index after the last message (the session's `message_count` when current)."""
        return self.start + len(self.messages)

    def copy(self) -> Conversation:
        """An independent copy (the messages themselves are frozen and shared)."""
        twin = Conversation(self.messages, start=self.start)
        twin._seen = set(self._seen)
        twin._checked = self._checked
        return twin

    def last_assistant_text(self) -> str | None:
        """The text of the newest assistant message that has text."""
        for message in reversed(self.messages):
            if isinstance(message, AssistantMessage) and message.text:
                return message.text
        return None

    def append(self, messages: Sequence[Message]) -> None:
        """Add messages at the end (as the store appended them)."""
        self.messages += messages

    def check(self) -> None:
        """Check the pairing rules on what was added since the last check.

        Raises:
            PairingError: A rule is broken (nothing may be sent).
        """
        check_pairing(self.messages, start=self._checked, seen=self._seen)
        self._checked = len(self.messages)

    def used_call_ids(self) -> AbstractSet[str]:
        """Every tool call id in the conversation (checked first): a read-only view, not a copy."""
        self.check()
        return self._seen


class ConversationCache:
    """The conversations of the `size` most recently used sessions of one runtime.

    Args:
        size: How many sessions to keep.
    """

    def __init__(self, size: int = 512) -> None:
        self._kept: Recent[str, Conversation] = Recent(size)

    async def load(self, store: SessionStore, record: SessionRecord) -> Conversation:
        """The conversation as `record` has it: the cached part, plus what the log gained since.

        Returns a conversation the caller may extend (the cache keeps its own copy); `remember` it
        after a commit.

        Raises:
            SessionNotFoundError: No such session.
        """
        kept = self._kept.get(record.id)
        if kept is not None and kept.start == record.history_start and kept.end <= record.message_count:
            conversation = kept.copy()
            if conversation.end < record.message_count:
                conversation.append(await store.read_messages(record.id, conversation.end, record.message_count))
        else:
            messages = await store.read_messages(record.id, record.history_start, record.message_count)
            conversation = Conversation(messages, start=record.history_start)
        self.remember(record.id, conversation)  # keeps a copy: this one is the caller's to extend
        return conversation

    def extend(self, record: SessionRecord, messages: Sequence[Message]) -> None:
        """Add what a write appended (`record` as stored) to the session's kept conversation, if it is current."""
        kept = self._kept.get(record.id)
        if kept is not None and kept.start == record.history_start and kept.end == record.message_count - len(messages):
            kept.append(messages)

    def remember(self, session_id: str, conversation: Conversation) -> None:
        """Keep a (copy of a) conversation as the session's current one."""
        self._kept.put(session_id, conversation.copy())
