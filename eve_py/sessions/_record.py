"""`SessionRecord`: the mutable part of a session, a small JSON document a store keeps.

A session is this record plus two append-only logs the store keeps beside it: its messages
(the conversation) and its events. The record's size does not grow with the conversation: it
holds the current turn, the parked step, the lease and the logs' lengths. Nothing about a
session lives only in process memory, so any process on the same store can resume it.

**One state machine, stored once.** The turn's `status` is the only status stored; the
session's status and the parked step's phase are derived from it:

| turn status | parked step | session `status` | meaning |
|---|---|---|---|
| (no turn), `completed`, `failed` | none | `idle` | ready for a message |
| `running` | none | `running` | a model step or its calls are under way |
| `waiting` | open | `waiting` | parked on input requests |
| `running` | settling | `running` | every required answer is in: results are being computed |

and `ended` (after `reset`) overrides all of them. Every change is one of the named transitions
below (`start_turn`, `park`, `answer`, `settle`, `complete`, `fail`, ...): each checks the state
it starts from, raising `SessionStateError` (or `SessionEndedError`) from any other, and returns
a new frozen record; none writes anything, so a refused transition is refused before any write,
and the harness (`TurnUnit`) decides when to commit.
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import Field

from eve_py._camel import CamelModel
from eve_py.errors import SessionEndedError, SessionStateError
from eve_py.protocol.pending import PendingStep
from eve_py.protocol.turns import SessionStatus, TurnInput, TurnState, TurnStatus

__all__ = ("Lease", "SessionRecord")

CANCELLED = "The turn was cancelled."
"""A cancelled turn's error."""

_SESSION_STATUS: dict[TurnStatus, SessionStatus] = {
    "running": "running",
    "waiting": "waiting",
    "completed": "idle",
    "failed": "idle",
}
"""The session's status while its turn has each status (see the module's table)."""


class Lease(CamelModel):
    """Which worker is running the session's turn, and until when it counts as alive."""

    owner: str
    expires_at: float
    """Unix time in seconds; renewed by every write the owner makes, and by its heartbeat while a step runs."""
    takeover: bool = False
    """The owner took the turn over from a stopped worker (`resume`): `resume(force=True)`
    elsewhere is refused while this lease holds, so of racing recoveries only one runs anything."""


