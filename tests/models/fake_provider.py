"""A fake model provider: a real HTTP/1.1 server on 127.0.0.1 that speaks both wire formats.

- `POST /v1/chat/completions`: OpenAI Chat Completions, JSON or SSE (`"stream": true`,
  `data: {chunk}` lines, `data: [DONE]`).
- `POST /v1/messages`: Anthropic Messages, JSON or SSE (`message_start`,
  `content_block_start/delta/stop`, `message_delta`, `message_stop`).

Every request body is checked with the provider's own pairing rule (`provider_rules`); a
violation is answered with the provider's 400 error, as the real API would. A valid request is
decoded back into eve-py's neutral messages and handed to a *brain* (e.g. an app's
`MockModel` responder, through `mock_brain`), whose `Reply` is encoded in the same wire format.
`fail_next()` scripts HTTP errors and `drop_next()` dropped connections for the next requests.

HTTP is parsed with `h11` over an anyio TCP listener. The server is used in-process by the
tests (`running_fake_provider()`), and as a separate process by `bench/model_overhead.py`:

```
python -m tests.models.fake_provider --script counter --steps 20   # prints "PORT <n>", serves until killed
python -m tests.models.fake_provider --script app:fixtures/agent-tools-hitl
```

`GET /_stats` answers `{"requests": n, "server_s": seconds}`: the time spent handling model
requests, from the request's last byte to the response's last byte (`POST /_reset` zeroes it).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import h11

from eve_py.models._base import ModelRequest, ToolSpec
from eve_py.protocol.messages import (
    AssistantMessage,
    Message,
    TextPart,
    ToolCallPart,
    ToolMessage,
    ToolResultPart,
    UserMessage,
)
from eve_py.testing import MockModel
from tests.models.provider_rules import ProviderRejection, check_anthropic_body, check_openai_body

__all__ = (
    "Brain",
    "FakeProvider",
    "Received",
    "Reply",
    "ReplyCall",
    "counter_brain",
    "decode_anthropic",
    "decode_openai",
    "mock_brain",
    "running_fake_provider",
)


@dataclass(frozen=True)
class ReplyCall:
    """A tool call the fake model makes; `arguments` is the raw JSON text (it may be broken)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Reply:
    """What the fake model answers."""

    text: str | None = None
    calls: list[ReplyCall] = field(default_factory=list)


Brain = Callable[[ModelRequest, str], Awaitable[Reply]]
"""Decides the reply to a decoded request; the second argument is the wire (`openai`/`anthropic`)."""


@dataclass(frozen=True)
class Received:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class _Fault:
    status: int | None  # None: drop the connection without answering
    headers: dict[str, str]
    body: str


def mock_brain(model: MockModel) -> Brain:
    """A brain that asks a `MockModel` (e.g. an app's `agent/mock_model.py`) for each reply."""

    async def think(request: ModelRequest, wire: str) -> Reply:
        response = await model.request(request)
        prefix = "toolu_" if wire == "anthropic" else "call_"
        calls = [
            ReplyCall(
                id=prefix + "".join(c if c.isalnum() else "_" for c in call.id),
                name=call.name,
                arguments=json.dumps(call.input),
            )
            for call in response.tool_calls
        ]
        return Reply(text=response.text, calls=calls)

    return think


def counter_brain(steps: int) -> Brain:
    """A `steps`-step tool loop: call `add_one` on the last result until `steps - 1` calls were made."""

    async def think(request: ModelRequest, wire: str) -> Reply:
        results = [p for m in request.messages if isinstance(m, ToolMessage) for p in m.content]
        if len(results) >= steps - 1:
            return Reply(text=f"Counted to {len(results)}.")
        last = results[-1].output if results else 0
        value = last.get("value", last) if isinstance(last, dict) else last
        prefix = "toolu_" if wire == "anthropic" else "call_"
        return Reply(
            calls=[ReplyCall(id=f"{prefix}{len(results)}", name="add_one", arguments=json.dumps({"n": value}))]
        )

    return think


# --- wire -> neutral ------------------------------------------------------------------------------


def _output(text: str) -> tuple[Any, bool]:
    """The fake's reading of a tool message: JSON text is data; other text is an error message."""
    try:
        return json.loads(text), False
    except ValueError:
        return text, True


