"""The AI SDK round of `bench/server_load.py --ai-sdk`: the flow through `POST /ai-sdk/chat`, run by `_frontend_round`.

2 requests per session, as `useChat` sends them: `POST /ai-sdk/chat` with the user message (its
UI message stream, read to `finish`, ends with the picker's open call), then `POST /ai-sdk/chat`
with the messages resent and the call's output in its part (the stream runs the `note` tool and
the answer to `finish`). The final text must be the expected one.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import httpx
import server_load as load  # bench/ is the script's directory, first on sys.path
from _frontend_round import Frontend


async def _chat(client: httpx.AsyncClient, chat_id: str, messages: list[dict[str, Any]]) -> tuple[list[Any], float]:
    """One `useChat` request: its chunks, and the time until the response's headers, in ms."""
    body: dict[str, Any] = {"id": chat_id, "messages": messages, "trigger": "submit-message"}
    if messages[-1]["role"] == "assistant":
        body["messageId"] = messages[-1]["id"]
    started = time.perf_counter()
    chunks: list[Any] = []
    async with client.stream("POST", "/ai-sdk/chat", json=body) as response:
        headers_ms = (time.perf_counter() - started) * 1000
        if response.status_code != 200 or response.headers.get("x-vercel-ai-ui-message-stream") != "v1":
            await response.aread()
            raise load.TurnError(f"POST /ai-sdk/chat: {response.status_code} {response.text[:300]}")
        chunks += [json.loads(line[6:]) async for line in response.aiter_lines() if line.startswith("data: {")]
    return chunks, headers_ms


async def _park(client: httpx.AsyncClient) -> tuple[str, list[dict[str, Any]]]:
    """A new chat whose turn parks on the picker; (chat id, the messages to send with the answer)."""
    chat_id = f"bench-{uuid.uuid4().hex}"
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": load.MESSAGE}]}
    chunks, _ = await _chat(client, chat_id, [user])
    calls = [c for c in chunks if c.get("type") == "tool-input-available"]
    if len(calls) != 1 or chunks[-1] != {"type": "finish", "finishReason": "tool-calls"}:
        raise load.TurnError(f"chat {chat_id} did not park on one call: {[c.get('type') for c in chunks]}")
    part = {"type": "tool-ask_question", "toolCallId": calls[0]["toolCallId"], "input": calls[0]["input"]}
    part |= {"state": "output-available", "output": load.ANSWER}
    assistant = {"id": chunks[0]["messageId"], "role": "assistant", "parts": [{"type": "step-start"}, part]}
    return chat_id, [user, assistant]


async def _answer(client: httpx.AsyncClient, parked: tuple[str, list[dict[str, Any]]]) -> float:
    """Send the picker's output and read the turn to its end; the time until the stream opened, in ms."""
    chat_id, messages = parked
    chunks, headers_ms = await _chat(client, chat_id, messages)
    text = "".join(c["delta"] for c in chunks if c.get("type") == "text-delta")
    if chunks[-1:] != [{"type": "finish", "finishReason": "stop"}] or text != load.EXPECTED:
        raise load.TurnError(f"chat {chat_id} ended with {text!r}: {[c.get('type') for c in chunks]}")
    return headers_ms


AI_SDK = Frontend("ai-sdk", "AI SDK", _park, _answer)
