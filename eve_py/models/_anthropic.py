"""`AnthropicModel`: the native Anthropic Messages API (`POST {base_url}/v1/messages`).

Headers: `x-api-key: <key>`, `anthropic-version: 2023-06-01`, `content-type: application/json`.

Conversion, eve-py → wire:

```
instructions                  top-level "system": instructions
UserMessage(content)          {"role": "user", "content": [{"type": "text", "text": content}]}
AssistantMessage(text, calls) {"role": "assistant", "content": [{"type": "text", "text"},
                               {"type": "tool_use", "id", "name", "input": {...}}, ...]}
ToolMessage(results)          {"role": "user", "content": [{"type": "tool_result", "tool_use_id",
                               "content": "<text>", "is_error": true (errors only)}, ...]}
ToolSpec                      {"name", "description", "input_schema"}
```

A result of content blocks (`eve_py.protocol.content`) is a list of blocks in `content`: text
blocks and text resources as `text` blocks, each image (PNG, JPEG, GIF, WebP) as an `image`
block with a base64 `source`, audio and other blobs as a `text` note naming their type and size:

```
{"type": "tool_result", "tool_use_id": "toolu_...", "content": [{"type": "text", "text": "Rainfall:"},
 {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR..."}}]}
```

Consecutive messages of one role are merged into one message, so a user message that follows
a tool message (the user sent a new message instead of answering a parked question) becomes
text *after* the `tool_result` blocks of the same user message, as the API requires: results
first, then any text.

Wire → eve-py: `text` blocks are joined into the text, each `tool_use` block becomes a
`ModelToolCall`. Streaming events: `message_start`, then per block `content_block_start` /
`content_block_delta` (`text_delta`, `input_json_delta`, `thinking_delta`, `signature_delta`,
`citations_delta`) / `content_block_stop`, then `message_delta` (the `stop_reason`) and
`message_stop`; `ping` is ignored and `error` (e.g. `overloaded_error`) fails the request.

Blocks that are not eve-py's to run or read (`thinking` and `redacted_thinking` with their
signatures, the server-run `server_tool_use` / `mcp_tool_use` and their result blocks, text with
citations) are kept: when a response has any, its whole content, in order, is the step's
`provider_data["anthropic"]["content"]`, and every later request sends that assistant turn back
as it came (its `tool_use` blocks carrying the stored calls' ids and inputs), which is what the
API requires of a tool-result turn after extended thinking.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import httpx
from pydantic import BaseModel, ConfigDict, ValidationError

from eve_py._json import JsonObject, JsonValue, json_problem
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
from eve_py.protocol.messages import (
    AssistantMessage,
    Message,
    ToolCallPart,
    ToolMessage,
    ToolResultPart,
    UserMessage,
)

__all__ = ("ANTHROPIC_BASE_URL", "ANTHROPIC_VERSION", "AnthropicModel", "to_anthropic_messages", "to_anthropic_tools")

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
"""The API root; `/v1/messages` is appended."""
ANTHROPIC_VERSION = "2023-06-01"
"""The `anthropic-version` header sent with every request."""

_TOOL_USE_ID = re.compile(r"[A-Za-z0-9_-]+")
_TOOL_USE_ID_MAX = 64


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Block(_Wire):
    type: str
    text: str | None = None
    id: str | None = None
    name: str | None = None
    input: JsonValue = None


class _Usage(_Wire):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None

    def counts(self, earlier: ModelUsage | None = None) -> ModelUsage:
        """The counts, cache writes and reads added to the input; a count left out keeps `earlier`'s."""
        inputs = [self.input_tokens, self.cache_creation_input_tokens, self.cache_read_input_tokens]
        given = [n for n in inputs if n is not None]
        return ModelUsage(
            input_tokens=sum(given) if given else (earlier.input_tokens if earlier else None),
            output_tokens=self.output_tokens
            if self.output_tokens is not None
            else (earlier.output_tokens if earlier else None),
        )


class _Message(_Wire):
    id: str | None = None
    model: str | None = None
    content: list[_Block] = []
    stop_reason: str | None = None
    usage: _Usage | None = None


class _Delta(_Wire):
    type: str | None = None
    text: str | None = None
    partial_json: str | None = None
    thinking: str | None = None
    signature: str | None = None
    citation: JsonValue = None
    stop_reason: str | None = None


_OWN_BLOCKS = frozenset({"text", "tool_use"})
"""Block types eve-py reads into the step (text and its tool calls); any other is kept verbatim."""


