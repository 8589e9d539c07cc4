"""Input requests (what a parked call asks a person) and input responses (their answers).

Wire shapes (JSON, camelCase):

```
InputRequest  {requestId, kind: "question"|"client-tool"|"tool-approval"|"elicitation",
               action: {kind: "tool-call", callId, toolName, input},
               prompt, display: "text"|"select"|"confirmation"|"form",
               options?: [{id, label, description?, style?}], allowFreeform?, schema?}
InputResponse {requestId, optionId?, text?, value?, action?: "accept"|"decline"|"cancel"}
```
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import Field

from eve_py._json import JsonObject, JsonSchema, JsonValue
from eve_py._wire import WireModel

__all__ = (
    "Display",
    "InputOption",
    "InputRequest",
    "InputResponse",
    "RequestKind",
    "ToolCallAction",
)

RequestKind: TypeAlias = Literal["question", "client-tool", "tool-approval", "elicitation"]
"""`question`: an `ask_question` call (built-in or override); `client-tool`: any other
client-resolved tool; `tool-approval`: a call waiting for approval; `elicitation`: a resolver's question."""

Display: TypeAlias = Literal["text", "select", "confirmation", "form"]
"""How a client should render the request."""


class InputOption(WireModel):
    """One choice offered to the person."""

    id: str
    label: str
    description: str | None = None
    style: Literal["primary", "danger", "default"] | None = None


class ToolCallAction(WireModel):
    """The tool call a request is about."""

    kind: Literal["tool-call"] = "tool-call"
    call_id: str
    tool_name: str
    input: JsonObject


class InputRequest(WireModel):
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

    def option_ids(self) -> list[str]:
        """The offered option ids, in order ([] when there are none)."""
        return [option.id for option in self.options or []]


class InputResponse(WireModel):
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
