"""`ChatCompletionsModel`: the OpenAI Chat Completions wire format, for the AI Gateway and compatibles.

One class serves every server that speaks `POST {base_url}/chat/completions`: Vercel AI
Gateway (the default, `https://ai-gateway.vercel.sh/v1`, model ids like
`"anthropic/claude-sonnet-4.6"`), OpenAI itself (`https://api.openai.com/v1`), and OpenRouter,
vLLM, Ollama, LiteLLM or any other compatible server (give its `base_url`).

Conversion, eve-py → wire:

```
instructions                        {"role": "system", "content": instructions}   (first)
UserMessage(content)                {"role": "user", "content": content}
AssistantMessage(text, calls)       {"role": "assistant", "content": text | null,
                                     "tool_calls": [{"id", "type": "function",
                                                     "function": {"name", "arguments": "<JSON text>"}}]}
ToolMessage(results)                one {"role": "tool", "tool_call_id", "content": "<text>"} per result
ToolSpec(name, description, schema) {"type": "function", "function": {"name", "description", "parameters"}}
```

A tool output that is not a string is sent as its JSON text. Chat Completions has no error
flag on tool messages, so an error result is sent as its message (eve-py's error texts say
what went wrong, e.g. `Error executing tool refund: ...`).

A result of content blocks (`eve_py.protocol.content`) is sent as text: text blocks and text
resources as they are, each image as a line `[Image 1: image/png, in the user message after
these tool results]`, audio and other blobs as a note naming their type and size. A `tool`
message takes text only (`ChatCompletionToolMessageParam.content` is text or text parts), so
the images (PNG, JPEG, GIF, WebP) follow the step's tool messages in one `user` message, each
an `image_url` part with a `data:` URL after a text part naming it:

```
{"role": "user", "content": [{"type": "text", "text": "Image 1, from the chart result:"},
                             {"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}]}
```

Wire → eve-py: `choices[0].message.content` is the text; each `tool_calls[i]` becomes a
`ModelToolCall` whose `arguments` text is parsed (text that is not a JSON object leaves
`input_error` set, and the harness answers the call with an error result). Streaming chunks
carry `choices[0].delta.content` pieces and `delta.tool_calls[i]` pieces keyed by `index`
(the first piece has the `id` and `function.name`, later ones `function.arguments`); the
stream ends with `data: [DONE]`.

DeepSeek's `reasoning_content` (whole, or in `delta.reasoning_content` pieces) is kept with the
step (`provider_data["openai"]`) and sent back on an assistant turn that called tools, as
DeepSeek's thinking mode requires.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import httpx
from pydantic import BaseModel, ConfigDict, ValidationError

from eve_py._json import JsonObject, JsonValue
from eve_py.errors import ModelConnectionError, ModelError
from eve_py.models._base import (
    DeltaListener,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ModelToolCall,
    ModelUsage,
    ToolSpec,
)
from eve_py.models._http import HTTPModel, ProviderHTTP
from eve_py.models._retry import RetryPolicy
from eve_py.models._shared import dumps, output_text, parse_arguments, result_pieces, wire_call_id
from eve_py.models._sse import sse_events
from eve_py.protocol.messages import AssistantMessage, Message, ToolMessage, UserMessage

__all__ = ("ChatCompletionsModel", "GATEWAY_BASE_URL", "OPENAI_BASE_URL", "to_chat_messages", "to_chat_tools")

GATEWAY_BASE_URL = "https://ai-gateway.vercel.sh/v1"
"""Vercel AI Gateway's OpenAI-compatible endpoint."""
OPENAI_BASE_URL = "https://api.openai.com/v1"
"""OpenAI's own endpoint."""

_CALL_ID = re.compile(r"[A-Za-z0-9_.:\-]+")
_CALL_ID_MAX = 40  # OpenAI rejects longer tool call ids


class _Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Function(_Strict):
    name: str | None = None
    arguments: str | None = None


