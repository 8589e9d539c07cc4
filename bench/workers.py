"""Workers benchmark: park+resume cycles/s and answer-to-stream latency, 1/2/4 workers on PostgreSQL vs 1 on SQLite.

Run by hand as root or as a user that may run PostgreSQL (not part of the test suite):

```
.venv/bin/python bench/workers.py                     # 160 cycles per setup, 16 clients
.venv/bin/python bench/workers.py --cycles 400 --clients 32
.venv/bin/python bench/workers.py --url postgresql://user@host/db   # an existing, migrated database
```

Each setup is a real `eve-py serve --workers N` (the `fixtures/agent-tools-hitl` app, `--model
mock`) on 127.0.0.1, driven over HTTP by `--clients` concurrent clients in this process. One
cycle: `POST /session` with "help me pick a template" (the turn parks on the client-resolved
question), follow the stream to `turn.waiting`, open a stream from the cursor, answer through
`POST /session/{id}`, and read that stream to `turn.completed`. With several workers the answer
and the stream usually land on different processes (the kernel spreads accepted connections),
so the latency measures the cross-process push too. Answer-to-stream latency is the time from
sending the answer to the stream's first line of the answer's events.

Without `--url` a throwaway PostgreSQL server is started from Debian's binaries (as
`tests/postgres.py` does: no fsync, synchronous_commit off) and a new database is migrated for
each setup. The SQLite baseline runs on a new file with the store's default `synchronous=FULL`.
The ratios are each setup's numbers over the SQLite baseline's, from the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from tests.postgres import PostgresServer  # noqa: E402

APP = REPO / "fixtures" / "agent-tools-hitl"
API = "/eve/v1"


@dataclass(frozen=True, kw_only=True)
class Result:
    """One setup's numbers."""

    setup: str
    workers: int
    cycles: int
    cycles_per_s: float
    latency_p50_ms: float
    latency_p99_ms: float
    alone_p50_ms: float
    """Answer-to-stream latency of cycles run one at a time (no queueing behind other clients)."""


@contextmanager
def serving(store: str, workers: int) -> Iterator[str]:
    """`eve-py serve --workers N` on a free port; yields the API URL once a request is answered."""
    env = {k: v for k, v in os.environ.items() if k != "EVE_API_TOKEN"}
    command = [sys.executable, "-m", "eve_py", "serve", str(APP), "--model", "mock", "--port", "0"]
    command += ["--store", store, "--workers", str(workers), "--log-level", "warning"]
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = None
        for line in process.stdout:
            if line.startswith("listening on "):
                url = line.split()[2].rstrip("/") + API
                break
        assert url is not None, "the server did not start"
        for _ in range(workers * 4):  # let every worker finish starting before the clock runs
            httpx.get(url + "/health", timeout=60)
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


async def _lines(response: httpx.Response) -> Any:
    async for line in response.aiter_lines():
        if line.strip():
            yield json.loads(line)


async def _cycle(http: httpx.AsyncClient, latencies: list[float]) -> None:
    created = (await http.post("/session", json={"message": "help me pick a template"})).json()
    session_id = created["sessionId"]
    cursor, request_id = 0, None
    async with http.stream("GET", f"/session/{session_id}/stream", params={"startIndex": 0}) as response:
        async for event in _lines(response):
            cursor += 1
            if event["type"] == "input.requested":
                request_id = event["data"]["requests"][0]["requestId"]
            if event["type"] == "turn.waiting":
                break
    answer = {"inputResponses": [{"requestId": request_id, "value": {"pickedIds": ["tpl_blue"]}}]}
    async with http.stream("GET", f"/session/{session_id}/stream", params={"startIndex": cursor}) as response:
        sent = time.perf_counter()
        accepted = await http.post(f"/session/{session_id}", json=answer)
        assert accepted.status_code == 202, accepted.text
        first = True
        async for event in _lines(response):
            if first:
                latencies.append(time.perf_counter() - sent)
                first = False
            if event["type"] == "turn.completed":
                break


async def _drive(url: str, cycles: int, clients: int) -> tuple[float, list[float]]:
    latencies: list[float] = []
    left = cycles
    limits = httpx.Limits(max_connections=clients * 3, max_keepalive_connections=clients * 3)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:

        async def client() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                await _cycle(http, latencies)

        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(clients):
                group.start_soon(client)
        return time.perf_counter() - started, latencies


def run_setup(setup: str, store: str, workers: int, cycles: int, clients: int) -> Result:
    with serving(store, workers) as url:
        anyio.run(_drive, url, max(clients, 16), clients)  # warm-up: imports, prepared statements, pools
        elapsed, latencies = anyio.run(_drive, url, cycles, clients)
        _, alone = anyio.run(_drive, url, 30, 1)
    ordered = sorted(latencies)
    return Result(
        setup=setup,
        workers=workers,
        cycles=cycles,
        cycles_per_s=cycles / elapsed,
        latency_p50_ms=statistics.median(ordered) * 1000,
        latency_p99_ms=ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
        alone_p50_ms=statistics.median(alone) * 1000,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=160)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--url", help="a migrated PostgreSQL database to use instead of a throwaway server")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    server = None if args.url else PostgresServer.create()
    if server is None and not args.url:
        raise SystemExit("PostgreSQL is not installed (apt-get install postgresql), and no --url was given")
    if server is not None:
        server.start()
    results: list[Result] = []
    try:
        with tempfile.TemporaryDirectory() as folder:
            results.append(run_setup("sqlite", str(Path(folder) / "s.db"), 1, args.cycles, args.clients))
        for workers in (1, 2, 4):
            url = args.url or (server.database() if server is not None else "")
            results.append(run_setup("postgres", url, workers, args.cycles, args.clients))
    finally:
        if server is not None:
            server.stop()

    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
        return
    base = results[0]
    print(f"{args.cycles} park+resume cycles per setup, {args.clients} concurrent clients, {os.cpu_count()} cores")
    print("answer-to-stream latency under load (p50, p99) and with one client alone (p50), in ms")
    header = (
        f"{'setup':<10}{'workers':>8}{'cycles/s':>10}{'x sqlite':>10}{'p50':>8}{'p99':>8}{'alone':>8}{'x sqlite':>10}"
    )
    print(header)
    for r in results:
        print(
            f"{r.setup:<10}{r.workers:>8}{r.cycles_per_s:>10.1f}{r.cycles_per_s / base.cycles_per_s:>10.2f}"
            f"{r.latency_p50_ms:>8.1f}{r.latency_p99_ms:>8.1f}{r.alone_p50_ms:>8.1f}"
            f"{r.alone_p50_ms / base.alone_p50_ms:>10.2f}"
        )


if __name__ == "__main__":
    main()
