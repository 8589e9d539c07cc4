"""The shared vocabulary: the shapes every layer of eve-py speaks, and what goes over the wire and into the store.

This package is the ground floor: it imports nothing else of eve-py but its JSON helpers, so
every other package (and `eve_py.client`, which imports nothing else) may use it.

- `requests`: input requests (what a parked call asks a person) and input responses (answers).
- `pending`: `PendingStep`, one model step whose calls are parked, and the answers it keeps.
- `turns`: `SessionStatus`, `TurnStatus`, and the `TurnResult` that `send` and `respond` return.
- `messages`: the provider-neutral conversation (`UserMessage`, `AssistantMessage`, `ToolMessage`).
- `events`: the event union on eve 0.80.1's wire (one class per type, discriminated on `type`);
  `payloads` what each type's `data` carries; `envelope` the `meta` (`{id, at, deliveryIds?}`).
  An event's position in the session's log is its index (what `startIndex` counts); every
  event streamed is stored first, text deltas (`message.appended`) included.
"""

from eve_py.protocol.envelope import (
    EventMeta,
    new_event_id,
    new_id,
    now_iso,
)
from eve_py.protocol.events import (
    ActionInputAppended,
    ActionLog,
    ActionProgress,
    ActionResult,
    ActionsRequested,
    AnyEvent,
    ContextCleared,
    DeliveryIgnored,
    Event,
    InputApproved,
    InputRequested,
    InputResolved,
    MessageAppended,
    MessageCompleted,
    MessageReceived,
    ResultCompleted,
    SessionCompleted,
    SessionFailed,
    SessionStarted,
    SessionWaiting,
    StepCompleted,
    StepFailed,
    StepStarted,
    TurnCancelled,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
    TurnWaiting,
    UnknownEvent,
    dump_event,
    encode_event,
    is_turn_boundary,
    load_event,
    new_event,
    parse_event,
    payload,
)
from eve_py.protocol.messages import (
    AssistantMessage,
    Message,
    TextPart,
    ToolCallPart,
    ToolMessage,
    ToolResultPart,
    UserMessage,
)
from eve_py.protocol.pending import (
    PendingStep,
    QuestionRef,
    RecordedOutcome,
)
from eve_py.protocol.requests import (
    Display,
    InputOption,
    InputRequest,
    InputResponse,
    RequestKind,
    ToolCallAction,
)
from eve_py.protocol.turns import (
    SessionStatus,
    TurnResult,
    TurnResultStatus,
    TurnStatus,
)

__all__ = (
    "ActionInputAppended",
    "ActionLog",
    "ActionProgress",
    "ActionResult",
    "ActionsRequested",
    "AnyEvent",
    "AssistantMessage",
    "ContextCleared",
    "DeliveryIgnored",
    "Display",
    "Event",
    "EventMeta",
    "InputApproved",
    "InputOption",
    "InputRequest",
    "InputRequested",
    "InputResolved",
    "InputResponse",
    "Message",
    "MessageAppended",
    "MessageCompleted",
    "MessageReceived",
    "PendingStep",
    "QuestionRef",
    "RecordedOutcome",
    "RequestKind",
    "ResultCompleted",
    "SessionCompleted",
    "SessionFailed",
    "SessionStarted",
    "SessionStatus",
    "SessionWaiting",
    "StepCompleted",
    "StepFailed",
    "StepStarted",
    "TextPart",
    "ToolCallAction",
    "ToolCallPart",
    "ToolMessage",
    "ToolResultPart",
    "TurnCancelled",
    "TurnCompleted",
    "TurnFailed",
    "TurnResult",
    "TurnResultStatus",
    "TurnStarted",
    "TurnStatus",
    "TurnWaiting",
    "UnknownEvent",
    "UserMessage",
    "dump_event",
    "encode_event",
    "is_turn_boundary",
    "load_event",
    "new_event",
    "new_event_id",
    "new_id",
    "now_iso",
    "parse_event",
    "payload",
)
