"""Where a session and its turn stand: `SessionStatus`, the stored turn (`TurnState`, its `TurnStatus`, the
`TurnInput` that started it, the `ClientTool`s a client offered for it), and the `TurnResult` that `send`,
`respond` and `resume` return."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from pydantic import Field

from eve_py._camel import CamelModel
from eve_py._json import JsonSchema, JsonValue
from eve_py.protocol.events import AnyEvent, Event, new_event
from eve_py.protocol.payloads import EventData
from eve_py.protocol.requests import InputRequest

__all__ = ("ClientTool", "SessionStatus", "TurnInput", "TurnResult", "TurnResultStatus", "TurnState", "TurnStatus")

SessionStatus: TypeAlias = Literal["idle", "running", "waiting", "ended"]
"""`idle`: ready for a message. `running`: a turn is in progress (or its worker died: call
`resume()`). `waiting`: parked on input requests. `ended`: reset, retired for good."""

TurnStatus: TypeAlias = Literal["running", "waiting", "completed", "failed"]
"""Where a turn stands: the one status a session stores."""

TurnResultStatus: TypeAlias = Literal["waiting", "completed", "failed"]
"""Where a turn stands once a call returns: parked, answered, or failed (never still `running`)."""


class ClientTool(CamelModel):
    """A client-resolved tool a client offers for one turn (AG-UI's frontend tools).

    The model may call it like an app tool; the call parks as a `client-tool` input request and
    the client's answer is its result. Kept with the turn, so a resume in another process knows it.
    """

    name: str
    description: str
    input_schema: JsonSchema
    """JSON Schema of the call's input (an object schema)."""


class TurnInput(CamelModel):
    """What a person sent to start a turn (`Session.send`), as the turn keeps it."""

    parts: list[str]
    """The message's text parts (one for a plain string message)."""
    delivery_id: str
    """The id the server returned for this message (`deliveryId`); stamped on the turn's events."""
    client_context: str | None = None
    """Context the client sent for this turn only (`clientContext`), as the model is shown it."""
    output_schema: JsonSchema | None = None
    """JSON Schema the turn's final answer must satisfy (`outputSchema`); see `result.completed`."""
    client_tools: list[ClientTool] | None = None
    """Client-resolved tools offered for this turn only, beside the app's (`clientTools`)."""

    @property
    def text(self) -> str:
        """The message as one text: its parts joined by newlines (as eve flattens them)."""
        return "\n".join(self.parts)


class TurnState(CamelModel):
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
    client_tools: list[ClientTool] | None = None
    """See `TurnInput.client_tools`."""
    steps: int = 0
    """Model steps taken so far in this turn (the next step's `stepIndex`)."""
    steps_since_input: int = 0
    """Model steps since a person last answered one of this turn's batches (what the limit counts)."""
    status: TurnStatus = "running"
    """Where the turn stands."""
    error: str | None = None
    """Why the turn failed, when it did."""

    @classmethod
    def begin(cls, turn_id: str, sequence: int, sent: TurnInput) -> TurnState:
        """A new, running turn started by what a person `sent`."""
        return cls(
            turn_id=turn_id,
            sequence=sequence,
            delivery_ids=[sent.delivery_id],
            client_context=sent.client_context,
            output_schema=sent.output_schema,
            client_tools=sent.client_tools,
        )

    def stamp(self, data: EventData) -> Event:
        """A new event of this turn (`meta.deliveryIds` = the turn's delivery ids)."""
        return new_event(data, delivery_ids=self.delivery_ids or None)  # the event's meta gets its own list

    def stepped(self) -> TurnState:
        """This turn after one more model step."""
        return self.model_copy(update={"steps": self.steps + 1, "steps_since_input": self.steps_since_input + 1})

    def with_context(self, client_context: str | None, output_schema: JsonSchema | None) -> TurnState:
        """This turn with the client context and output schema replaced where given (not None)."""
        update: dict[str, object] = {}
        if client_context is not None:
            update["client_context"] = client_context
        if output_schema is not None:
            update["output_schema"] = output_schema
        return self.model_copy(update=update) if update else self

    def with_status(self, status: TurnStatus, error: str | None = None) -> TurnState:
        """This turn at `status`, failed with `error` (None clears it)."""
        if status == self.status and error == self.error:
            return self  # frozen: the same turn serves (a new turn starts running)
        return self.model_copy(update={"status": status, "error": error})


@dataclass(frozen=True, kw_only=True)
class TurnResult:
    """Where a turn stands after `send`, `respond` or `resume` returns."""

    session_id: str
    turn_id: str | None
    status: TurnResultStatus
    """`waiting`: parked on `input_requests`; `completed`: the model answered; `failed`: see `error`."""
    input_requests: list[InputRequest]
    """Open requests (empty unless waiting)."""
    message: str | None
    """The assistant's last text in this call, if any."""
    events: list[AnyEvent]
    """The events committed during this call (or read for it, by a client), oldest first."""
    error: str | None = None
    """Why the turn failed."""
    result: JsonValue | None = None
    """The turn's structured result, when it was sent an `output_schema` and completed."""
