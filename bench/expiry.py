"""Expiry benchmark: N parked sessions whose deadlines all fall within a few seconds, expired by the sweep.

Run by hand (not part of the test suite):

```
.venv/bin/python bench/expiry.py                              # 10,000 sessions on SQLite, deadlines over 4 s
.venv/bin/python bench/expiry.py --sessions 2000 --window 10
.venv/bin/python bench/expiry.py --store memory
.venv/bin/python bench/expiry.py --store postgres             # a throwaway server (Debian's binaries)
.venv/bin/python bench/expiry.py --store postgres --url postgresql://user@host/db   # a migrated database
.venv/bin/python bench/expiry.py --sessions 2000 --json
```

The app is one tool, `wire`, defined with `needs_approval=True, expires_after=3600`, and a flat
`MockModel` responder: the first step calls `wire`, the next one answers with a line of text. The
runtime has an `on_event` listener, as a server does (so every write is durable, as on a server).

1. **Park**: `--sessions` sessions are created and sent "wire it" (`--park-concurrency` at a
   time); each turn parks on the approval of `wire`, one request with an `expiresAt`.
   To put N deadlines inside a window of a few seconds (several per millisecond at 10,000),
   each session parks with `time.time()` pinned, in its own task only, to its planned deadline
   minus `expires_after`: session i's deadline is `lead + window * i / N` seconds after the
   moment parking began. Once all are parked, `time.time` is moved back by the time parking
   took (a constant shift, like `tests/clock.py`'s), so the first deadline is `--lead` seconds
   away. From then on time runs at the real rate: every duration below is a real one. The
   deadline each session got is read back from its request's `expiresAt` (RFC 3339, ms).
2. **Expire**: `async with runtime.expiring():` runs the runtime's own sweep (`runtime.sweeper`,
   default tuning unless `--interval`, `--batch` or `--concurrency` say otherwise) until every
   session's turn has completed. The listener notes, per session, when the commit carrying its
   `input.resolved` (outcome `expired`) reached it; its lateness is that time minus its deadline.
   The issue's requirement is that a running server or worker expires a request within 2 s of
   its deadline: the report says whether p99 lateness is under 2 s.
   Exit status 1 when a session did not expire, or expired before its deadline.
3. **Memory** is read as the sweep goes (VmRSS from `/proc/self/status`, and
   `sys.getallocatedblocks()`, the number of live Python allocations) when it starts, and after
   25, 50, 75 and 100 % of the sessions have expired: flat means the sweep holds nothing per
   session it has processed. The per-session results are kept in preallocated arrays so that
   the benchmark's own bookkeeping does not grow either.

**Baseline** (skipped with `--no-baseline`): before the parking above, the same number of
sessions park on the same tool (their deadline an hour away) and are then all *denied* through
`get_session` + `respond`, `sweeper.concurrency` at a time, with no sweep running. A denial is
the closest path to an expiry: the call gets one error result and the turn goes on to its next
model step. The ratio expired/s over denied/s shows what the sweep itself (its `due` query,
batches and limiter) costs over the work every resolved session needs anyway. Each
session does the work of one resume (a load, an `input.resolved` write, the model step, the
completing write), so when the denials alone cannot keep up with N / window per second, the
deadlines cannot be met at that rate by any sweep on this machine and store.

On SQLite the database is a new file (the store's default `synchronous=FULL`). Without `--url`,
PostgreSQL is a throwaway server started from Debian's binaries as `tests/postgres.py` does (no
fsync, `synchronous_commit=off`), so its writes cost less than a production server's.
"""

from __future__ import annotations

import argparse
import array
import gc
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import anyio

from eve_py import Agent, Runtime, define_tool
from eve_py.harness._commit import Committed
from eve_py.protocol.events import InputResolved, TurnCompleted
from eve_py.protocol.requests import parse_deadline
from eve_py.sessions import MemorySessionStore, SessionStore, SQLiteSessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

StoreKind = Literal["sqlite", "postgres", "memory"]

EXPIRES_AFTER_S = 3600.0
"""The tool's `expires_after`: how long before its deadline each session parked (in pinned time)."""
MESSAGE = "wire it"
REPLY = "The wire was not sent."
WARMUP = 50
REQUIREMENT_S = 2.0
"""Issue 20: a running server or worker expires a request within 2 s of its deadline."""
MARKS = (25, 50, 75, 100)
"""Percentages of sessions expired at which memory is read."""


# --- time --------------------------------------------------------------------------------------

_pinned: ContextVar[float | None] = ContextVar("pinned", default=None)


