"""The AI SDK round of `bench/server_load.py --ai-sdk`: the same flow through `POST /ai-sdk/chat`, against eve's wire.

One server (the current code) is driven both ways, in rounds that alternate: eve's wire round 1,
AI SDK round 1, eve's wire round 2, ... Each round is the flow of `server_load.py` (N sessions
park on the typed picker at once, then all N are answered at once and run to completion), with
one `httpx.AsyncClient` per session:

- **eve's wire**: `server_load._round` as it is (4 requests per session: `POST /session`, its
  stream until parked, `POST /session/{id}` with the answer, its stream until completed);
- **AI SDK**: 2 requests per session, as `useChat` sends them: `POST /ai-sdk/chat` with the
  user message (its UI message stream, read to `finish`, ends with the picker's open call), then
  `POST /ai-sdk/chat` with the messages resent and the call's output in its part (the stream
  runs the `note` tool and the answer to `finish`). The final text must be the expected one.

The AI SDK sends half the requests for the same flow, so requests/s are not compared: the
ratios printed are AI SDK / eve's wire for sessions/s, the per-session latencies and the
server's CPU time per phase.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import httpx
import server_load as load  # bench/ is the script's directory, first on sys.path

# (label, Result field, higher is better)
RATIOS: tuple[tuple[str, str, bool], ...] = (
    ("sessions/s (park + answer)", "sessions_per_s", True),
    ("answer accepted p50 (202 / stream opens)", "answer_post_p50_ms", False),
    ("send + stream until parked p50", "park_p50_ms", False),
    ("answer + stream until completed p50", "complete_p50_ms", False),
    ("server CPU time, park phase", "server_cpu_park_s", False),
    ("server CPU time, answer phase", "server_cpu_answer_s", False),
    ("server RSS with all parked", "server_rss_parked_mib", False),
)


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


async def _answer(client: httpx.AsyncClient, chat_id: str, messages: list[dict[str, Any]]) -> float:
    """Send the picker's output and read the turn to its end; the time until the stream opened, in ms."""
    chunks, headers_ms = await _chat(client, chat_id, messages)
    text = "".join(c["delta"] for c in chunks if c.get("type") == "text-delta")
    if chunks[-1:] != [{"type": "finish", "finishReason": "stop"}] or text != load.EXPECTED:
        raise load.TurnError(f"chat {chat_id} ended with {text!r}: {[c.get('type') for c in chunks]}")
    return headers_ms


async def ai_sdk_round(process: Any, url: str, sessions: int, number: int) -> load.Result:
    """N chats park at once through `POST /ai-sdk/chat`, then all N are answered at once."""
    errors: list[str] = []
    parked: dict[int, tuple[str, list[dict[str, Any]]]] = {}
    park_ms: list[float] = []
    post_ms: list[float] = []
    complete_ms: list[float] = []
    rss_before, _ = load._memory_mib(process.pid)
    clients = [load._client(url) for _ in range(sessions)]
    try:

        async def park(index: int) -> None:
            started = time.perf_counter()
            try:
                with anyio.fail_after(load.TIMEOUT_S):
                    parked[index] = await _park(clients[index])
                park_ms.append((time.perf_counter() - started) * 1000)
            except Exception as exc:
                errors.append(f"ai-sdk chat {index} (park): {type(exc).__name__}: {exc}")

        async def answer(index: int) -> None:
            started = time.perf_counter()
            try:
                with anyio.fail_after(load.TIMEOUT_S):
                    post_ms.append(await _answer(clients[index], *parked[index]))
                complete_ms.append((time.perf_counter() - started) * 1000)
            except Exception as exc:
                errors.append(f"ai-sdk chat {index} (answer): {type(exc).__name__}: {exc}")

        cpu_before, driver_before, begin = load._cpu_s(process.pid), time.process_time(), time.perf_counter()
        async with anyio.create_task_group() as group:
            for index in range(sessions):
                group.start_soon(park, index)
        park_s = time.perf_counter() - begin
        rss_parked, _ = load._memory_mib(process.pid)
        cpu_parked, middle = load._cpu_s(process.pid), time.perf_counter()
        async with anyio.create_task_group() as group:
            for index in list(parked):
                group.start_soon(answer, index)
        answer_s, total_s = time.perf_counter() - middle, time.perf_counter() - begin
        rss_after, hwm = load._memory_mib(process.pid)
        cpu_after, driver_s = load._cpu_s(process.pid), time.process_time() - driver_before
    finally:
        for each in clients:
            await each.aclose()
    for error in errors[:20]:
        print(f"error: {error}", file=sys.stderr)
    requests = len(park_ms) + len(complete_ms)
    return load.Result(
        side="ai-sdk",
        round=number,
        sessions=sessions,
        requests=requests,
        errors=len(errors),
        total_s=round(total_s, 3),
        requests_per_s=round(requests / total_s, 1),
        park_s=round(park_s, 3),
        answer_s=round(answer_s, 3),
        answer_post_p50_ms=round(load._median(post_ms), 2),
        answer_post_p99_ms=round(load._percentile(post_ms, 0.99), 2),
        answer_post_max_ms=round(max(post_ms), 2) if post_ms else float("nan"),
        park_p50_ms=round(load._median(park_ms), 2),
        park_p99_ms=round(load._percentile(park_ms, 0.99), 2),
        complete_p50_ms=round(load._median(complete_ms), 2),
        complete_p99_ms=round(load._percentile(complete_ms, 0.99), 2),
        server_rss_before_mib=round(rss_before, 1),
        server_rss_parked_mib=round(rss_parked, 1),
        server_rss_after_mib=round(rss_after, 1),
        server_hwm_mib=round(hwm, 1),
        server_cpu_park_s=round(cpu_parked - cpu_before, 2),
        server_cpu_answer_s=round(cpu_after - cpu_parked, 2),
        driver_cpu_s=round(driver_s, 2),
    )