class _Error(_Wire):
    type: str = "error"
    message: str = ""


class _Event(_Wire):
    type: str
    index: int | None = None
    content_block: _Block | None = None
    delta: _Delta | None = None
    error: _Error | None = None
    message: _Message | None = None
    """`message_start`'s message: its id, model and first usage."""
    usage: _Usage | None = None
    """`message_delta`'s usage: the output tokens so far (cumulative)."""


@dataclass
class _Summary:
    """What a stream says about the whole message: from `message_start` and `message_delta`."""

    id: str | None = None
    model: str | None = None
    usage: ModelUsage | None = None
    stop_reason: str | None = None

    def take(self, event: _Event) -> None:
        if event.message is not None:
            self.id, self.model = event.message.id, event.message.model
            if event.message.usage is not None:
                self.usage = event.message.usage.counts()
        if event.usage is not None:
            self.usage = event.usage.counts(self.usage)
        if event.delta is not None and event.delta.stop_reason is not None:
            self.stop_reason = event.delta.stop_reason


@dataclass
class _Pending:
    """A tool_use block being streamed."""

    id: str
    name: str
    partial_json: list[str] = field(default_factory=list)


@dataclass
class _Blocks:
    """A streamed message's content blocks as the API would have sent them whole, in index order."""

    blocks: dict[int, JsonObject] = field(default_factory=dict)
    pieces: dict[tuple[int, str], list[str]] = field(default_factory=dict)
    """Streamed pieces of a block's field (`text`, `thinking`, `signature`, `input` JSON), joined at the end."""

    def start(self, index: int, raw: str) -> None:
        self.blocks[index] = dict(json.loads(raw)["content_block"])

    def delta(self, index: int, delta: _Delta) -> None:
        block = self.blocks.get(index)
        if block is None:
            return
        if delta.type == "citations_delta" and delta.citation is not None:
            cited = block.get("citations")
            block["citations"] = [*(cited if isinstance(cited, list) else []), delta.citation]
            return
        target = _PIECES.get(delta.type or "")
        if target is None:
            return
        piece = getattr(delta, target[1])
        if isinstance(piece, str) and piece:
            self.pieces.setdefault((index, target[0]), []).append(piece)

    def content(self) -> list[JsonValue] | None:
        """Every block, or None when all are text and tool uses (nothing to keep)."""
        if all(block.get("type") in _OWN_BLOCKS for block in self.blocks.values()):
            return None
        for (index, name), pieces in self.pieces.items():
            block = self.blocks[index]
            if name == "input":
                block["input"], _ = parse_arguments("".join(pieces))
            else:
                block[name] = str(block.get(name) or "") + "".join(pieces)
        return [self.blocks[index] for index in sorted(self.blocks)]


_PIECES = {
    "text_delta": ("text", "text"),
    "thinking_delta": ("thinking", "thinking"),
    "signature_delta": ("signature", "signature"),
    "input_json_delta": ("input", "partial_json"),
}
"""A delta type: the block field it extends, and the delta's field holding the piece."""


def _kept(content: list[JsonValue] | None) -> JsonObject | None:
    """A response's `provider_data`: its content blocks, when it has any eve-py does not read."""
    return None if content is None else {"anthropic": {"content": content}}


