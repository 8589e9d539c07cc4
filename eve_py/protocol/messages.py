"""Provider-neutral conversation messages, exactly as models are sent them.

```
{"role": "user", "content": "..."}
{"role": "assistant", "content": [{"type": "text", "text"}, {"type": "tool-call", "toolCallId", "toolName", "input"}]}
{"role": "tool", "content": [{"type": "tool-result", "toolCallId", "toolName", "output", "isError"}]}
```
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal, TypeAlias

from pydantic import Field, TypeAdapter

from eve_py._camel import CamelModel
from eve_py._json import JsonObject, JsonValue

__all__ = (
    "AssistantMessage",
    "Message",
    "MessagesAdapter",
    "TextPart",
    "ToolCallPart",
    "ToolMessage",
    "ToolResultPart",
    "UserMessage",
    "dump_message",
    "load_messages",
)


class TextPart(CamelModel):
    """Text the assistant wrote."""

    type: Literal["text"] = "text"
    text: str


class ToolCallPart(CamelModel):
    """One tool call the model made."""

    type: Literal["tool-call"] = "tool-call"
    tool_call_id: str
    """The provider's id for the call; its result carries the same id."""
    tool_name: str
    input: JsonObject
    """The call's arguments as the model sent them."""


class ToolResultPart(CamelModel):
    """The one result of one tool call."""

    type: Literal["tool-result"] = "tool-result"
    tool_call_id: str
    tool_name: str
    output: JsonValue
    """The model-facing output: JSON data, or a string explaining an error."""
    is_error: bool = False


class UserMessage(CamelModel):
    """A person's message."""

    role: Literal["user"] = "user"
    content: str


class AssistantMessage(CamelModel):
    """One model step's response: text and/or tool calls."""

    role: Literal["assistant"] = "assistant"
    content: list[Annotated[TextPart | ToolCallPart, Field(discriminator="type")]]
    provider_data: JsonObject | None = None
    """What the provider that wrote this step needs back, verbatim, in later requests (its model
    adapter's key: Anthropic's thinking and server-run blocks, DeepSeek's `reasoning_content`);
    None for most steps. See `ModelResponse.provider_data`."""

    @property
    def text(self) -> str:
        """The text parts joined together ("" when there are none)."""
        return "".join(part.text for part in self.content if isinstance(part, TextPart))

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        """The tool call parts in the order the model emitted them."""
        return [part for part in self.content if isinstance(part, ToolCallPart)]


class ToolMessage(CamelModel):
    """The results of one step's tool calls, one part per call."""

    role: Literal["tool"] = "tool"
    content: list[ToolResultPart]


Message: TypeAlias = Annotated[UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")]
"""Any conversation message, discriminated by `role`."""

MessagesAdapter: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
"""Validates and dumps a whole conversation."""

_MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)


def dump_message(message: Message) -> str:
    """A message as the JSON a store keeps (camelCase keys, unset optional fields left out)."""
    # The message's own serializer: what the union's picks for it, without the union's dispatch.
    return message.__pydantic_serializer__.to_json(message, by_alias=True, exclude_none=True).decode()


def load_messages(rows: Sequence[str]) -> list[Message]:
    """Messages from the JSON `dump_message` made, in one validation.

    Raises:
        pydantic.ValidationError: A row is not such a message.
    """
    return MessagesAdapter.validate_json("[" + ",".join(rows) + "]")
