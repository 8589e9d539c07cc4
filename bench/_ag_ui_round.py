"""The AG-UI round of `bench/server_load.py --ag-ui`: the flow through `POST /ag-ui`, run by `_frontend_round`.

2 requests per session, as `@ag-ui/client`'s `HttpAgent` sends them: `POST /ag-ui` with the
user message (its event stream, read to `RUN_FINISHED`, ends with the `interrupt` outcome: one
interrupt, the picker), then `POST /ag-ui` with the conversation resent (the user message and
the assistant message holding the picker's call, as the client assembled it from the stream)
and a `resume` entry answering the interrupt (the stream runs the `note` tool and the answer to
`RUN_FINISHED`). The final text must be the expected one.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import httpx
import server_load as load  # bench/ is the script's directory, first on sys.path
from _frontend_round import Frontend


async def _run(client: httpx.AsyncClient, body: dict[str, Any]) -> tuple[list[Any], float]:
    """One AG-UI run: its events, and the time until the response's headers, in ms."""
    started = time.perf_counter()
    events: list[Any] = []
    async with client.stream("POST", "/ag-ui", json=body, headers={"accept": "text/event-stream"}) as response:
        headers_ms = (time.perf_counter() - started) * 1000
        if response.status_code != 200:
            await response.aread()
            raise load.TurnError(f"POST /ag-ui: {response.status_code} {response.text[:300]}")
        events += [json.loads(line[6:]) async for line in response.aiter_lines() if line.startswith("data: {")]
    return events, headers_ms


def _assistant(events: list[Any]) -> dict[str, Any]:
    """The assistant message with the tool calls a client assembles from the run's `TOOL_CALL_*` events."""
    calls: dict[str, dict[str, Any]] = {}
    parent = None
    for event in events:
        if event["type"] == "TOOL_CALL_START":
            calls[event["toolCallId"]] = {
                "id": event["toolCallId"],
                "type": "function",
                "function": {"name": event["toolCallName"], "arguments": ""},
            }
            parent = event.get("parentMessageId")
        elif event["type"] == "TOOL_CALL_ARGS":
            calls[event["toolCallId"]]["function"]["arguments"] += event["delta"]
    return {"id": parent, "role": "assistant", "toolCalls": list(calls.values())}


async def _park(client: httpx.AsyncClient) -> tuple[str, list[dict[str, Any]], str]:
    """A new thread whose run ends with the picker's interrupt; (thread id, the messages, the interrupt id)."""
    thread_id = f"bench-{uuid.uuid4().hex}"
    user = {"id": "u1", "role": "user", "content": load.MESSAGE}
    body = {"threadId": thread_id, "runId": uuid.uuid4().hex, "messages": [user], "tools": [], "context": []}
    events, _ = await _run(client, body | {"state": {}, "forwardedProps": {}})
    last = events[-1] if events else {"type": None}
    outcome = last.get("outcome") or {}
    interrupts = outcome.get("interrupts", [])
    if last["type"] != "RUN_FINISHED" or outcome.get("type") != "interrupt" or len(interrupts) != 1:
        raise load.TurnError(f"thread {thread_id} did not park on one interrupt: {[e['type'] for e in events]}")
    return thread_id, [user, _assistant(events)], interrupts[0]["id"]


async def _answer(client: httpx.AsyncClient, parked: tuple[str, list[dict[str, Any]], str]) -> float:
    """Resume the picker's interrupt and read the run to its end; the time until the stream opened, in ms."""
    thread_id, messages, interrupt_id = parked
    resume = [{"interruptId": interrupt_id, "status": "resolved", "payload": load.ANSWER}]
    body = {"threadId": thread_id, "runId": uuid.uuid4().hex, "messages": messages, "tools": [], "context": []}
    events, headers_ms = await _run(client, body | {"state": {}, "forwardedProps": {}, "resume": resume})
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    last = events[-1] if events else {"type": None}
    if last["type"] != "RUN_FINISHED" or last.get("outcome") or text != load.EXPECTED:
        raise load.TurnError(f"thread {thread_id} ended with {text!r}: {[e['type'] for e in events]}")
    return headers_ms


AG_UI = Frontend("ag-ui", "AG-UI", _park, _answer)
