"""Models: the `Model` protocol, the provider-neutral message shapes, and the real providers.

`ChatCompletionsModel` speaks the OpenAI Chat Completions format (Vercel AI Gateway, OpenAI and
compatible servers), `AnthropicModel` the Anthropic Messages API; `resolve_model` turns a
model string into one of them.
"""

from eve_py.models._anthropic import AnthropicModel
from eve_py.models._base import (
    DeltaListener,
    Model,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ModelToolCall,
    ModelUsage,
    ToolSpec,
)
from eve_py.models._mock import load_mock_model
from eve_py.models._openai import ChatCompletionsModel
from eve_py.models._registry import resolve_model
from eve_py.models._retry import RetryPolicy
from eve_py.protocol.messages import (
    AssistantMessage,
    Message,
    TextPart,
    ToolCallPart,
    ToolMessage,
    ToolResultPart,
    UserMessage,
)

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
    "ModelUsage",
    "RetryPolicy",
    "TextPart",
    "ToolCallPart",
    "ToolMessage",
    "ToolResultPart",
    "ToolSpec",
    "UserMessage",
    "load_mock_model",
    "resolve_model",
)
