"""`MockModel`: the deterministic, scripted model for tests, demos and CI.

A responder function sees the request (`MockModelRequest`) and returns either a string (the
assistant's text) or a `MockResponse` with tool calls. Call ids are derived from the
conversation itself, so a new `MockModel` in a new process (resuming a parked session) never
reuses an id already in the history.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

import anyio.lowlevel

from eve_py._json import JsonObject, JsonSchema, JsonValue
from eve_py.errors import ModelError
from eve_py.models import ModelDelta, ModelRequest, ModelResponse, ModelToolCall, ModelUsage
from eve_py.protocol.content import ContentBlock, content_from_json
from eve_py.protocol.messages import AssistantMessage, Message, ToolMessage, UserMessage

__all__ = (
    "MockModel",
    "MockModelRequest",
    "MockResponse",
    "MockTool",
    "MockToolCall",
    "MockToolResult",
    "Responder",
)


@dataclass(frozen=True, kw_only=True, slots=True)
class MockTool:
    """A tool offered to the model."""

    name: str
    description: str
    input_schema: JsonSchema


@dataclass(frozen=True, kw_only=True, slots=True)
class MockToolResult:
    """A tool result already in the conversation."""

    id: str
    """The tool call id."""
    name: str
    """The tool's name."""
    output: JsonValue
    """The output as JSON data (not a string encoding of it)."""
    is_error: bool
    content: Sequence[ContentBlock] | None = None
    """The output's content blocks (text, images, audio, resources) when the tool returned them:
    what a provider adapter sends a model as text and images."""


@dataclass(frozen=True, kw_only=True, slots=True)
class MockModelRequest:
    """What a responder sees: the request a real model would get, plus conveniences.

    The conveniences are read from `messages` when asked for; those about the latest user
    message read only the conversation's tail, so a long session does not slow a responder that
    looks at the current turn.
    """

    messages: Sequence[Message]
    """The conversation exactly as a real model would be sent it."""
    instructions: str | None
    """The system prompt."""
    tools: Sequence[MockTool]
    """The tools offered."""

    @property
    def user_messages(self) -> list[str]:
        """Every user message's text, oldest first."""
        return [m.content for m in self.messages if isinstance(m, UserMessage)]

    @property
    def last_user_message(self) -> str | None:
        """The latest user message's text, or None."""
        for message in reversed(self.messages):
            if isinstance(message, UserMessage):
                return message.content
        return None

    @property
    def tool_results(self) -> list[MockToolResult]:
        """Every tool result in the conversation, oldest first."""
        return _results(self.messages)

    def results_for(self, tool_name: str) -> list[MockToolResult]:
        """The results of calls to `tool_name`, oldest first."""
        return [result for result in self.tool_results if result.name == tool_name]

    @property
    def last_tool_result(self) -> MockToolResult | None:
        """The newest tool result, or None."""
        for message in reversed(self.messages):
            if isinstance(message, ToolMessage) and message.content:
                return _results([message])[-1]
        return None

    @property
    def tool_results_since_last_user_message(self) -> list[MockToolResult]:
        """Tool results that arrived after the latest user message, oldest first."""
        tail: list[Message] = []
        for message in reversed(self.messages):
            if isinstance(message, UserMessage):
                break
            tail.append(message)
        return _results(reversed(tail))


def _results(messages: Iterable[Message]) -> list[MockToolResult]:
    return [
        MockToolResult(
            id=p.tool_call_id,
            name=p.tool_name,
            output=p.output,
            is_error=p.is_error,
            content=content_from_json(p.output),
        )
        for message in messages
        if isinstance(message, ToolMessage)
        for p in message.content
    ]


@dataclass(frozen=True, slots=True)
class MockToolCall:
    """A tool call the mock model makes."""

    name: str
    input: JsonObject = field(default_factory=dict)
    id: str | None = None
    """Leave None to get a call id derived from the conversation."""


@dataclass(frozen=True, kw_only=True, slots=True)
class MockResponse:
    """A scripted response: text, tool calls, or both."""

    text: str | None = None
    tool_calls: Sequence[MockToolCall] = ()
    stream: bool = False
    """Stream the text word by word (`message.appended` events) when someone listens for deltas."""
    usage: ModelUsage | None = None
    """The token counts to report, as a provider would (`ModelResponse.usage`; traced as `gen_ai.usage.*`)."""


Responder: TypeAlias = Callable[[MockModelRequest], "str | MockResponse | Awaitable[str | MockResponse]"]
"""A sync or async function from a request to a response."""


class MockModel:
    """A model whose every step is decided by a Python function.

    Attributes:
        requests: Every request received, oldest first.
    """

    def __init__(self, responder: Responder, *, name: str = "mock") -> None:
        self._responder = responder
        self._name = name
        self.requests: list[MockModelRequest] = []

    @property
    def name(self) -> str:
        """The model's label."""
        return self._name

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Build a `MockModelRequest`, ask the responder and turn its answer into a response.

        Raises:
            ModelError: The responder returned neither text nor tool calls, or a wrong type.
        """
        mock_request = _mock_request(request)
        self.requests.append(mock_request)
        answer = self._responder(mock_request)
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, str):
            answer = MockResponse(text=answer)
        if not isinstance(answer, MockResponse):
            raise ModelError(f"MockModel responder must return str or MockResponse, got {type(answer).__name__}")
        if not answer.text and not answer.tool_calls:
            raise ModelError("MockModel responder returned neither text nor tool calls")
        step = sum(1 for m in request.messages if m.role == "assistant")
        # Derived ids are unique by construction; only ids a responder chose can repeat one.
        chosen = any(call.id is not None for call in answer.tool_calls)
        used = (
            {c.tool_call_id for m in request.messages if isinstance(m, AssistantMessage) for c in m.tool_calls}
            if chosen
            else set()
        )
        calls: list[ModelToolCall] = []
        for index, call in enumerate(answer.tool_calls):
            call_id = call.id or f"mock-call-{step}-{index}"
            base, suffix = call_id, 1
            while call_id in used:
                suffix += 1
                call_id = f"{base}#{suffix}"
            used.add(call_id)
            calls.append(ModelToolCall(id=call_id, name=call.name, input=dict(call.input)))
        if answer.stream and answer.text and request.on_delta is not None:
            for piece in re.findall(r"\S+\s*|\s+", answer.text):
                await request.on_delta(ModelDelta(kind="text", text=piece))
                await anyio.lowlevel.checkpoint()  # let the listener run between pieces, as a network would
        return ModelResponse(text=answer.text, tool_calls=calls, usage=answer.usage)


def _mock_request(request: ModelRequest) -> MockModelRequest:
    return MockModelRequest(
        messages=list(request.messages),
        instructions=request.instructions,
        tools=[MockTool(name=t.name, description=t.description, input_schema=t.input_schema) for t in request.tools],
    )
