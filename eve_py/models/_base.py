"""The `Model` protocol: one async call from a conversation and a tool list to a response."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from eve_py._json import JsonObject, JsonSchema
from eve_py.protocol.messages import Message

__all__ = (
    "DeltaListener",
    "Model",
    "ModelDelta",
    "ModelRequest",
    "ModelResponse",
    "ModelToolCall",
    "ModelUsage",
    "ToolSpec",
)


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    description: str
    input_schema: JsonSchema


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelDelta:
    """A piece of a response while it streams in (text, or a tool call's arguments)."""

    kind: Literal["text", "tool-call"]
    text: str = ""
    """New text (kind `text`) or new argument JSON characters (kind `tool-call`)."""
    call_id: str | None = None
    """The tool call the arguments belong to (kind `tool-call`)."""
    tool_name: str | None = None
    """The tool's name, on the first delta of a call."""


DeltaListener = Callable[[ModelDelta], Awaitable[None]]
"""Receives deltas as a streaming model produces them."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelRequest:
    """Everything one model step is sent."""

    instructions: str | None
    """The system prompt."""
    messages: Sequence[Message]
    """The conversation, oldest first. Every tool call in it has exactly one result."""
    tools: Sequence[ToolSpec]
    """The tools the model may call."""
    on_delta: DeltaListener | None = None
    """Where a streaming model reports deltas; None when nobody listens."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelToolCall:
    """A tool call in a model's response."""

    id: str
    """The provider's call id; unique within the conversation."""
    name: str
    input: JsonObject
    """The parsed arguments ({} when they could not be parsed)."""
    input_error: str | None = None
    """Why the provider's argument text is not a JSON object, when it is not; the call then gets
    an error result telling the model, and `input` is {}."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelUsage:
    """The tokens one model call used, as the provider counted them."""

    input_tokens: int | None = None
    """Tokens of the prompt, cached ones included (Anthropic's cache reads and writes are added in)."""
    output_tokens: int | None = None
    """Tokens the model generated."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelResponse:
    """One model step's output."""

    text: str | None = None
    tool_calls: Sequence[ModelToolCall] = field(default_factory=tuple)
    usage: ModelUsage | None = None
    """Token counts, when the provider reported them (a streamed chat completion reports them only
    when asked: `extra_body={"stream_options": {"include_usage": True}}`)."""
    finish_reason: str | None = None
    """Why the model stopped, in the provider's words (`stop`, `tool_calls`, `length`; Anthropic's
    `end_turn`, `tool_use`, `max_tokens`), when it said."""
    response_id: str | None = None
    """The provider's id for this response (`chatcmpl-...`, `msg_...`), when it gave one."""
    response_model: str | None = None
    """The model that answered, as the provider names it (may be more specific than the one asked for)."""
    provider_data: JsonObject | None = None
    """What the provider sent that it needs back, verbatim, in later requests, keyed by the adapter
    that reads it: `{"anthropic": {"content": [...]}}` (every content block, thinking and server-run
    blocks included, in order), `{"openai": {"reasoning_content": "..."}}`. Kept in the stored
    conversation (`AssistantMessage.provider_data`); None when there is nothing to keep."""


@runtime_checkable
class Model(Protocol):
    """Anything that can take one model step."""

    @property
    def name(self) -> str:
        """A label for logs and events, e.g. `"mock"` or `"anthropic/claude-sonnet-4.6"`."""
        ...

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Run one model step.

        Raises:
            ModelError: The provider failed or answered with something unusable.
        """
        ...
