"""A frontend protocol's round of `bench/server_load.py` (`--ai-sdk`, `--ag-ui`), against eve's wire on one server.

One server (the current code) is driven both ways, in rounds that alternate: eve's wire round 1,
the frontend's round 1, eve's wire round 2, ... Each round is the flow of `server_load.py` (N
sessions park on the typed picker at once, then all N are answered at once and run to
completion), with one `httpx.AsyncClient` per session:

- **eve's wire**: `server_load._round` as it is (4 requests per session: `POST /session`, its
  stream until parked, `POST /session/{id}` with the answer, its stream until completed);
- **the frontend**: its `Frontend.park` then its `Frontend.answer` for each session (2 streamed
  requests per session for the AI SDK and AG-UI: `bench/_ai_sdk_round.py`, `bench/_ag_ui_round.py`).

The frontends send half the requests for the same flow, so requests/s are not compared: the
ratios printed are frontend / eve's wire for sessions/s, the per-session latencies and the
server's CPU time per phase.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Frontend:
    """How one frontend protocol parks a session on the picker and answers it."""

    name: str
    """The rounds' `side` (`ai-sdk`, `ag-ui`)."""
    label: str
    """How the report names it."""
    park: Callable[[httpx.AsyncClient], Awaitable[Any]]
    """Start a new session whose turn parks on the picker; returns what `answer` needs."""
    answer: Callable[[httpx.AsyncClient, Any], Awaitable[float]]
    """Answer the parked picker and read the turn to its end; the time until the answer was accepted, in ms."""


async def frontend_round(frontend: Frontend, process: Any, url: str, sessions: int, number: int) -> load.Result:
    """N sessions park at once through the frontend's protocol, then all N are answered at once."""
    errors: list[str] = []
    parked: dict[int, Any] = {}
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
                    parked[index] = await frontend.park(clients[index])
                park_ms.append((time.perf_counter() - started) * 1000)
            except Exception as exc:
                errors.append(f"{frontend.name} session {index} (park): {type(exc).__name__}: {exc}")

        async def answer(index: int) -> None:
            started = time.perf_counter()
            try:
                with anyio.fail_after(load.TIMEOUT_S):
                    post_ms.append(await frontend.answer(clients[index], parked[index]))
                complete_ms.append((time.perf_counter() - started) * 1000)
            except Exception as exc:
                errors.append(f"{frontend.name} session {index} (answer): {type(exc).__name__}: {exc}")

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
        side=frontend.name,
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


def compare_ratios(frontend: Frontend, results: list[load.Result]) -> dict[str, dict[str, float]]:
    """Frontend / eve's wire for each of `RATIOS`: per round and over all rounds (the mean of the rounds)."""
    wire = [r for r in results if r.side == "eve-wire"]
    theirs = [r for r in results if r.side == frontend.name]
    out: dict[str, dict[str, float]] = {}
    for _, field, _ in RATIOS:
        row = {str(s.round): load._ratio(_value(s, field), _value(w, field)) for s, w in zip(theirs, wire, strict=True)}
        mean = statistics.fmean(_value(r, field) for r in theirs)
        row["all"] = load._ratio(mean, statistics.fmean(_value(r, field) for r in wire))
        out[field] = row
    return out


async def compare(frontend: Frontend, side: load.Side, sessions: int, rounds: int) -> list[load.Result]:
    """One server of the current code; rounds alternate between eve's wire and the frontend."""
    with tempfile.TemporaryDirectory(prefix=f"eve-server-load-{frontend.name}-") as folder:
        process, url = await load._start_server(side, Path(folder) / "current.db")
        try:
            wire, api = await load._wire(url, side)
            side = load.replace(side, name="eve-wire", eve_py=load._imported_from(side), wire=wire, api=api)
            print(load._describe(side, process.pid), file=sys.stderr)
            await load._warm_up(url, side)
            async with load._client(url) as client:
                for _ in range(5):
                    await frontend.answer(client, await frontend.park(client))
            results: list[load.Result] = []
            for number in range(1, rounds + 1):
                results.append(await load._round(side, process, url, sessions, number))
                results.append(await frontend_round(frontend, process, url, sessions, number))
            return results
        finally:
            await load._stop_server(process)


def report(frontend: Frontend, results: list[load.Result], rounds: int, as_json: bool) -> int:
    """Print the rounds and the frontend / eve's wire ratios; 1 if any request failed."""
    table = compare_ratios(frontend, results)
    if as_json:
        print(json.dumps({"results": [load.asdict(r) for r in results], "ratios": table}, indent=2, default=str))
    else:
        for result in results:
            load._print_result(result)
        columns = [*(f"round {n}" for n in range(1, rounds + 1)), "all"]
        width = max(len(label) for label, _, _ in RATIOS) + 2
        title = f"{frontend.label} / eve's wire"
        print("\n" + f"{title:<{width}}" + "".join(f"{c:>10}" for c in columns))
        for label, field, higher in RATIOS:
            cells = "".join(f"{table[field][key]:>10.3f}" for key in [*map(str, range(1, rounds + 1)), "all"])
            print(f"{label:<{width}}{cells}   ({'higher' if higher else 'lower'} is better)")
    return 1 if any(r.errors for r in results) else 0
