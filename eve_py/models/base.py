"""The `Model` protocol: one async call from a conversation and a tool list to a response."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from eve_py._json import JsonObject, JsonSchema
from eve_py.models.messages import Message

__all__ = ("Model", "ModelRequest", "ModelResponse", "ModelToolCall", "ToolSpec")


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    description: str
    input_schema: JsonSchema


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelRequest:
    """Everything one model step is sent."""

    instructions: str | None
    """The system prompt."""
    messages: Sequence[Message]
    """The conversation, oldest first. Every tool call in it has exactly one result."""
    tools: Sequence[ToolSpec]
    """The tools the model may call."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelToolCall:
    """A tool call in a model's response."""

    id: str
    """The provider's call id; unique within the conversation."""
    name: str
    input: JsonObject


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelResponse:
    """One model step's output."""

    text: str | None = None
    tool_calls: Sequence[ModelToolCall] = field(default_factory=tuple)


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
