"""The event union: one class per event type, discriminated on `type`, and how events are made and read.

`Event` is what the harness builds, the stores keep, the server streams and the client, the
CLI and the evals read. Build one with `new_event(payload)`: the payload's class picks the
type. Read one with `parse_event(json)`: an event type eve-py does not know (a newer eve
server's) comes back as an `UnknownEvent` with its data untouched, never as an error.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias, get_args

from pydantic import Field, TypeAdapter, ValidationError

from eve_py._camel import CamelModel
from eve_py._json import JsonObject
from eve_py.protocol.envelope import EventMeta, new_event_id, now_iso
from eve_py.protocol.payloads import (
    ActionInputAppendedData,
    ActionLogData,
    ActionProgressData,
    ActionResultData,
    ActionsRequestedData,
    ContextClearedData,
    DeliveryIgnoredData,
    EventData,
    InputApprovedData,
    InputRequestedData,
    InputResolvedData,
    MessageAppendedData,
    MessageCompletedData,
    MessageReceivedData,
    ResultCompletedData,
    SessionCompletedData,
    SessionFailedData,
    SessionStartedData,
    SessionWaitingData,
    StepCompletedData,
    StepFailedData,
    StepStartedData,
    TurnCancelledData,
    TurnCompletedData,
    TurnFailedData,
    TurnStartedData,
    TurnWaitingData,
)

__all__ = (
    "ActionInputAppended",
    "ActionLog",
    "ActionProgress",
    "ActionResult",
    "ActionsRequested",
    "AnyEvent",
    "ContextCleared",
    "DeliveryIgnored",
    "EVENT_TYPES",
    "Event",
    "InputApproved",
    "InputRequested",
    "InputResolved",
    "MessageAppended",
    "MessageCompleted",
    "MessageReceived",
    "ResultCompleted",
    "SessionCompleted",
    "SessionFailed",
    "SessionStarted",
    "SessionWaiting",
    "StepCompleted",
    "StepFailed",
    "StepStarted",
    "TurnCancelled",
    "TurnCompleted",
    "TurnFailed",
    "TurnStarted",
    "TurnWaiting",
    "UnknownEvent",
    "dump_event",
    "encode_event",
    "is_turn_boundary",
    "load_event",
    "new_event",
    "parse_event",
    "payload",
)


class _Event(CamelModel):
    # Each subclass declares `meta` after `type` and `data`: the JSON keeps eve's key order.

    def line(self) -> bytes:
        """The event as one NDJSON line (camelCase, unset optional fields left out)."""
        return encode_event(self)


class SessionStarted(_Event):
    type: Literal["session.started"] = "session.started"
    data: SessionStartedData
    meta: EventMeta


class TurnStarted(_Event):
    type: Literal["turn.started"] = "turn.started"
    data: TurnStartedData
    meta: EventMeta


class MessageReceived(_Event):
    type: Literal["message.received"] = "message.received"
    data: MessageReceivedData
    meta: EventMeta


class StepStarted(_Event):
    type: Literal["step.started"] = "step.started"
    data: StepStartedData
    meta: EventMeta


class StepCompleted(_Event):
    type: Literal["step.completed"] = "step.completed"
    data: StepCompletedData
    meta: EventMeta


class StepFailed(_Event):
    type: Literal["step.failed"] = "step.failed"
    data: StepFailedData
    meta: EventMeta


class MessageAppended(_Event):
    type: Literal["message.appended"] = "message.appended"
    data: MessageAppendedData
    meta: EventMeta


class ActionInputAppended(_Event):
    type: Literal["action.input.appended"] = "action.input.appended"
    data: ActionInputAppendedData
    meta: EventMeta


class MessageCompleted(_Event):
    type: Literal["message.completed"] = "message.completed"
    data: MessageCompletedData
    meta: EventMeta


class ResultCompleted(_Event):
    type: Literal["result.completed"] = "result.completed"
    data: ResultCompletedData
    meta: EventMeta


class ActionsRequested(_Event):
    type: Literal["actions.requested"] = "actions.requested"
    data: ActionsRequestedData
    meta: EventMeta


class ActionResult(_Event):
    type: Literal["action.result"] = "action.result"
    data: ActionResultData
    meta: EventMeta


class ActionProgress(_Event):
    """eve-py's: a running call's progress report (eve's client ignores the type)."""

    type: Literal["action.progress"] = "action.progress"
    data: ActionProgressData
    meta: EventMeta


class ActionLog(_Event):
    """eve-py's: a running call's log entry (eve's client ignores the type)."""

    type: Literal["action.log"] = "action.log"
    data: ActionLogData
    meta: EventMeta


class InputRequested(_Event):
    type: Literal["input.requested"] = "input.requested"
    data: InputRequestedData
    meta: EventMeta


class InputResolved(_Event):
    type: Literal["input.resolved"] = "input.resolved"
    data: InputResolvedData
    meta: EventMeta


class InputApproved(_Event):
    """eve-py's: one approval of a request that needs several (eve's client ignores the type)."""

    type: Literal["input.approved"] = "input.approved"
    data: InputApprovedData
    meta: EventMeta


class TurnWaiting(_Event):
    type: Literal["turn.waiting"] = "turn.waiting"
    data: TurnWaitingData
    meta: EventMeta


class TurnCompleted(_Event):
    type: Literal["turn.completed"] = "turn.completed"
    data: TurnCompletedData
    meta: EventMeta


class TurnFailed(_Event):
    type: Literal["turn.failed"] = "turn.failed"
    data: TurnFailedData
    meta: EventMeta


class TurnCancelled(_Event):
    type: Literal["turn.cancelled"] = "turn.cancelled"
    data: TurnCancelledData
    meta: EventMeta


class ContextCleared(_Event):
    type: Literal["context.cleared"] = "context.cleared"
    data: ContextClearedData
    meta: EventMeta


class DeliveryIgnored(_Event):
    type: Literal["delivery.ignored"] = "delivery.ignored"
    data: DeliveryIgnoredData
    meta: EventMeta


class SessionWaiting(_Event):
    type: Literal["session.waiting"] = "session.waiting"
    data: SessionWaitingData
    meta: EventMeta


class SessionFailed(_Event):
    type: Literal["session.failed"] = "session.failed"
    data: SessionFailedData
    meta: EventMeta


class SessionCompleted(_Event):
    type: Literal["session.completed"] = "session.completed"
    data: SessionCompletedData | None = None
    meta: EventMeta


Event: TypeAlias = Annotated[
    SessionStarted
    | TurnStarted
    | MessageReceived
    | StepStarted
    | StepCompleted
    | StepFailed
    | MessageAppended
    | ActionInputAppended
    | MessageCompleted
    | ResultCompleted
    | ActionsRequested
    | ActionProgress
    | ActionLog
    | ActionResult
    | InputRequested
    | InputResolved
    | InputApproved
    | TurnWaiting
    | TurnCompleted
    | TurnFailed
    | TurnCancelled
    | ContextCleared
    | DeliveryIgnored
    | SessionWaiting
    | SessionFailed
    | SessionCompleted,
    Field(discriminator="type"),
]
"""Every event type eve-py emits, discriminated on `type`."""


class UnknownEvent(CamelModel, extra="allow"):
    """An event of a type eve-py does not know (from a newer eve server), kept as it came."""

    type: str
    data: JsonObject | None = None
    meta: EventMeta | None = None

    def line(self) -> bytes:
        """The event as one NDJSON line."""
        return encode_event(self)


AnyEvent: TypeAlias = Event | UnknownEvent
"""What a reader of someone else's stream gets: a known event, or an unknown one passed through."""

_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
_CLASSES: tuple[type[_Event], ...] = get_args(get_args(Event)[0])  # the union's members: a new type is named once
EVENT_TYPES: frozenset[str] = frozenset(cls.model_fields["type"].default for cls in _CLASSES)
"""Every event type eve-py knows."""


def _payload_class(cls: type[_Event]) -> type[EventData]:
    """The payload class `data` is annotated with (`SessionCompleted`'s is optional: its one member)."""
    annotation = cls.model_fields["data"].annotation
    [payload] = [arg for arg in get_args(annotation) or (annotation,) if arg is not type(None)]
    assert isinstance(payload, type) and issubclass(payload, EventData)
    return payload


_BY_PAYLOAD: dict[type[EventData], type[_Event]] = {_payload_class(cls): cls for cls in _CLASSES}


def new_event(data: EventData, *, delivery_ids: list[str] | None = None) -> Event:
    """A new event of the type `data`'s class stands for, stamped with a fresh id and the time.

    Args:
        data: The payload; its class picks the event type.
        delivery_ids: The accepted messages that own the event's turn (None outside a turn).

    Returns:
        The event, its `meta.id` from `new_event_id()` and `meta.at` from `now_iso()`.

    Raises:
        TypeError: `data` is not one of the payloads in `eve_py.protocol.payloads`.
    """
    cls = _BY_PAYLOAD.get(type(data))
    if cls is None:
        raise TypeError(f"{type(data).__name__} is not an event payload")
    # One call into pydantic-core builds (and checks) the event and its meta; the payload, a model
    # already, is taken as it is. Each model's `__init__` would cost a Python call more, and
    # `model_construct`, which runs in Python, costs more than validating.
    meta = {"id": new_event_id(), "at": now_iso(), "delivery_ids": delivery_ids}
    event: Event = cls.__pydantic_validator__.validate_python({"data": data, "meta": meta})
    return event


def parse_event(raw: str | bytes | dict[str, Any]) -> AnyEvent:
    """Read one event (a JSON line or its decoded object).

    Raises:
        ValueError: The input is not a JSON object with a string `type`, or an event of a known
            type whose payload does not fit it.
    """
    try:
        if isinstance(raw, dict):
            kind = raw.get("type")
            if kind in EVENT_TYPES:
                return _ADAPTER.validate_python(raw)
            return UnknownEvent.model_validate(raw)
        probe = UnknownEvent.model_validate_json(raw)
        if probe.type in EVENT_TYPES:
            return _ADAPTER.validate_json(raw)
        return probe
    except ValidationError as exc:
        raise ValueError(f"not an event: {exc}") from exc


def load_event(raw: str | bytes) -> Event:
    """Read an event eve-py stored (always of a known type).

    Raises:
        pydantic.ValidationError: The JSON is not such an event.
    """
    return _ADAPTER.validate_json(raw)


def dump_event(event: CamelModel) -> str:
    """An event as the JSON a store keeps (the same as its NDJSON line, without the newline)."""
    # pydantic-core's serializer itself: `model_dump_json`'s Python wrapper costs about as much again.
    return event.__pydantic_serializer__.to_json(event, by_alias=True, exclude_none=True).decode()


def encode_event(event: CamelModel) -> bytes:
    """One event as an NDJSON line: camelCase JSON, unset optional fields left out, then `\\n`."""
    return event.__pydantic_serializer__.to_json(event, by_alias=True, exclude_none=True) + b"\n"


def payload(event: AnyEvent) -> dict[str, Any]:
    """An event's `data` as JSON (camelCase keys), for matching it against a pattern a person wrote."""
    data = event.model_dump(mode="json", by_alias=True, exclude_none=True).get("data")
    return data if isinstance(data, dict) else {}


def is_turn_boundary(event: AnyEvent) -> bool:
    """Whether a reader following a turn stops here: the session waits, ended, or the turn parked."""
    return event.type in ("session.waiting", "session.completed", "session.failed", "turn.waiting")