class Clock:
    """`time.time` as eve-py sees it: pinned in one task (`pinned`), else the real time plus `shift`."""

    def __init__(self) -> None:
        self.real: Callable[[], float] = time.time
        self.shift = 0.0

    def __call__(self) -> float:
        pinned = _pinned.get()
        return self.real() + self.shift if pinned is None else pinned

    @contextmanager
    def installed(self) -> Iterator[Clock]:
        """Replace `time.time` with this clock for the block."""
        time.time = self
        try:
            yield self
        finally:
            time.time = self.real


# --- the app -----------------------------------------------------------------------------------


def wire(amount_cents: int) -> str:
    """Wire money (never runs here: every call expires or is denied)."""
    return f"wired {amount_cents}"


def respond(request: MockModelRequest) -> str | MockResponse:
    """The flat responder: call `wire` once; after its result, one line of text."""
    if not request.tool_results_since_last_user_message:
        return MockResponse(tool_calls=[MockToolCall("wire", {"amount_cents": 900})])
    return REPLY


def make_agent() -> Agent:
    tool = define_tool(
        description="Wire money. A person approves every call, within the hour.",
        execute=wire,
        needs_approval=True,
        expires_after=EXPIRES_AFTER_S,
    )
    return Agent.from_definitions({"wire": tool}, name="expiry-bench")


# --- stores ------------------------------------------------------------------------------------


@asynccontextmanager
async def open_store(
    kind: StoreKind, url: str | None, synchronous: Literal["FULL", "NORMAL"]
) -> AsyncIterator[tuple[SessionStore, str]]:
    """A new, empty store of `kind`, closed (and removed) afterwards; yields it and a description."""
    if kind == "memory":
        yield MemorySessionStore(), "MemorySessionStore"
        return
    if kind == "sqlite":
        with tempfile.TemporaryDirectory(prefix="eve-bench-expiry-") as folder:
            sqlite = SQLiteSessionStore(Path(folder) / "sessions.db", synchronous=synchronous)
            try:
                yield sqlite, f"SQLite, a new file, synchronous={synchronous}"
            finally:
                await sqlite.aclose()
        return
    from eve_py.sessions.postgres import PostgresSessionStore

    if url is not None:
        postgres = await PostgresSessionStore.open(url)
        try:
            yield postgres, "PostgreSQL at --url"
        finally:
            await postgres.aclose()
        return
    from tests.postgres import PostgresServer

    server = PostgresServer.create()
    if server is None:
        raise SystemExit("PostgreSQL is not installed (apt-get install postgresql), and no --url was given")
    await anyio.to_thread.run_sync(server.start)
    try:
        postgres = await PostgresSessionStore.open(await anyio.to_thread.run_sync(server.database))
        try:
            yield postgres, "PostgreSQL, a throwaway local server (fsync off, synchronous_commit off)"
        finally:
            await postgres.aclose()
    finally:
        await anyio.to_thread.run_sync(server.stop)


# --- measuring ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Mark:
    """Memory at one point of the sweep."""

    expired: int
    rss_kib: int
    blocks: int
    """`sys.getallocatedblocks()`: live allocations of Python's allocator."""


@dataclass(frozen=True, kw_only=True)
class Result:
    """One run's numbers."""

    store: str
    sessions: int
    window_s: float
    lead_s: float
    interval_s: float
    batch: int
    concurrency: int
    park_s: float
    expired: int
    completed: int
    writes_per_session: float
    """Commits per measured session during the sweep (its expiry and the rest of its turn)."""
    lateness_min_ms: float
    lateness_p50_ms: float
    lateness_p99_ms: float
    lateness_max_ms: float
    completed_p99_ms: float
    """When each turn completed after its deadline, p99."""
    early: int
    """Sessions expired before their deadline (must be 0)."""
    on_time_pct: float
    """Sessions expired within `REQUIREMENT_S` of their deadline, in percent."""
    sweep_s: float
    """First deadline to the last expiry."""
    expired_per_s: float
    """Expiries per second from the first to the last one."""
    offered_per_s: float
    """Deadlines per second inside the window (sessions / window)."""
    denied_per_s: float | None
    """The baseline: denials per second through get_session + respond, `concurrency` at a time."""
    marks: list[Mark]
    rss_after_gc_kib: int
    blocks_after_gc: int


