"""Server load benchmark: N concurrent sessions park and are answered over HTTP against `eve-py serve`.

Run by hand (not part of the test suite):

```
.venv/bin/python bench/server_load.py                  # N=200 concurrent sessions
.venv/bin/python bench/server_load.py --sessions 500
.venv/bin/python bench/server_load.py --json
```

It starts `eve-py serve fixtures/agent-tools-hitl --model mock --port 0 --store TMP/sessions.db`
as a child process on 127.0.0.1 (with a bearer token, so authentication is part of every
request), then drives it with `eve_py.client.Client` on one shared httpx connection pool:

1. **Park**: all N sessions at once: `POST /session {message: "help me pick a template"}`,
   then `GET .../stream?startIndex=...` until the turn parks on the typed picker.
2. With all N parked, the server's memory is read from `/proc/PID/status` (VmRSS, VmHWM).
3. **Answer**: all N at once: `POST /session/{id} {inputResponses: [{requestId, value:
   {pickedIds: ["tpl_blue"]}}]}` (timed until the `202`), then the stream until the turn
   completes (the `note` tool runs, the model answers).

Four HTTP requests per session. Five sessions, one at a time, warm the server up first. The
whole thing runs `--rounds` times (default 2) on the same server with new clients: the first
round also pays one-off costs (worker threads, allocator arenas); the second shows what N more
sessions cost. Any error (a non-2xx answer, a broken stream, a turn that does not end as
expected) is counted, and the run exits with status 1 if there was one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import anyio
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream

from eve_py.client import Client

REPO = Path(__file__).resolve().parent.parent
APP = REPO / "fixtures" / "agent-tools-hitl"
TOKEN = "bench-token-server-load"
MESSAGE = "help me pick a template"
ANSWER = {"pickedIds": ["tpl_blue"]}
EXPECTED = "Recorded your pick: tpl_blue."


@dataclass(frozen=True, kw_only=True)
class Result:
    """One round's numbers."""

    round: int
    sessions: int
    requests: int
    errors: int
    total_s: float
    requests_per_s: float
    park_s: float
    answer_s: float
    answer_post_p50_ms: float
    answer_post_p99_ms: float
    answer_post_max_ms: float
    park_p50_ms: float
    park_p99_ms: float
    complete_p50_ms: float
    complete_p99_ms: float
    server_rss_before_mib: float
    server_rss_parked_mib: float
    server_rss_after_mib: float
    server_hwm_mib: float


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _memory_mib(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process, in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


async def _start_server(store: Path) -> tuple[Process, str]:
    env = {**os.environ, "EVE_API_TOKEN": TOKEN}
    command = [sys.executable, "-m", "eve_py", "serve", str(APP), "--model", "mock", "--port", "0"]
    process = await anyio.open_process(
        [*command, "--store", str(store), "--log-level", "warning"], cwd=REPO, env=env, stderr=None
    )
    assert process.stdout is not None
    seen = ""
    with anyio.fail_after(60):
        async for chunk in TextReceiveStream(process.stdout):
            seen += chunk
            for line in seen.splitlines():
                if line.startswith("listening on "):
                    return process, line.split()[2].rstrip("/")
    raise RuntimeError(f"eve-py serve did not start: {seen!r}")


async def run(sessions: int, rounds: int) -> list[Result]:
    """Start the server, run the rounds, stop the server."""
    with tempfile.TemporaryDirectory(prefix="eve-server-load-") as folder:
        process, url = await _start_server(Path(folder) / "sessions.db")
        try:
            await _warm_up(url)
            return [await _round(process, url, sessions, number) for number in range(1, rounds + 1)]
        finally:
            process.terminate()
            with anyio.fail_after(30):
                await process.wait()
            await process.aclose()


async def _warm_up(url: str) -> None:
    """A few sessions one at a time: imports, validators, the database file."""
    async with Client(url, token=TOKEN, timeout_s=60.0) as client:
        for _ in range(5):
            warm = await client.result(await client.create_session(MESSAGE), timeout_s=30)
            request_id = warm.input_requests[0].request_id
            await client.result(await client.respond(warm.session_id, [{"requestId": request_id, "value": ANSWER}]))


async def _round(process: Process, url: str, sessions: int, number: int) -> Result:
    """N sessions park at once, then all N are answered at once."""
    errors: list[str] = []
    requests = 0
    parked: dict[int, tuple[str, str]] = {}
    park_ms: list[float] = []
    post_ms: list[float] = []
    complete_ms: list[float] = []
    rss_before, _ = _memory_mib(process.pid)

    # One client (and connection pool) per session, like N independent frontends: httpx's pool
    # scans all its connections for every request, which would make one shared pool the bottleneck.
    clients = [Client(url, token=TOKEN, timeout_s=60.0) for _ in range(sessions)]
    try:

        async def park(index: int) -> None:
            nonlocal requests
            client = clients[index]
            started = time.perf_counter()
            try:
                accepted = await client.create_session(MESSAGE)
                result = await client.result(accepted, timeout_s=120)
                requests += 2
                if result.status != "waiting" or len(result.input_requests) != 1:
                    errors.append(f"session {index}: parked as {result.status} with {result.input_requests}")
                    return
                parked[index] = (accepted.session_id, result.input_requests[0].request_id)
                park_ms.append((time.perf_counter() - started) * 1000)
            except Exception as exc:
                errors.append(f"session {index} (park): {type(exc).__name__}: {exc}")

        async def answer(index: int) -> None:
            nonlocal requests
            session_id, request_id = parked[index]
            client = clients[index]
            started = time.perf_counter()
            try:
                accepted = await client.respond(session_id, [{"requestId": request_id, "value": ANSWER}])
                post_ms.append((time.perf_counter() - started) * 1000)
                result = await client.result(accepted, timeout_s=120)
                requests += 2
                complete_ms.append((time.perf_counter() - started) * 1000)
                if result.status != "completed" or result.message != EXPECTED:
                    errors.append(f"session {index}: ended {result.status} with {result.message!r}")
            except Exception as exc:
                errors.append(f"session {index} (answer): {type(exc).__name__}: {exc}")

        begin = time.perf_counter()
        async with anyio.create_task_group() as group:
            for index in range(sessions):
                group.start_soon(park, index)
        park_s = time.perf_counter() - begin
        rss_parked, _ = _memory_mib(process.pid)

        middle = time.perf_counter()
        async with anyio.create_task_group() as group:
            for index in list(parked):
                group.start_soon(answer, index)
        answer_s = time.perf_counter() - middle
        total_s = time.perf_counter() - begin
        rss_after, hwm = _memory_mib(process.pid)
    finally:
        for each in clients:
            await each.aclose()

    for error in errors[:20]:
        print(f"error: {error}", file=sys.stderr)
    return Result(
        round=number,
        sessions=sessions,
        requests=requests,
        errors=len(errors),
        total_s=round(total_s, 3),
        requests_per_s=round(requests / total_s, 1),
        park_s=round(park_s, 3),
        answer_s=round(answer_s, 3),
        answer_post_p50_ms=round(statistics.median(post_ms), 2) if post_ms else float("nan"),
        answer_post_p99_ms=round(_percentile(post_ms, 0.99), 2),
        answer_post_max_ms=round(max(post_ms), 2) if post_ms else float("nan"),
        park_p50_ms=round(statistics.median(park_ms), 2) if park_ms else float("nan"),
        park_p99_ms=round(_percentile(park_ms, 0.99), 2),
        complete_p50_ms=round(statistics.median(complete_ms), 2) if complete_ms else float("nan"),
        complete_p99_ms=round(_percentile(complete_ms, 0.99), 2),
        server_rss_before_mib=round(rss_before, 1),
        server_rss_parked_mib=round(rss_parked, 1),
        server_rss_after_mib=round(rss_after, 1),
        server_hwm_mib=round(hwm, 1),
    )


def main() -> int:
    """Parse arguments, run, print; exit 1 if any request failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sessions", type=int, default=200, help="concurrent sessions (default 200)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of N sessions, one after another (default 2)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    results = anyio.run(run, args.sessions, args.rounds)
    if args.json:
        print(json.dumps([asdict(result) for result in results], indent=2))
        return 1 if any(result.errors for result in results) else 0
    for r in results:
        print(f"round {r.round}: {r.sessions} concurrent sessions, {r.requests} HTTP requests in {r.total_s:.2f} s")
        print(f"  requests/s: {r.requests_per_s:.1f}  (park phase {r.park_s:.2f} s, answer phase {r.answer_s:.2f} s)")
        print(
            f"  POST inputResponses latency: p50 {r.answer_post_p50_ms:.1f} ms, "
            f"p99 {r.answer_post_p99_ms:.1f} ms, max {r.answer_post_max_ms:.1f} ms"
        )
        print(f"  create + stream until parked: p50 {r.park_p50_ms:.1f} ms, p99 {r.park_p99_ms:.1f} ms")
        print(f"  answer + stream until completed: p50 {r.complete_p50_ms:.1f} ms, p99 {r.complete_p99_ms:.1f} ms")
        print(
            f"  server RSS: {r.server_rss_before_mib:.1f} MiB before, {r.server_rss_parked_mib:.1f} MiB with all "
            f"parked, {r.server_rss_after_mib:.1f} MiB after (peak {r.server_hwm_mib:.1f} MiB)"
        )
        print(f"  errors: {r.errors}")
    return 1 if any(result.errors for result in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
