"""`Writer`: how one call's state changes reach the store, the event listener and the conversation cache.

Every state change is one store commit: the record (a compare-and-set on its version), the
events, and the messages appended to the conversation, all or nothing. The writer adds what
every write needs: the worker's lease (renewed by each write of a running turn), a settled batch
carried into the next write, the durability of each write, and the listener's notification.

**Durability.** A write is *durable* (synced to disk before `commit` returns, on stores that
can tell the difference) when its outcome leaves the process: the last write of a call (a
park, a completed or failed turn, a cancel), a checkpoint of an approved executor's result, and
every write when an event listener is installed (a server streams each write's events as it
lands, and acknowledges requests after their first write). The writes in between (a turn's
start, an accepted answer that settles the batch, a step whose calls ran) need not be synced on
their own: a store keeps writes in order, so the call's last, durable write syncs them too, and
a power loss before it loses only work that nobody was told about; `resume()` redoes it (see
`docs/sessions.md` for what can run twice then).
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from eve_py.harness._conversation import Conversation, ConversationCache
from eve_py.protocol import Event, new_id, now_iso
from eve_py.protocol.messages import Message
from eve_py.sessions._record import Lease, SessionRecord
from eve_py.sessions._store import SessionStore

__all__ = ("Committed", "EventListener", "Write", "Writer", "notify")

_log = logging.getLogger("eve_py")


@dataclass(frozen=True, slots=True)
class Committed:
    """One committed write's events, and where they landed in the session's log."""

    session_id: str
    first_index: int
    """The log index of `events[0]`."""
    events: Sequence[Event]


EventListener = Callable[[Committed], "Awaitable[None] | None"]
"""Called with each committed write's events right after the commit."""


@dataclass(frozen=True, slots=True)
class Write:
    """What one commit writes: the record, the events, the messages appended to the conversation."""

    record: SessionRecord
    events: list[Event]
    messages: Sequence[Message] = ()


class Writer:
    """Commits one call's writes (one writer per `send`, `respond`, `resume`, ...).

    Args:
        store: Where sessions live.
        listener: Told about every committed write (and makes every write durable).
        lease_s: How long a running turn's lease lasts after each write, in seconds.
        conversations: The runtime's cache of recent conversations.
    """

    def __init__(
        self,
        store: SessionStore,
        *,
        listener: EventListener | None,
        lease_s: float,
        conversations: ConversationCache,
    ) -> None:
        self.store = store
        self.owner = new_id("wkr")
        """This worker's lease owner id."""
        self.events: list[Event] = []
        """Every event this writer committed, oldest first."""
        self.last: SessionRecord | None = None
        """The record as this writer last stored it."""
        self.takeover = False
        """This writer took the turn over from a stopped worker: its leases say so (`Lease.takeover`)."""
        self._listener = listener
        self._lease_s = lease_s
        self._conversations = conversations
        self._conversation: Conversation | None = None
        self._carry: Write | None = None

    def carry(self, write: Write) -> None:
        """Keep `write` (a batch settled from stored answers) to go first in the next commit.

        Settling again after a crash gives the same results, so it needs no write of its own.
        """
        self._carry = write

    async def commit(
        self,
        record: SessionRecord,
        events: list[Event],
        *,
        messages: Sequence[Message] = (),
        release: bool = False,
        durable: bool = True,
    ) -> SessionRecord:
        """Write `record`, `events` and `messages` atomically, then tell the listener.

        A `running` record carries this writer's lease, renewed by the write (unless `release`,
        which lets another worker take the turn over at once); any other record is freed.

        Args:
            durable: Sync the write to disk before returning (see the module's docstring);
                False only for a write the same call follows with a durable one.

        Raises:
            SessionConflictError: Another writer changed the session since `record` was read.
        """
        running = record.status == "running" and not release
        lease = (
            Lease(owner=self.owner, expires_at=time.time() + self._lease_s, takeover=self.takeover) if running else None
        )
        updated = record.leased(lease, now_iso())
        carried, self._carry = self._carry, None
        written = messages
        if carried is not None:
            events = [*carried.events, *events]
            written = [*carried.messages, *messages]
        durable = durable or self._listener is not None
        stored = await self.store.commit(updated, events, written, durable=durable)
        self.last = stored
        conversation = self._conversation
        if conversation is None:
            self._conversations.extend(stored, written)
        # The kept conversation holds the carried messages already (see `conversation`).
        elif conversation.end == stored.message_count - len(messages):
            conversation.append(messages)
            self._conversations.remember(record.id, conversation)
        self.events += events
        if self._listener is not None:  # the library alone has none: no coroutine made for nothing
            await notify(self._listener, Committed(record.id, record.event_count, events))
        return stored

    async def conversation(self, record: SessionRecord) -> Conversation:
        """The session's conversation as `record` has it (loaded once per writer, then kept up to date).

        A carried batch's messages are in it already: the next write stores them.
        """
        carried = self._carry.messages if self._carry is not None else ()
        kept = self._conversation
        if kept is None or kept.end != record.message_count + len(carried) or kept.start != record.history_start:
            kept = self._conversation = await self._conversations.load(self.store, record)
            kept.append(carried)
        return kept


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