class _ToolCall(_Strict):
    index: int | None = None
    id: str | None = None
    function: _Function | None = None


class _Message(_Strict):
    content: str | None = None
    refusal: str | None = None
    reasoning_content: str | None = None
    """DeepSeek's (and compatible servers') chain of thought, beside `content`."""
    tool_calls: list[_ToolCall] | None = None


class _Choice(_Strict):
    index: int = 0
    message: _Message | None = None
    delta: _Message | None = None
    finish_reason: str | None = None


class _Usage(_Strict):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class _Completion(_Strict):
    """A `chat.completion` object, or a `chat.completion.chunk` when streaming."""

    id: str | None = None
    model: str | None = None
    choices: list[_Choice] = []
    usage: _Usage | None = None
    error: JsonValue = None

    def usage_counts(self) -> ModelUsage | None:
        """The token counts, when this object has them (a stream's last chunk, when asked for)."""
        usage = self.usage
        return (
            None
            if usage is None
            else ModelUsage(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens)
        )


@dataclass
class _PendingCall:
    id: str
    name: str
    arguments: list[str] = field(default_factory=list)


class ChatCompletionsModel(HTTPModel):
    """A model behind an OpenAI-compatible `POST /chat/completions` endpoint.

    Args:
        model: The provider's model id, e.g. `"anthropic/claude-sonnet-4.6"` on the gateway,
            `"gpt-5"` on OpenAI, `"llama3.2"` on Ollama.
        base_url: The API root; `/chat/completions` is appended.
        api_key: Sent as `Authorization: Bearer <key>`; None sends no key (local servers).
        provider: Label for errors and the default name: `"gateway"`, `"openai"`, ...
        client: The `httpx.AsyncClient` to use; None creates one on first use (`aclose()`
            closes it).
        stream: True always streams (SSE), False never does; None (default) streams when the
            request has a delta listener (`ModelRequest.on_delta`), i.e. when someone watches.
        retry: Retry policy for 408/429/5xx and connection errors (see `eve_py.models._retry`).
        headers: Extra request headers.
        extra_body: Extra request fields, e.g. `{"temperature": 0, "max_completion_tokens": 800}`.
        name: The model's label in logs and events; defaults to `model` on the gateway and
            `"<provider>:<model>"` elsewhere.
        key_hint: Where the key came from, quoted by 401/403 errors (e.g. `"AI_GATEWAY_API_KEY"`).
        read_timeout_s: Seconds of silence from the provider after which a request fails (a read
            timeout, retried as a connection error); None: `EVE_MODEL_READ_TIMEOUT_S`, else 300.
            Applies to the client the model makes (a given `client` keeps its own timeouts).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = GATEWAY_BASE_URL,
        api_key: str | None = None,
        provider: str = "gateway",
        client: httpx.AsyncClient | None = None,
        stream: bool | None = None,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        extra_body: JsonObject | None = None,
        name: str | None = None,
        key_hint: str | None = None,
        read_timeout_s: float | None = None,
    ) -> None:
        self.model = model
        self.provider = provider
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.stream = stream
        self._name = name or (model if provider == "gateway" else f"{provider}:{model}")
        self._headers = dict(headers or {})
        if api_key:
            self._headers["authorization"] = f"Bearer {api_key}"
        self._extra_body = dict(extra_body or {})
        self._http = ProviderHTTP(
            provider=provider,
            client=client,
            retry=retry or RetryPolicy(),
            secrets=[api_key] if api_key else [],
            key_hint=key_hint,
            read_timeout_s=read_timeout_s,
        )

    def __repr__(self) -> str:
        return f"ChatCompletionsModel({self.model!r}, provider={self.provider!r}, url={self.url!r})"

    def build_body(self, request: ModelRequest, *, stream: bool) -> JsonObject:
        """The JSON body sent for `request`."""
        messages = to_chat_messages(request.instructions, request.messages, url=self.url)
        body: JsonObject = {"model": self.model, "messages": messages}
        if request.tools:
            body["tools"] = to_chat_tools(request.tools)
        if stream:
            body["stream"] = True
        body.update(self._extra_body)
        return body

    def _parse(self, raw: bytes) -> ModelResponse:
        try:
            completion = _Completion.model_validate_json(raw)
        except ValidationError as exc:
            raise ModelError(f"{self.provider} sent a response that is not a chat completion: {exc}") from exc
        if completion.error is not None:
            raise ModelError(f"{self.provider} answered with an error: {dumps(completion.error)[:500]}")
        if not completion.choices or completion.choices[0].message is None:
            raise ModelError(f"{self.provider} sent a chat completion without choices")
        message = completion.choices[0].message
        calls = []
        for call in message.tool_calls or []:
            function = call.function or _Function()
            if not function.name:
                raise ModelError(f"{self.provider} sent a tool call without a function name")
            arguments, problem = parse_arguments(function.arguments or "")
            calls.append(
                ModelToolCall(id=call.id or _new_call_id(), name=function.name, input=arguments, input_error=problem)
            )
        return ModelResponse(
            text=message.content or message.refusal or None,
            tool_calls=calls,
            provider_data=_reasoning(message.reasoning_content, self.url),
            usage=completion.usage_counts(),
            finish_reason=completion.choices[0].finish_reason,
            response_id=completion.id,
            response_model=completion.model,
        )

    async def _read_stream(self, response: httpx.Response, on_delta: DeltaListener | None) -> ModelResponse:
        text: list[str] = []
        reasoning: list[str] = []
        calls: list[_PendingCall] = []
        slots: dict[int, int] = {}  # the chunk's tool call index -> position in `calls`
        finished = False
        head = _Completion()  # the id, model and usage seen so far
        reason: str | None = None
        async for event in sse_events(response, provider=self.provider):
            data = event.data
            if data == "[DONE]":
                finished = True
                break
            if not data.strip():
                continue
            try:
                chunk = _Completion.model_validate_json(data)
            except ValidationError as exc:
                raise ModelError(f"{self.provider} sent a stream chunk that is not a completion chunk: {exc}") from exc
            if chunk.error is not None:
                raise ModelError(f"{self.provider} reported an error mid-stream: {dumps(chunk.error)[:500]}")
            head = _Completion(id=head.id or chunk.id, model=head.model or chunk.model, usage=chunk.usage or head.usage)
            for choice in chunk.choices:
                if choice.index != 0:
                    continue
                finished = finished or choice.finish_reason is not None
                reason = choice.finish_reason or reason
                delta = choice.delta or choice.message
                if delta is None:
                    continue
                if delta.reasoning_content:
                    reasoning.append(delta.reasoning_content)
                piece = delta.content or delta.refusal
                if piece:
                    text.append(piece)
                    if on_delta is not None:
                        await on_delta(ModelDelta(kind="text", text=piece))
                for part in delta.tool_calls or []:
                    await self._tool_call_delta(part, calls, slots, on_delta)
        if not finished:
            raise ModelConnectionError(
                f"The {self.provider} stream ended before the response was complete", provider=self.provider
            )
        tool_calls = []
        for call in calls:
            arguments, problem = parse_arguments("".join(call.arguments))
            tool_calls.append(ModelToolCall(id=call.id, name=call.name, input=arguments, input_error=problem))
        return ModelResponse(
            text="".join(text) or None,
            tool_calls=tool_calls,
            provider_data=_reasoning("".join(reasoning), self.url),
            usage=head.usage_counts(),
            finish_reason=reason,
            response_id=head.id,
            response_model=head.model,
        )

    async def _tool_call_delta(
        self, part: _ToolCall, calls: list[_PendingCall], slots: dict[int, int], on_delta: DeltaListener | None
    ) -> None:
        index = part.index if part.index is not None else len(calls)
        function = part.function or _Function()
        position = slots.get(index)
        # Some servers (Ollama) reuse index 0 for every call of a parallel batch; a new id opens a new call.
        if position is None or (part.id and calls[position].id != part.id):
            if not function.name:
                raise ModelError(f"{self.provider} streamed arguments for tool call {index} before its name")
            position = slots[index] = len(calls)
            calls.append(_PendingCall(id=part.id or _new_call_id(), name=function.name))
            first = True
        else:
            first = False
        call = calls[position]
        piece = function.arguments or ""
        if piece:
            call.arguments.append(piece)
        if on_delta is not None and (first or piece):
            await on_delta(
                ModelDelta(kind="tool-call", text=piece, call_id=call.id, tool_name=call.name if first else None)
            )


def _new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _call_id(call_id: str) -> str:
    return wire_call_id(call_id, pattern=_CALL_ID, max_length=_CALL_ID_MAX, prefix="call_")


def _reasoning(text: str | None, url: str) -> JsonObject | None:
    """A step's reasoning, kept with the server that wrote it (`url`): only that server takes it back."""
    return {"openai": {"reasoning_content": text, "url": url}} if text else None