def read_rss_kib() -> int:
    """VmRSS from /proc/self/status (Linux), in KiB; 0 where there is none."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def progress(text: str) -> None:
    """A line on stderr while the benchmark runs (the report goes to stdout)."""
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def percentile(samples: list[float], q: int) -> float:
    if len(samples) < 2:
        return samples[0] if samples else math.nan
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1]


class Tracker:
    """The listener: notes each measured session's expiry and completion, and memory at the marks.

    Sessions are numbered in the order they parked; times go into preallocated arrays.
    """

    def __init__(self, model: MockModel) -> None:
        self.model = model
        self.index: dict[str, int] = {}
        self.expired_at = array.array("d")
        self.completed_at = array.array("d")
        self.expired = 0
        self.completed = 0
        self.writes = 0
        self.marks: list[Mark] = []
        self._next_mark = 0
        self.all_completed = anyio.Event()

    def measure(self, session_ids: list[str]) -> None:
        """From now on, note these sessions (numbered in this order)."""
        self.index = {session_id: i for i, session_id in enumerate(session_ids)}
        self.expired_at = array.array("d", [math.nan]) * len(session_ids)
        self.completed_at = array.array("d", [math.nan]) * len(session_ids)
        self.expired = self.completed = self.writes = 0
        self.marks = [Mark(expired=0, rss_kib=read_rss_kib(), blocks=sys.getallocatedblocks())]
        self._next_mark = 0

    def __call__(self, committed: Committed) -> None:
        now = time.time()
        for event in committed.events:
            if isinstance(event, TurnCompleted):
                self.model.requests.clear()  # the mock model keeps every request it got otherwise
        i = self.index.get(committed.session_id)
        if i is None:
            return
        self.writes += 1
        for event in committed.events:
            if isinstance(event, InputResolved) and any(r.outcome == "expired" for r in event.data.resolutions):
                if math.isnan(self.expired_at[i]):
                    self.expired_at[i] = now
                    self.expired += 1
                    self._mark()
            elif isinstance(event, TurnCompleted) and math.isnan(self.completed_at[i]):
                self.completed_at[i] = now
                self.completed += 1
                if self.completed == len(self.index):
                    self.all_completed.set()

    def _mark(self) -> None:
        if self._next_mark < len(MARKS) and self.expired * 100 >= MARKS[self._next_mark] * len(self.index):
            self.marks.append(Mark(expired=self.expired, rss_kib=read_rss_kib(), blocks=sys.getallocatedblocks()))
            self._next_mark += 1


async def park_all(
    runtime: Runtime, n: int, concurrency: int, pin: Callable[[int], float | None]
) -> tuple[list[str], list[float]]:
    """Park `n` sessions, `concurrency` at a time; session i parks with `time.time()` at `pin(i)` (None: unpinned).

    Returns their ids and deadlines (Unix seconds), in the order of `i`.
    """
    ids: list[str] = [""] * n
    deadlines: list[float] = [0.0] * n
    remaining = iter(range(n))

    async def worker() -> None:
        for i in remaining:
            _pinned.set(pin(i))
            session = await runtime.create_session()
            result = await session.send(MESSAGE)
            if result.status != "waiting" or len(result.input_requests) != 1:
                raise RuntimeError(f"session {session.id} did not park: {result.status} {result.error}")
            expires_at = result.input_requests[0].expires_at
            if expires_at is None:
                raise RuntimeError(f"session {session.id} parked without a deadline")
            ids[i] = session.id
            deadlines[i] = parse_deadline(expires_at)
            _pinned.set(None)

    async with anyio.create_task_group() as group:
        for _ in range(concurrency):
            group.start_soon(worker)
    return ids, deadlines


async def deny_all(runtime: Runtime, ids: list[str], concurrency: int) -> float:
    """Deny every session's request (get_session + respond), `concurrency` at a time; returns seconds."""
    remaining = iter(ids)

    async def worker() -> None:
        for session_id in remaining:
            session = await runtime.get_session(session_id)
            (request,) = session.input_requests
            result = await session.respond([{"requestId": request.request_id, "optionId": "deny"}])
            if result.status != "completed":
                raise RuntimeError(f"session {session_id} did not complete: {result.status} {result.error}")

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(concurrency):
            group.start_soon(worker)
    return time.perf_counter() - started


@dataclass(frozen=True, kw_only=True)
class Options:
    sessions: int
    store: StoreKind
    url: str | None
    synchronous: Literal["FULL", "NORMAL"]
    window_s: float
    lead_s: float
    park_concurrency: int
    interval_s: float | None
    batch: int | None
    concurrency: int | None
    baseline: bool
    timeout_s: float