class AnthropicModel(HTTPModel):
    """A Claude model through the Anthropic Messages API.

    Args:
        model: The model id, e.g. `"claude-sonnet-4-6"`.
        api_key: Sent as `x-api-key`; None sends none (a local fake or proxy).
        base_url: The API root (`/v1/messages` is appended).
        max_tokens: The response length limit the API requires, in tokens.
        client: The `httpx.AsyncClient` to use; None creates one on first use (`aclose()`
            closes it).
        stream: True always streams (SSE), False never does; None (default) streams when the
            request has a delta listener.
        retry: Retry policy for 408/429/5xx/529 and connection errors.
        headers: Extra request headers (e.g. `anthropic-beta`).
        extra_body: Extra request fields, e.g. `{"temperature": 0}`.
        name: The model's label; defaults to `"anthropic:<model>"`.
        key_hint: Where the key came from, quoted by 401/403 errors.
        read_timeout_s: Seconds of silence from the provider after which a request fails (a read
            timeout, retried as a connection error); None: `EVE_MODEL_READ_TIMEOUT_S`, else 300.
            Applies to the client the model makes (a given `client` keeps its own timeouts).
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str = ANTHROPIC_BASE_URL,
        max_tokens: int = 8192,
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
        self.provider = "anthropic"
        self.url = base_url.rstrip("/") + "/v1/messages"
        self.max_tokens = max_tokens
        self.stream = stream
        self._name = name or f"anthropic:{model}"
        self._headers = {"anthropic-version": ANTHROPIC_VERSION, **(headers or {})}
        if api_key:
            self._headers["x-api-key"] = api_key
        self._extra_body = dict(extra_body or {})
        self._http = ProviderHTTP(
            provider="anthropic",
            client=client,
            retry=retry or RetryPolicy(),
            secrets=[api_key] if api_key else [],
            key_hint=key_hint,
            read_timeout_s=read_timeout_s,
        )

    def __repr__(self) -> str:
        return f"AnthropicModel({self.model!r}, url={self.url!r})"

    def build_body(self, request: ModelRequest, *, stream: bool) -> JsonObject:
        """The JSON body sent for `request`."""
        body: JsonObject = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": to_anthropic_messages(request.messages),
        }
        if request.instructions:
            body["system"] = request.instructions
        if request.tools:
            body["tools"] = to_anthropic_tools(request.tools)
        if stream:
            body["stream"] = True
        body.update(self._extra_body)
        return body

    def _parse(self, raw: bytes) -> ModelResponse:
        try:
            message = _Message.model_validate_json(raw)
        except ValidationError as exc:
            raise ModelError(f"anthropic sent a response that is not a message: {exc}") from exc
        kept = None
        if any(block.type not in _OWN_BLOCKS for block in message.content):
            kept = json.loads(raw).get("content")
        text: list[str] = []
        calls: list[ModelToolCall] = []
        for block in message.content:
            if block.type == "text" and block.text:
                text.append(block.text)
            elif block.type == "tool_use":
                if not block.id or not block.name:
                    raise ModelError("anthropic sent a tool_use block without an id or name")
                problem = json_problem(block.input)  # pydantic reads NaN and Infinity in a body
                if problem is None and isinstance(block.input, dict):
                    calls.append(ModelToolCall(id=block.id, name=block.name, input=block.input))
                    continue
                problem = problem or f"expected a JSON object, got {dumps(block.input)[:100]}"
                calls.append(ModelToolCall(id=block.id, name=block.name, input={}, input_error=problem))
        return ModelResponse(
            text="".join(text) or None,
            tool_calls=calls,
            usage=message.usage.counts() if message.usage is not None else None,
            finish_reason=message.stop_reason,
            response_id=message.id,
            response_model=message.model,
            provider_data=_kept(kept),
        )

    async def _read_stream(self, response: httpx.Response, on_delta: DeltaListener | None) -> ModelResponse:
        text: list[str] = []
        calls: list[_Pending] = []
        blocks: dict[int, _Pending | None] = {}  # block index -> its tool call (None: a text or other block)
        whole = _Blocks()
        summary = _Summary()
        finished = False
        async for sse in sse_events(response, provider="anthropic"):
            if not sse.data.strip():
                continue
            try:
                event = _Event.model_validate_json(sse.data)
            except ValidationError as exc:
                raise ModelError(f"anthropic sent a stream event that is not understood: {exc}") from exc
            summary.take(event)
            kind = event.type
            if kind == "content_block_start" and event.content_block is not None:
                block = event.content_block
                index = event.index if event.index is not None else len(blocks)
                whole.start(index, sse.data)
                pending = None
                if block.type == "tool_use":
                    if not block.id or not block.name:
                        raise ModelError("anthropic streamed a tool_use block without an id or name")
                    pending = _Pending(id=block.id, name=block.name)
                    calls.append(pending)
                    if on_delta is not None:
                        await on_delta(ModelDelta(kind="tool-call", call_id=pending.id, tool_name=pending.name))
                elif block.type == "text" and block.text:
                    text.append(block.text)
                blocks[index] = pending
            elif kind == "content_block_delta" and event.delta is not None:
                delta = event.delta
                whole.delta(event.index if event.index is not None else -1, delta)
                if delta.type == "text_delta" and delta.text:
                    text.append(delta.text)
                    if on_delta is not None:
                        await on_delta(ModelDelta(kind="text", text=delta.text))
                elif delta.type == "input_json_delta" and delta.partial_json:
                    index = event.index if event.index is not None else -1
                    if index not in blocks:
                        raise ModelError(f"anthropic streamed tool input for block {event.index}, which never started")
                    if (pending := blocks[index]) is None:
                        continue  # a server-run tool's input (mcp_tool_use, server_tool_use): kept, not run
                    pending.partial_json.append(delta.partial_json)
                    if on_delta is not None:
                        await on_delta(ModelDelta(kind="tool-call", text=delta.partial_json, call_id=pending.id))
            elif kind == "message_delta":
                finished = finished or (event.delta is not None and event.delta.stop_reason is not None)
            elif kind == "message_stop":
                finished = True
                break
            elif kind == "error":
                error = event.error or _Error()
                raise ModelError(f"anthropic reported an error mid-stream: {error.type}: {error.message}")
        if not finished:
            raise ModelConnectionError(
                "The anthropic stream ended before the message was complete", provider="anthropic"
            )
        tool_calls = []
        for call in calls:
            arguments, problem = parse_arguments("".join(call.partial_json))
            tool_calls.append(ModelToolCall(id=call.id, name=call.name, input=arguments, input_error=problem))
        return ModelResponse(
            text="".join(text) or None,
            tool_calls=tool_calls,
            usage=summary.usage,
            finish_reason=summary.stop_reason,
            response_id=summary.id,
            response_model=summary.model,
            provider_data=_kept(whole.content()),
        )


def _tool_use_id(call_id: str) -> str:
    return wire_call_id(call_id, pattern=_TOOL_USE_ID, max_length=_TOOL_USE_ID_MAX, prefix="toolu_eve_")


def to_anthropic_messages(messages: Sequence[Message]) -> list[JsonValue]:
    """The Messages API `messages` array (consecutive same-role messages merged)."""
    wire: list[tuple[str, list[JsonValue]]] = []

    def add(role: str, blocks: list[JsonValue]) -> None:
        if wire and wire[-1][0] == role:
            wire[-1][1].extend(blocks)
        else:
            wire.append((role, blocks))

    # Anthropic refuses blank text blocks ("text content blocks must contain non-whitespace
    # text"), and one stored in the history would fail every later request; they carry nothing.
    for message in messages:
        if isinstance(message, UserMessage):
            if message.content.strip():
                add("user", [{"type": "text", "text": message.content}])
        elif isinstance(message, AssistantMessage):
            blocks = _replayed(message)
            if blocks is None:
                blocks = [{"type": "text", "text": message.text}] if message.text.strip() else []
                blocks.extend(_tool_use(call) for call in message.tool_calls)
            if blocks:
                add("assistant", blocks)
        elif isinstance(message, ToolMessage):
            results: list[JsonValue] = []
            for part in message.content:
                result: JsonObject = {
                    "type": "tool_result",
                    "tool_use_id": _tool_use_id(part.tool_call_id),
                    "content": _result_content(part),
                }
                if part.is_error:
                    result["is_error"] = True
                results.append(result)
            add("user", results)
    return [{"role": role, "content": blocks} for role, blocks in wire]


def _tool_use(call: ToolCallPart) -> JsonValue:
    return {"type": "tool_use", "id": _tool_use_id(call.tool_call_id), "name": call.tool_name, "input": call.input}


def _replayed(message: AssistantMessage) -> list[JsonValue] | None:
    """The step's content blocks as Anthropic sent them (`provider_data`), its `tool_use` blocks
    carrying the stored calls; None when it kept none, or they no longer match its calls."""
    kept = (message.provider_data or {}).get("anthropic")
    content = kept.get("content") if isinstance(kept, dict) else None
    if not isinstance(content, list):
        return None
    calls = iter(message.tool_calls)
    blocks: list[JsonValue] = []
    for block in content:
        if not isinstance(block, dict):
            return None
        if block.get("type") == "tool_use":
            call = next(calls, None)
            if call is None:
                return None
            blocks.append(_tool_use(call))
        elif block.get("type") != "text" or str(block.get("text") or "").strip():  # blank text is refused
            blocks.append(block)
    return blocks if next(calls, None) is None else None


def _result_content(part: ToolResultPart) -> JsonValue:
    """A `tool_result`'s content: the output's text, or its content blocks as text and image blocks."""
    pieces = result_pieces(part)
    blocks: list[JsonValue] = []
    for piece in pieces or ():
        if isinstance(piece, str):
            if piece.strip():  # a blank text block is refused
                blocks.append({"type": "text", "text": piece})
        else:
            source: JsonObject = {"type": "base64", "media_type": piece.mime_type, "data": piece.data}
            blocks.append({"type": "image", "source": source})
    return blocks or output_text(part)


def to_anthropic_tools(tools: Sequence[ToolSpec]) -> list[JsonValue]:
    """The Messages API `tools` array."""
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]