class SessionRecord(CamelModel):
    """A session's durable state."""

    schema_version: Literal[4] = 4
    """4 since the session's status is derived from its turn's (3: the conversation became an
    append-only log beside the record; stores of earlier versions are not read)."""
    id: str
    version: int = 0
    """Bumped by every write; a write based on an older version is refused (optimistic locking)."""
    created_at: str
    updated_at: str
    message_count: int = 0
    """How many messages the conversation log holds; the next message's index."""
    history_start: int = 0
    """The index of the conversation's first message: `clear` moves it past the history."""
    turn: TurnState | None = None
    pending: PendingStep | None = None
    """The parked step, while there is one (open while the turn waits, settling while it runs)."""
    event_count: int = 0
    """How many events the log holds; the next event's index."""
    approved_tools: list[str] = Field(default_factory=list)
    """The tools whose `once()` approval the session remembers (answers to `remember` requests:
    an approval adds the tool, a denial drops it). Sessions stored before eve 1.0's policies list
    every tool a person approved."""
    queued: TurnInput | None = None
    """A message sent while a batch was parked: the batch is being dismissed, then this message
    starts the next turn (kept here so a crash in between loses neither)."""
    lease: Lease | None = None
    """Set while a worker runs a turn (`running`); `resume()` takes over only once it expired."""
    ended: bool = False
    """True once the session was reset: it takes no more messages."""

    @property
    def status(self) -> SessionStatus:
        """The session's status, derived from its turn's (see the module's table)."""
        if self.ended:
            return "ended"
        turn = self.turn
        return "idle" if turn is None else _SESSION_STATUS[turn.status]

    @property
    def input_deadline(self) -> float | None:
        """When the parked batch's first open request expires (Unix time, seconds); None unless waiting on one.

        Stores keep it beside the record, indexed, so that expiring requests are found without reading records."""
        if self.pending is None or self.status != "waiting":
            return None
        return self.pending.deadline()

    @property
    def settling(self) -> bool:
        """Whether the parked step's batch is settled and its results are being computed."""
        return self.pending is not None and self.status == "running"

    @property
    def next_sequence(self) -> int:
        """The `sequence` the session's next turn gets."""
        return 0 if self.turn is None else self.turn.sequence + 1

    def active(self) -> SessionRecord:
        """This record, unless the session was reset.

        Raises:
            SessionEndedError: It was.
        """
        if self.ended:
            raise SessionEndedError(f"Session {self.id!r} was reset; start a new session.", status="ended")
        return self

    def lease_held(self) -> bool:
        """Whether a worker holds the running turn now (its lease has not expired)."""
        return self.lease is not None and self.lease.expires_at > time.time()

    # Transitions: each checks where it starts from and returns the next record; none writes.

    def _require(self, transition: str, *allowed: SessionStatus, settling: bool | None = None) -> None:
        """Refuse `transition` unless the session's status is one of `allowed` (and its batch is, or is
        not, `settling`).

        Raises:
            SessionEndedError: The session was reset.
            SessionStateError: Its status (or the batch's phase) is another.
        """
        status = self.status
        if status == "ended" and "ended" not in allowed:
            raise SessionEndedError(f"Session {self.id!r} was reset; start a new session.", status="ended")
        if status not in allowed or (settling is not None and self.settling != settling):
            phase = " (its batch settling)" if self.settling else ""
            raise SessionStateError(
                f"Session {self.id!r} cannot {transition}: it is {status}{phase}, "
                f"and {transition} starts from {' or '.join(allowed)}.",
                status=status,
            )

    def start_turn(self, turn: TurnState) -> SessionRecord:
        """idle (or running, a queued message with its batch settled) → running: `turn` starts;
        a queued message is consumed."""
        if self.status != "idle" and (self.queued is None or self.pending is not None):
            self._require("start a turn", "idle")
        return self.model_copy(update={"turn": turn.with_status("running"), "queued": None})

    def with_turn(self, turn: TurnState) -> SessionRecord:
        """The same state, with the current turn's counters or context replaced."""
        return self if turn is self.turn else self.model_copy(update={"turn": turn})

    def park(self, pending: PendingStep, turn: TurnState | None = None) -> SessionRecord:
        """running → waiting: `pending`'s batch is open (`turn`: the current turn as the step left it)."""
        self._require("park a step", "running")
        return self.model_copy(update={"pending": pending, "turn": self._turn(turn).with_status("waiting")})

    def answer(self, pending: PendingStep, *, settled: bool) -> SessionRecord:
        """waiting → waiting (more answers awaited) or → running (settled: results are computed next)."""
        self._require("accept answers", "waiting")
        turn = self._turn()
        return self.model_copy(update={"pending": pending, "turn": turn.with_status("running") if settled else turn})

    def dismiss(self, sent: TurnInput, pending: PendingStep) -> SessionRecord:
        """waiting → running: the open batch (`pending`) settles unanswered, then `sent` starts the next turn."""
        self._require("dismiss its batch", "waiting")
        return self.model_copy(update={"pending": pending, "turn": self._turn().with_status("running"), "queued": sent})

    def checkpoint(self, pending: PendingStep, approved_tools: list[str]) -> SessionRecord:
        """Settling: results computed so far are kept (an approved executor's result before anything else)."""
        self._require("keep a settling batch's results", "running", settling=True)
        return self.model_copy(update={"pending": pending, "approved_tools": approved_tools})

    def settle(self, approved_tools: list[str], *, answered: bool) -> SessionRecord:
        """settling → running: every parked call has its result; the step joins the conversation.

        `answered`: a person answered the batch, so the model gets a fresh step budget.
        """
        self._require("settle its batch", "running", settling=True)
        turn = self._turn()
        if answered:
            turn = turn.model_copy(update={"steps_since_input": 0})
        return self.model_copy(update={"pending": None, "approved_tools": approved_tools, "turn": turn})

    def complete(self, turn: TurnState | None = None) -> SessionRecord:
        """running → idle: the model answered (`turn`: the current turn as the step left it)."""
        self._require("complete a turn", "running", settling=False)
        return self.model_copy(update={"turn": self._turn(turn).with_status("completed")})

    def fail(self, message: str) -> SessionRecord:
        """running → idle: the turn failed with `message`."""
        self._require("fail a turn", "running")
        return self.model_copy(update={"turn": self._turn().with_status("failed", message)})

    def cancel(self) -> SessionRecord:
        """running or waiting → idle: the turn was cancelled; its parked step and a queued message are dropped."""
        self._require("cancel a turn", "running", "waiting")
        return self.model_copy(
            update={"pending": None, "queued": None, "turn": self._turn().with_status("failed", CANCELLED)}
        )

    def clear(self) -> SessionRecord:
        """idle → idle: the conversation so far is left out of what the model is sent from now on."""
        self._require("clear its history", "idle")
        return self.model_copy(update={"history_start": self.message_count})

    def end(self) -> SessionRecord:
        """idle → ended: the session takes no more messages."""
        self._require("end", "idle")
        return self.model_copy(update={"ended": True, "queued": None})

    def leased(self, lease: Lease | None, updated_at: str) -> SessionRecord:
        """The same state, held by `lease` (None: by nobody), as of `updated_at`."""
        return self.model_copy(update={"lease": lease, "updated_at": updated_at})

    def created(self, events: int) -> SessionRecord:
        """The record as a store keeps a new session: version 1, `events` events, no messages."""
        return self.model_copy(update={"version": 1, "event_count": events, "message_count": 0})

    def stored(self, events: int, messages: int) -> SessionRecord:
        """The record as a store keeps it after a write that appended `events` events and `messages` messages."""
        return self.model_copy(
            update={
                "version": self.version + 1,
                "event_count": self.event_count + events,
                "message_count": self.message_count + messages,
            }
        )

    def to_json(self) -> str:
        """The record's JSON as stores keep it (camelCase keys, no nulls)."""
        # pydantic-core's serializer itself: `model_dump_json`'s Python wrapper costs a tenth more.
        return self.__pydantic_serializer__.to_json(self, by_alias=True, exclude_none=True).decode()

    def _turn(self, given: TurnState | None = None) -> TurnState:
        """`given`, else the record's turn (a transition of a turn needs one)."""
        if given is not None:
            return given
        assert self.turn is not None, "a transition of a turn needs a turn"
        return self.turn
