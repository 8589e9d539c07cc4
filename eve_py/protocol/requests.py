"""Input requests (what a parked call asks a person) and input responses (their answers).

Wire shapes (JSON, camelCase):

```
InputRequest  {requestId, kind: "question"|"client-tool"|"tool-approval"|"elicitation",
               action: {kind: "tool-call", callId, toolName, input},
               prompt, display: "text"|"select"|"confirmation"|"form",
               options?: [{id, label, description?, style?}], allowFreeform?, schema?,
               editSchema?, expiresAt?, approvers?, approvalsRequired?}
InputResponse {requestId, optionId?, text?, value?, action?: "accept"|"decline"|"cancel",
               editedInput?}
```

On eve's wire (`input.requested`) a request is projected to eve 0.80.1's strict `InputRequest`
(`EveInputRequest`: kind `question` or `tool-approval`, display `text`, `select` or
`confirmation`, no schema), so eve's own client and validators accept it; the rest
(`RequestExtension`: the precise kind, `form`, the answer schema, an editable approval's
`editSchema`, the deadline `expiresAt`) rides beside it, and `InputRequest.from_eve` puts the two back together.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal, TypeAlias

from pydantic import Field

from eve_py._camel import CamelModel
from eve_py._json import JsonObject, JsonSchema, JsonValue

__all__ = (
    "Display",
    "EveDisplay",
    "EveInputRequest",
    "EveRequestKind",
    "InputOption",
    "InputRequest",
    "InputResponse",
    "RequestExtension",
    "RequestKind",
    "ToolCallAction",
    "deadline_iso",
    "parse_deadline",
)

RequestKind: TypeAlias = Literal["question", "client-tool", "tool-approval", "elicitation"]
"""`question`: an `ask_question` call (built-in or override); `client-tool`: any other
client-resolved tool; `tool-approval`: a call waiting for approval; `elicitation`: a resolver's question."""

Display: TypeAlias = Literal["text", "select", "confirmation", "form"]
"""How a client should render the request."""

EveRequestKind: TypeAlias = Literal["question", "session-limit", "tool-approval"]
"""The request kinds eve 0.80.1 knows."""

EveDisplay: TypeAlias = Literal["text", "select", "confirmation"]
"""The displays eve 0.80.1 knows."""


class InputOption(CamelModel):
    """One choice offered to the person."""

    id: str
    label: str
    description: str | None = None
    style: Literal["primary", "danger", "default"] | None = None


class ToolCallAction(CamelModel):
    """The tool call a request is about."""

    kind: Literal["tool-call"] = "tool-call"
    call_id: str
    tool_name: str
    input: JsonObject