def _value(result: load.Result, field: str) -> float:
    return result.sessions / result.total_s if field == "sessions_per_s" else float(getattr(result, field))


def compare_ratios(results: list[load.Result]) -> dict[str, dict[str, float]]:
    """AI SDK / eve's wire for each of `RATIOS`: per round and over all rounds (the mean of the rounds)."""
    wire = [r for r in results if r.side == "eve-wire"]
    sdk = [r for r in results if r.side == "ai-sdk"]
    out: dict[str, dict[str, float]] = {}
    for _, field, _ in RATIOS:
        row = {str(s.round): load._ratio(_value(s, field), _value(w, field)) for s, w in zip(sdk, wire, strict=True)}
        mean_sdk = statistics.fmean(_value(r, field) for r in sdk)
        row["all"] = load._ratio(mean_sdk, statistics.fmean(_value(r, field) for r in wire))
        out[field] = row
    return out


async def compare(side: load.Side, sessions: int, rounds: int) -> list[load.Result]:
    """One server of the current code; rounds alternate between eve's wire and the AI SDK."""
    with tempfile.TemporaryDirectory(prefix="eve-server-load-ai-sdk-") as folder:
        process, url = await load._start_server(side, Path(folder) / "current.db")
        try:
            wire = await load._wire(url, side)
            side = load.replace(side, name="eve-wire", eve_py=load._imported_from(side), wire=wire)
            print(load._describe(side, process.pid), file=sys.stderr)
            await load._warm_up(url, side.wire)
            async with load._client(url) as client:
                for _ in range(5):
                    await _answer(client, *await _park(client))
            results: list[load.Result] = []
            for number in range(1, rounds + 1):
                results.append(await load._round(side, process, url, sessions, number))
                results.append(await ai_sdk_round(process, url, sessions, number))
            return results
        finally:
            await load._stop_server(process)


def report(results: list[load.Result], rounds: int, as_json: bool) -> int:
    """Print the rounds and the AI SDK / eve's wire ratios; 1 if any request failed."""
    table = compare_ratios(results)
    if as_json:
        print(json.dumps({"results": [load.asdict(r) for r in results], "ratios": table}, indent=2, default=str))
    else:
        for result in results:
            load._print_result(result)
        columns = [*(f"round {n}" for n in range(1, rounds + 1)), "all"]
        width = max(len(label) for label, _, _ in RATIOS) + 2
        print("\nAI SDK / eve's wire" + " " * (width - 19) + "".join(f"{c:>10}" for c in columns))
        for label, field, higher in RATIOS:
            cells = "".join(f"{table[field][key]:>10.3f}" for key in [*map(str, range(1, rounds + 1)), "all"])
            print(f"{label:<{width}}{cells}   ({'higher' if higher else 'lower'} is better)")
    return 1 if any(r.errors for r in results) else 0
