"""Models: the `Model` protocol and the provider-neutral message shapes."""

from eve_py.models.base import (
    DeltaListener,
    Model,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ModelToolCall,
    ToolSpec,
)
from eve_py.models.messages import (
    AssistantMessage,
    Message,
    TextPart,
    ToolCallPart,
    ToolMessage,
    ToolResultPart,
    UserMessage,
)

__all__ = (
    "AssistantMessage",
    "DeltaListener",
    "Message",
    "Model",
    "ModelDelta",
    "ModelRequest",
    "ModelResponse",
    "ModelToolCall",
    "TextPart",
    "ToolCallPart",
    "ToolMessage",
    "ToolResultPart",
    "ToolSpec",
    "UserMessage",
)