class InputRequest(CamelModel):
    """A question to a person, parked until answered. `request_id` is stable across restarts."""

    request_id: str
    kind: RequestKind
    action: ToolCallAction
    prompt: str
    display: Display
    options: list[InputOption] | None = None
    allow_freeform: bool | None = None
    response_schema: JsonSchema | None = Field(default=None, alias="schema")
    """JSON Schema the answer's `value` must satisfy (wire name `schema`)."""
    edit_schema: JsonSchema | None = None
    """An editable approval's: the tool's model-facing input schema an `editedInput` must satisfy.

    Set only on `tool-approval` requests of tools defined with `editable=True`; its presence is
    what makes an approval editable."""
    expires_at: str | None = None
    """When the request expires unanswered: RFC 3339, UTC (`2026-11-25T10:00:00.000Z`); None: never.

    Set when the call parks, from the tool's `expires_after` (or the agent's `input_expires_after`)."""
    approvers: list[str] | None = None
    """An approval's named approvers (the tool's `approvers` list); None: anyone who may answer (or a policy)."""
    approvals_required: int | None = None
    """An approval's quorum when it needs more than one approver (the tool's `approvals_required`)."""
    remember: bool | None = None
    """An approval a `once()` policy asked for: its answer is remembered for the tool for the rest
    of the session (an approval covers later calls, a denial replaces it). None: not remembered."""

    @property
    def deadline(self) -> float | None:
        """`expires_at` as Unix time in seconds, or None when the request never expires."""
        return None if self.expires_at is None else parse_deadline(self.expires_at)

    def option_ids(self) -> list[str]:
        """The offered option ids, in order ([] when there are none)."""
        return [option.id for option in self.options or []]

    @property
    def eve_kind(self) -> EveRequestKind:
        """The kind eve 0.80.1 knows this request by: `tool-approval`, or `question` for every other kind."""
        return "tool-approval" if self.kind == "tool-approval" else "question"

    def to_eve(self) -> EveInputRequest:
        """This request as eve's strict `InputRequest` (what a plain eve client renders)."""
        # Fields of this validated request, narrowed to eve's literals: not validated again.
        return EveInputRequest.trusted(
            request_id=self.request_id,
            kind=self.eve_kind,
            action=self.action,
            prompt=self.prompt,
            display="text" if self.display == "form" else self.display,
            options=self.options,
            allow_freeform=self.allow_freeform,
        )

    def extension(self, eve: EveInputRequest | None = None) -> RequestExtension | None:
        """What eve's shape cannot say about this request, or None when it says it all.

        Args:
            eve: `to_eve()`'s projection, when the caller made it already.
        """
        eve = self.to_eve() if eve is None else eve
        if (
            eve.kind == self.kind
            and eve.display == self.display
            and self.response_schema is None
            and self.edit_schema is None
            and self.expires_at is None
            and self.approvers is None
            and self.approvals_required is None
            and self.remember is None
        ):
            return None
        return RequestExtension.trusted(  # fields of this validated request
            kind=self.kind,
            display=self.display,
            response_schema=self.response_schema,
            edit_schema=self.edit_schema,
            expires_at=self.expires_at,
            approvers=self.approvers,
            approvals_required=self.approvals_required,
            remember=self.remember,
        )

    @classmethod
    def from_eve(cls, request: EveInputRequest, extension: RequestExtension | None = None) -> InputRequest:
        """Rebuild a request from its eve projection and eve-py's extension (if any).

        A `session-limit` request (eve's, never eve-py's) reads as a `question`.
        """
        kind: RequestKind = "tool-approval" if request.kind == "tool-approval" else "question"
        display: Display = request.display or ("select" if request.options else "text")
        schema = edit_schema = expires_at = approvers = required = remember = None
        if extension is not None:
            kind, display, schema = extension.kind, extension.display, extension.response_schema
            edit_schema, expires_at = extension.edit_schema, extension.expires_at
            approvers, required = extension.approvers, extension.approvals_required
            remember = extension.remember
        return cls(
            request_id=request.request_id,
            kind=kind,
            action=request.action,
            prompt=request.prompt,
            display=display,
            options=request.options,
            allow_freeform=request.allow_freeform,
            response_schema=schema,
            edit_schema=edit_schema,
            expires_at=expires_at,
            approvers=approvers,
            approvals_required=required,
            remember=remember,
        )


class EveInputRequest(CamelModel):
    """eve 0.80.1's `InputRequest`, field for field (its zod schema is strict)."""

    request_id: str
    kind: EveRequestKind
    action: ToolCallAction
    prompt: str
    display: EveDisplay | None = None
    options: list[InputOption] | None = None
    allow_freeform: bool | None = None


class RequestExtension(CamelModel):
    """eve-py's part of a request that eve's shape has no field for (`input.requested.data.extensions`)."""

    kind: RequestKind
    display: Display
    response_schema: JsonSchema | None = Field(default=None, alias="schema")
    """JSON Schema the answer's `value` (or `text` holding JSON) must satisfy."""
    edit_schema: JsonSchema | None = None
    """An editable approval's: the schema an approval's `editedInput` must satisfy."""
    expires_at: str | None = None
    """When the request expires unanswered (RFC 3339, UTC); absent: never."""
    approvers: list[str] | None = None
    """An approval's named approvers; absent: anyone who may answer the session (or a policy decides)."""
    approvals_required: int | None = None
    """An approval's quorum, when more than one approver must approve."""
    remember: bool | None = None
    """A `once()` approval: its answer is remembered for the tool for the rest of the session."""


class InputResponse(CamelModel):
    """A person's answer to one input request."""

    request_id: str
    option_id: str | None = None
    """The chosen option's id (for `select` and `confirmation` requests)."""
    text: str | None = None
    """Free text: a freeform answer, or a denial's reason."""
    value: JsonValue | None = None
    """A structured answer; must satisfy the request's `schema`."""
    action: Literal["accept", "decline", "cancel"] | None = None
    """Accept, decline or cancel the request as a whole."""
    edited_input: JsonObject | None = None
    """An approval's edit: the input the tool runs with instead of the model's (editable tools only)."""


def deadline_iso(at: float) -> str:
    """Unix time `at` (seconds) as an `expiresAt` value: RFC 3339, UTC, milliseconds (`...T10:00:00.000Z`)."""
    moment = datetime.fromtimestamp(at, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_deadline(text: str) -> float:
    """An `expiresAt` value (RFC 3339; a naive time counts as UTC) as Unix time in seconds.

    Raises:
        ValueError: `text` is not an RFC 3339 date-time.
    """
    moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - datetime(1970, 1, 1, tzinfo=UTC)) / timedelta(seconds=1)
