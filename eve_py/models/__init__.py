"""Models: the `Model` protocol, the provider-neutral message shapes, and the real providers.

`ChatCompletionsModel` speaks the OpenAI Chat Completions format (Vercel AI Gateway, OpenAI and
compatible servers), `AnthropicModel` the Anthropic Messages API; `resolve_model` turns a
model string into one of them.
"""

from eve_py.models.anthropic import AnthropicModel
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
from eve_py.models.openai import ChatCompletionsModel
from eve_py.models.registry import resolve_model
from eve_py.models.retry import RetryPolicy

__all__ = (
    "AnthropicModel",
    "AssistantMessage",
    "ChatCompletionsModel",
    "DeltaListener",
    "Message",
    "Model",
    "ModelDelta",
    "ModelRequest",
    "ModelResponse",
    "ModelToolCall",
    "RetryPolicy",
    "TextPart",
    "ToolCallPart",
    "ToolMessage",
    "ToolResultPart",
    "ToolSpec",
    "UserMessage",
    "resolve_model",
)