def _result_output(content: str | list[dict[str, Any]]) -> Any:
    """A `tool_result`'s content: its text read by `_output`, or its text and image blocks as content blocks' JSON."""
    if isinstance(content, str):
        return _output(content)[0]
    return [
        {"type": "image", "data": block["source"]["data"], "mimeType": block["source"]["media_type"]}
        if block["type"] == "image"
        else {"type": "text", "text": block["text"]}
        for block in content
    ]


def decode_openai(body: dict[str, Any]) -> ModelRequest:
    """A Chat Completions body as eve-py's neutral request (tool errors guessed: see `_output`)."""
    instructions = None
    messages: list[Message] = []
    names: dict[str, str] = {}
    for message in body["messages"]:
        role = message["role"]
        if role in ("system", "developer"):
            instructions = message["content"]
        elif role == "user":
            content = message["content"]
            if not isinstance(content, str):  # a list of content parts
                content = "".join(part.get("text", "") for part in content)
            messages.append(UserMessage(content=content))
        elif role == "assistant":
            parts: list[TextPart | ToolCallPart] = [TextPart(text=message["content"])] if message.get("content") else []
            for call in message.get("tool_calls") or []:
                names[call["id"]] = call["function"]["name"]
                parts.append(
                    ToolCallPart(
                        tool_call_id=call["id"],
                        tool_name=call["function"]["name"],
                        input=json.loads(call["function"]["arguments"] or "{}"),
                    )
                )
            messages.append(AssistantMessage(content=parts))
        elif role == "tool":
            output, is_error = _output(message["content"])
            part = ToolResultPart(
                tool_call_id=message["tool_call_id"],
                tool_name=names.get(message["tool_call_id"], "?"),
                output=output,
                is_error=is_error,
            )
            if messages and isinstance(messages[-1], ToolMessage):
                messages[-1].content.append(part)
            else:
                messages.append(ToolMessage(content=[part]))
    tools = [
        ToolSpec(
            name=t["function"]["name"],
            description=t["function"].get("description", ""),
            input_schema=t["function"].get("parameters", {}),
        )
        for t in body.get("tools") or []
    ]
    return ModelRequest(instructions=instructions, messages=messages, tools=tools)


def decode_anthropic(body: dict[str, Any]) -> ModelRequest:
    """A Messages API body as eve-py's neutral request."""
    messages: list[Message] = []
    names: dict[str, str] = {}
    for message in body["messages"]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if message["role"] == "assistant":
            parts: list[TextPart | ToolCallPart] = []
            for block in blocks:
                if block["type"] == "text":
                    parts.append(TextPart(text=block["text"]))
                elif block["type"] == "tool_use":
                    names[block["id"]] = block["name"]
                    parts.append(ToolCallPart(tool_call_id=block["id"], tool_name=block["name"], input=block["input"]))
            messages.append(AssistantMessage(content=parts))
            continue
        results = [
            ToolResultPart(
                tool_call_id=block["tool_use_id"],
                tool_name=names.get(block["tool_use_id"], "?"),
                output=_result_output(block.get("content", "")),
                is_error=bool(block.get("is_error")),
            )
            for block in blocks
            if block["type"] == "tool_result"
        ]
        if results:
            messages.append(ToolMessage(content=results))
        messages += [UserMessage(content=block["text"]) for block in blocks if block["type"] == "text"]
    tools = [
        ToolSpec(name=t["name"], description=t["description"], input_schema=t["input_schema"])
        for t in body.get("tools") or []
    ]
    return ModelRequest(instructions=body.get("system"), messages=messages, tools=tools)


# --- neutral -> wire ------------------------------------------------------------------------------


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def openai_completion(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.calls
        ]
    finish = "tool_calls" if reply.calls else "stop"
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def openai_events(reply: Reply, model: str) -> Iterator[str]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        data = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        return f"data: {json.dumps(data)}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    for piece in _pieces(reply.text, 7) if reply.text else []:
        yield chunk({"content": piece})
    for index, call in enumerate(reply.calls):
        first = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        yield chunk({"tool_calls": [first]})
        for piece in _pieces(call.arguments, 9):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, "tool_calls" if reply.calls else "stop")
    yield "data: [DONE]\n\n"