async def measure(options: Options, clock: Clock) -> Result:
    n = options.sessions
    model = MockModel(respond)
    tracker = Tracker(model)
    async with open_store(options.store, options.url, options.synchronous) as (store, described):
        runtime = Runtime(make_agent(), model=model, store=store, on_event=tracker)
        sweeper = runtime.sweeper
        if options.interval_s is not None:
            sweeper.interval_s = options.interval_s
        if options.batch is not None:
            sweeper.batch = options.batch
        if options.concurrency is not None:
            sweeper.concurrency = options.concurrency

        # Warm-up (imports, validators, the thread pool, the store's file or pool, the expiry
        # path): a few sessions park with a deadline half a second away and are expired by hand.
        soon = clock() + 0.5 - EXPIRES_AFTER_S
        await park_all(runtime, WARMUP, options.park_concurrency, lambda i: soon)
        await anyio.sleep(max(0.0, soon + EXPIRES_AFTER_S - clock()))
        while await runtime.expire_due():
            pass

        denied_per_s = None
        if options.baseline:
            progress(f"baseline: parking {n} sessions")
            ids, _ = await park_all(runtime, n, options.park_concurrency, lambda i: None)
            progress(f"baseline: denying {n} sessions")
            denied_per_s = n / await deny_all(runtime, ids, sweeper.concurrency)
            del ids

        progress(f"parking {n} sessions")

        started = clock()
        first = started + options.lead_s
        ids, deadlines = await park_all(
            runtime,
            n,
            options.park_concurrency,
            lambda i: first + options.window_s * i / n - EXPIRES_AFTER_S,
        )
        park_s = clock() - started
        clock.shift -= park_s  # back to when parking began: the first deadline is `lead_s` away
        gc.collect()
        tracker.measure(ids)
        del ids

        progress(f"parked in {park_s:.1f} s; sweeping")
        async with runtime.expiring():
            with anyio.move_on_after(options.lead_s + options.window_s + options.timeout_s):
                await tracker.all_completed.wait()
        progress("swept")
        gc.collect()
        rss_after_gc, blocks_after_gc = read_rss_kib(), sys.getallocatedblocks()

    lateness = [at - due for at, due in zip(tracker.expired_at, deadlines, strict=True) if not math.isnan(at)]
    completed = [at - due for at, due in zip(tracker.completed_at, deadlines, strict=True) if not math.isnan(at)]
    expired_times = [at for at in tracker.expired_at if not math.isnan(at)]
    sweep_s = max(expired_times) - min(deadlines) if expired_times else math.nan
    ms = 1000.0
    return Result(
        store=described,
        sessions=n,
        window_s=options.window_s,
        lead_s=options.lead_s,
        interval_s=sweeper.interval_s,
        batch=sweeper.batch,
        concurrency=sweeper.concurrency,
        park_s=park_s,
        expired=tracker.expired,
        completed=tracker.completed,
        writes_per_session=tracker.writes / n,
        lateness_min_ms=min(lateness, default=math.nan) * ms,
        lateness_p50_ms=percentile(lateness, 50) * ms,
        lateness_p99_ms=percentile(lateness, 99) * ms,
        lateness_max_ms=max(lateness, default=math.nan) * ms,
        completed_p99_ms=percentile(completed, 99) * ms,
        early=sum(1 for late in lateness if late < 0),
        on_time_pct=100.0 * sum(1 for late in lateness if late <= REQUIREMENT_S) / n,
        sweep_s=sweep_s,
        expired_per_s=tracker.expired / sweep_s if sweep_s > 0 else math.nan,
        offered_per_s=n / options.window_s,
        denied_per_s=denied_per_s,
        marks=tracker.marks,
        rss_after_gc_kib=rss_after_gc,
        blocks_after_gc=blocks_after_gc,
    )


