"""`SessionRecord`: the mutable part of a session, a small JSON document a store keeps.

A session is this record plus two append-only logs the store keeps beside it: its messages
(the conversation) and its events. The record's size does not grow with the conversation: it
holds the status, the current turn, the parked step, the lease and the logs' lengths. Nothing
about a session lives only in process memory, so any process on the same store can resume it.
"""

from __future__ import annotations

import time
from typing import Literal, TypeAlias

from pydantic import Field

from eve_py._json import JsonSchema
from eve_py._wire import WireModel
from eve_py.parking.batch import PendingStep

__all__ = ("Lease", "SessionRecord", "SessionStatus", "TurnInput", "TurnState")

SessionStatus: TypeAlias = Literal["idle", "running", "waiting", "ended"]
"""`idle`: ready for a message. `running`: a turn is in progress (or its worker died: call
`resume()`). `waiting`: parked on input requests. `ended`: reset, retired for good."""


class TurnInput(WireModel):
    """What a person sent to start a turn (`Session.send`), as the turn keeps it."""

    parts: list[str]
    """The message's text parts (one for a plain string message)."""
    delivery_id: str
    """The id the server returned for this message (`deliveryId`); stamped on the turn's events."""
    client_context: str | None = None
    """Context the client sent for this turn only (`clientContext`), as the model is shown it."""
    output_schema: JsonSchema | None = None
    """JSON Schema the turn's final answer must satisfy (`outputSchema`); see `result.completed`."""

    @property
    def text(self) -> str:
        """The message as one text: its parts joined by newlines (as eve flattens them)."""
        return "\n".join(self.parts)


class TurnState(WireModel):
    """The current (or last) turn."""

    turn_id: str
    sequence: int
    """0 for the session's first turn, 1 for the second, ... (eve's `sequence`)."""
    delivery_ids: list[str] = Field(default_factory=list)
    """The accepted messages that own this turn (`meta.deliveryIds` of its events)."""
    client_context: str | None = None
    """See `TurnInput.client_context`."""
    output_schema: JsonSchema | None = None
    """See `TurnInput.output_schema`."""
    steps: int = 0
    """Model steps taken so far in this turn (the next step's `stepIndex`)."""
    steps_since_input: int = 0
    """Model steps since a person last answered one of this turn's batches (what the limit counts)."""
    status: Literal["running", "waiting", "completed", "failed"] = "running"
    """Where the turn stands."""
    error: str | None = None
    """Why the turn failed, when it did."""


class Lease(WireModel):
    """Which worker is running the session's turn, and until when it counts as alive."""

    owner: str
    expires_at: float
    """Unix time in seconds; renewed by every write the owner makes."""
    takeover: bool = False
    """The owner took the turn over from a stopped worker (`resume`): `resume(force=True)`
    elsewhere is refused while this lease holds, so of racing recoveries only one runs anything."""


class SessionRecord(WireModel):
    """A session's durable state."""

    schema_version: Literal[3] = 3
    """3 since the conversation is an append-only log beside the record (stores of earlier
    versions are not read)."""
    id: str
    version: int = 0
    """Bumped by every write; a write based on an older version is refused (optimistic locking)."""
    status: SessionStatus = "idle"
    created_at: str
    updated_at: str
    message_count: int = 0
    """How many messages the conversation log holds; the next message's index."""
    history_start: int = 0
    """The index of the conversation's first message: `clear` moves it past the history."""
    turn: TurnState | None = None
    pending: PendingStep | None = None
    """The parked step, while there is one."""
    event_count: int = 0
    """How many events the log holds; the next event's index."""
    approved_tools: list[str] = Field(default_factory=list)
    """Tools a person approved at least once in this session."""
    queued: TurnInput | None = None
    """A message sent while a batch was parked: the batch is being dismissed, then this message
    starts the next turn (kept here so a crash in between loses neither)."""
    lease: Lease | None = None
    """Set while a worker runs a turn (`running`); `resume()` takes over only once it expired."""

    @property
    def next_sequence(self) -> int:
        """The `sequence` the session's next turn gets."""
        return 0 if self.turn is None else self.turn.sequence + 1

    def lease_held(self) -> bool:
        """Whether a worker holds the running turn now (its lease has not expired)."""
        return self.lease is not None and self.lease.expires_at > time.time()