def _reasoning_of(message: AssistantMessage, url: str) -> str | None:
    kept = (message.provider_data or {}).get("openai")
    if not isinstance(kept, dict) or kept.get("url") != url:
        return None  # another server's (or none): some refuse the field (400), so it is not sent on
    reasoning = kept.get("reasoning_content")
    return reasoning if isinstance(reasoning, str) else None


def to_chat_messages(
    instructions: str | None, messages: Sequence[Message], *, url: str | None = None
) -> list[JsonValue]:
    """The Chat Completions `messages` array for a conversation (system prompt first).

    `url`: the endpoint the array is for; a tool-calling step's `reasoning_content` goes back only
    to the server that wrote it (None: to none).
    """
    wire: list[JsonValue] = []
    if instructions:
        wire.append({"role": "system", "content": instructions})
    for message in messages:
        if isinstance(message, UserMessage):
            wire.append({"role": "user", "content": message.content})
        elif isinstance(message, AssistantMessage):
            entry: JsonObject = {"role": "assistant", "content": message.text or None}
            calls = message.tool_calls
            if calls:
                entry["tool_calls"] = [
                    {
                        "id": _call_id(call.tool_call_id),
                        "type": "function",
                        "function": {"name": call.tool_name, "arguments": dumps(call.input)},
                    }
                    for call in calls
                ]
                # DeepSeek's thinking mode refuses (400) a conversation whose tool-calling turns
                # lost their reasoning; a turn without calls needs none (DeepSeek ignores it).
                if url is not None and (reasoning := _reasoning_of(message, url)) is not None:
                    entry["reasoning_content"] = reasoning
            wire.append(entry)
        elif isinstance(message, ToolMessage):
            wire.extend(_tool_messages(message))
    return wire


def _tool_messages(message: ToolMessage) -> list[JsonValue]:
    """One `tool` message per result, then one `user` message holding the results' images, if any."""
    wire: list[JsonValue] = []
    images: list[JsonValue] = []
    for part in message.content:
        pieces = result_pieces(part)
        if pieces is None:
            text = output_text(part)
        else:
            lines = []
            for piece in pieces:
                if isinstance(piece, str):
                    lines.append(piece)
                    continue
                label = f"Image {len(images) // 2 + 1}"
                lines.append(f"[{label}: {piece.mime_type}, in the user message after these tool results]")
                url = f"data:{piece.mime_type};base64,{piece.data}"
                images.append({"type": "text", "text": f"{label}, from the {part.tool_name} result:"})
                images.append({"type": "image_url", "image_url": {"url": url}})
            text = "\n".join(lines)
        wire.append({"role": "tool", "tool_call_id": _call_id(part.tool_call_id), "content": text})
    if images:
        wire.append({"role": "user", "content": images})
    return wire


def to_chat_tools(tools: Sequence[ToolSpec]) -> list[JsonValue]:
    """The Chat Completions `tools` array."""
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
        for t in tools
    ]