def report(result: Result) -> list[str]:
    mib = 1024
    ok = result.expired == result.sessions and not result.early and result.lateness_p99_ms < REQUIREMENT_S * 1000
    lines = [
        f"eve-py expiry benchmark, python {sys.version.split()[0]}, {os.cpu_count()} cores",
        f"store: {result.store}",
        f"{result.sessions} sessions parked on one approval each in {result.park_s:.1f} s;"
        f" deadlines {result.lead_s:g} s to {result.lead_s + result.window_s:g} s after parking"
        f" ({result.offered_per_s:.0f} per s, {result.offered_per_s / 1000:.1f} per ms)",
        f"sweep: interval {result.interval_s:g} s, batch {result.batch}, concurrency {result.concurrency}",
        f"  expired               {result.expired} of {result.sessions} (turns completed: {result.completed},"
        f" {result.writes_per_session:.1f} writes each)",
        f"  lateness p50/p99/max  {result.lateness_p50_ms:8.0f} / {result.lateness_p99_ms:.0f}"
        f" / {result.lateness_max_ms:.0f} ms   (min {result.lateness_min_ms:.0f} ms;"
        f" expired before the deadline: {result.early})",
        f"  turn completed p99    {result.completed_p99_ms:8.0f} ms after the deadline",
        f"  expired within {REQUIREMENT_S:g} s   {result.on_time_pct:7.1f} %",
        f"  sustained             {result.expired_per_s:8.1f} expiries/s from the first deadline to the last expiry"
        f" ({result.sweep_s:.1f} s; the offered rate when the sweep keeps up)",
    ]
    if result.denied_per_s is not None:
        lines += [
            f"  baseline: denials     {result.denied_per_s:8.1f} /s (get_session + respond,"
            f" {result.concurrency} at a time, no sweep)",
            f"  ratio expiries/s over denials/s   {result.expired_per_s / result.denied_per_s:6.2f}x"
            "   (the sweep's own cost, when it falls behind)",
            f"  ratio offered/s over denials/s    {result.offered_per_s / result.denied_per_s:6.2f}x"
            "   (above 1: more deadlines per second than this machine resolves sessions)",
        ]
    lines.append("  memory during the sweep (VmRSS, live Python allocations):")
    for mark in result.marks:
        pct = 100 * mark.expired // result.sessions
        lines.append(f"    {pct:3d} % expired  {mark.rss_kib / mib:8.1f} MiB  {mark.blocks:10d} blocks")
    lines.append(f"    after, gc     {result.rss_after_gc_kib / mib:8.1f} MiB  {result.blocks_after_gc:10d} blocks")
    if len(result.marks) >= 3:
        quarter, last = result.marks[1], result.marks[-1]
        done = last.expired - quarter.expired
        if done > 0:
            lines.append(
                f"  growth from 25 % to {100 * last.expired // result.sessions} % expired, per 1,000 sessions:"
                f" RSS {(last.rss_kib - quarter.rss_kib) * 1000 / done / mib:.2f} MiB,"
                f" blocks {(last.blocks - quarter.blocks) * 1000 / done:.0f}"
            )
    verdict = "yes" if ok else "NO"
    lines.append(
        f"requirement (issue 20): every request expired, p99 lateness under {REQUIREMENT_S:g} s: {verdict}"
        f" (p99 {result.lateness_p99_ms / 1000:.2f} s)"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=10_000, help="sessions to park and expire (default 10,000)")
    parser.add_argument("--store", choices=("sqlite", "postgres", "memory"), default="sqlite")
    parser.add_argument("--url", help="with --store postgres: a migrated database instead of a throwaway server")
    parser.add_argument(
        "--synchronous", choices=("FULL", "NORMAL"), default="FULL", help="SQLite: sync every commit (default FULL)"
    )
    parser.add_argument("--window", type=float, default=4.0, help="seconds the deadlines spread over (default 4)")
    parser.add_argument("--lead", type=float, default=1.0, help="seconds from the sweep's start to the first deadline")
    parser.add_argument("--park-concurrency", type=int, default=8, help="sessions parking at once (default 8)")
    parser.add_argument("--interval", type=float, help="sweeper.interval_s (default: eve-py's)")
    parser.add_argument("--batch", type=int, help="sweeper.batch (default: eve-py's)")
    parser.add_argument("--concurrency", type=int, help="sweeper.concurrency (default: eve-py's)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the denials baseline")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait after the last deadline")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if args.sessions < 1 or args.window <= 0 or args.lead < 0 or args.park_concurrency < 1:
        parser.error("--sessions and --park-concurrency must be at least 1, --window positive, --lead not negative")
    if args.url is not None and args.store != "postgres":
        parser.error("--url is for --store postgres")
    options = Options(
        sessions=args.sessions,
        store=args.store,
        url=args.url,
        synchronous=args.synchronous,
        window_s=args.window,
        lead_s=args.lead,
        park_concurrency=args.park_concurrency,
        interval_s=args.interval,
        batch=args.batch,
        concurrency=args.concurrency,
        baseline=not args.no_baseline,
        timeout_s=args.timeout,
    )
    with Clock().installed() as clock:
        result = anyio.run(measure, options, clock)
    print(json.dumps(asdict(result)) if args.json else "\n".join(report(result)))
    return 0 if result.expired == result.sessions and not result.early else 1


if __name__ == "__main__":
    raise SystemExit(main())