def anthropic_message(reply: Reply, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": json.loads(c.arguments)} for c in reply.calls]
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if reply.calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def anthropic_events(reply: Reply, model: str) -> Iterator[str]:
    def event(kind: str, data: dict[str, Any]) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

    start = {"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": []}
    yield event("message_start", {"message": {**start, "stop_reason": None, "usage": {"input_tokens": 1}}})
    index = 0
    if reply.text:
        yield event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
        yield event("ping", {})
        for piece in _pieces(reply.text, 7):
            yield event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": piece}})
        yield event("content_block_stop", {"index": 0})
        index = 1
    for call in reply.calls:
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        yield event("content_block_start", {"index": index, "content_block": block})
        for piece in ["", *_pieces(call.arguments, 9)]:
            delta = {"type": "input_json_delta", "partial_json": piece}
            yield event("content_block_delta", {"index": index, "delta": delta})
        yield event("content_block_stop", {"index": index})
        index += 1
    stop = "tool_use" if reply.calls else "end_turn"
    yield event("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 1}})
    yield event("message_stop", {})


# --- the server -----------------------------------------------------------------------------------


class FakeProvider:
    """The fake provider server. Start it with `running_fake_provider()` or `serve`.

    Args:
        brain: Decides each reply.
        fragment: When set, every SSE event is written in slices of this many bytes, so the
            client sees events split across reads.
    """

    def __init__(self, brain: Brain, *, fragment: int | None = None) -> None:
        self.brain = brain
        self.fragment = fragment
        self.port = 0
        self.received: list[Received] = []
        self.rejections: list[ProviderRejection] = []
        self.server_s = 0.0
        self.handled = 0
        self._faults: deque[_Fault] = deque()

    @property
    def openai_base_url(self) -> str:
        """Base URL for `ChatCompletionsModel` (`/chat/completions` is appended)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for `AnthropicModel` (`/v1/messages` is appended)."""
        return f"http://127.0.0.1:{self.port}"

    def fail_next(self, status: int, *, body: str = "", headers: dict[str, str] | None = None, times: int = 1) -> None:
        """Answer the next `times` model requests with this status (after the queued faults)."""
        for _ in range(times):
            self._faults.append(_Fault(status, dict(headers or {}), body))

    def drop_next(self, times: int = 1) -> None:
        """Close the connection without answering the next `times` model requests."""
        for _ in range(times):
            self._faults.append(_Fault(None, {}, ""))

    async def serve(self, *, task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED) -> None:
        """Listen on 127.0.0.1 (a free port), report the port, serve until cancelled."""
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
        self.port = int(listener.extra(anyio.abc.SocketAttribute.local_port))
        task_status.started(self.port)
        async with listener:
            await listener.serve(self._connection)

    async def _connection(self, stream: anyio.abc.SocketStream) -> None:
        try:
            await self._serve_connection(stream)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, h11.LocalProtocolError, OSError):
            pass  # the client went away mid-answer

    async def _serve_connection(self, stream: anyio.abc.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        async with stream:
            while True:
                request = await _read_request(conn, stream)
                if request is None:
                    return
                keep = await self._answer(conn, stream, *request)
                if not keep or conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
                    return
                try:
                    conn.start_next_cycle()
                except h11.LocalProtocolError:
                    return

    async def _answer(
        self, conn: h11.Connection, stream: anyio.abc.SocketStream, request: h11.Request, raw: bytes
    ) -> bool:
        path = request.target.decode()
        if path == "/_stats":
            stats = {"requests": self.handled, "server_s": self.server_s}
            await _send_json(conn, stream, 200, stats)
            return True
        if path == "/_reset":
            self.handled, self.server_s = 0, 0.0
            await _send_json(conn, stream, 200, {})
            return True
        started = time.perf_counter()
        try:
            return await self._model_request(conn, stream, request, path, raw)
        finally:
            self.server_s += time.perf_counter() - started
            self.handled += 1

    async def _model_request(
        self, conn: h11.Connection, stream: anyio.abc.SocketStream, request: h11.Request, path: str, raw: bytes
    ) -> bool:
        if path not in ("/v1/chat/completions", "/v1/messages"):
            await _send_json(conn, stream, 404, {"error": {"message": f"no route {path}", "type": "not_found"}})
            return True
        wire = "openai" if path == "/v1/chat/completions" else "anthropic"
        headers = {k.decode().lower(): v.decode() for k, v in request.headers}
        body = json.loads(raw)
        self.received.append(Received(path=path, headers=headers, body=body))
        if self._faults:
            fault = self._faults.popleft()
            if fault.status is None:
                return False
            await _send_raw(conn, stream, fault.status, fault.body.encode(), "application/json", fault.headers)
            return True
        try:
            (check_openai_body if wire == "openai" else check_anthropic_body)(body)
        except ProviderRejection as rejection:
            self.rejections.append(rejection)
            if wire == "openai":
                error = {
                    "message": rejection.message,
                    "type": rejection.error_type,
                    "param": rejection.param,
                    "code": None,
                }
                await _send_json(conn, stream, 400, {"error": error})
            else:
                error = {"type": rejection.error_type, "message": rejection.message}
                await _send_json(conn, stream, 400, {"type": "error", "error": error})
            return True
        decoded = decode_openai(body) if wire == "openai" else decode_anthropic(body)
        reply = await self.brain(decoded, wire)
        model = str(body.get("model"))
        if not body.get("stream"):
            data = openai_completion(reply, model) if wire == "openai" else anthropic_message(reply, model)
            await _send_json(conn, stream, 200, data)
            return True
        response_headers = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache")]
        await stream.send(conn.send(h11.Response(status_code=200, headers=response_headers)))
        events = openai_events(reply, model) if wire == "openai" else anthropic_events(reply, model)
        for text in events:
            piece = text.encode()
            size = self.fragment or len(piece)
            for start in range(0, len(piece), size):
                await stream.send(conn.send(h11.Data(data=piece[start : start + size])))
        await stream.send(conn.send(h11.EndOfMessage()))
        return True


async def _read_request(conn: h11.Connection, stream: anyio.abc.SocketStream) -> tuple[h11.Request, bytes] | None:
    request: h11.Request | None = None
    body = bytearray()
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError:
            return None
        if event is h11.NEED_DATA:
            try:
                data = await stream.receive(65536)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                data = b""
            conn.receive_data(data)
        elif isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            assert request is not None
            return request, bytes(body)
        elif isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
            return None


async def _send_raw(
    conn: h11.Connection,
    stream: anyio.abc.SocketStream,
    status: int,
    data: bytes,
    content_type: str,
    extra: dict[str, str] | None = None,
) -> None:
    headers = [(b"content-type", content_type.encode()), (b"content-length", str(len(data)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    await stream.send(conn.send(h11.Response(status_code=status, headers=headers)))
    await stream.send(conn.send(h11.Data(data=data)))
    await stream.send(conn.send(h11.EndOfMessage()))


async def _send_json(conn: h11.Connection, stream: anyio.abc.SocketStream, status: int, data: Any) -> None:
    await _send_raw(conn, stream, status, json.dumps(data).encode(), "application/json")


@asynccontextmanager
async def running_fake_provider(brain: Brain, *, fragment: int | None = None) -> AsyncIterator[FakeProvider]:
    """Run a `FakeProvider` on 127.0.0.1 for the duration of the block."""
    server = FakeProvider(brain, fragment=fragment)
    async with anyio.create_task_group() as group:
        await group.start(server.serve)
        try:
            yield server
        finally:
            group.cancel_scope.cancel()


def main() -> None:
    """Serve in this process until killed (for benchmarks); prints `PORT <n>` once listening."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", default="counter", help='"counter", or "app:APP_DIR" for the app\'s mock model')
    parser.add_argument("--steps", type=int, default=20, help="model steps of the counter script")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if args.script.startswith("app:"):
        from eve_py.agent import load_mock_model

        mock = load_mock_model(args.script.removeprefix("app:"))
        assert isinstance(mock, MockModel)
        server = FakeProvider(mock_brain(mock))
    else:
        server = FakeProvider(counter_brain(args.steps))
    server.port = args.port

    async def run() -> None:
        async with anyio.create_task_group() as group:
            port = await group.start(server.serve)
            print(f"PORT {port}", flush=True)

    anyio.run(run)


if __name__ == "__main__":
    main()
