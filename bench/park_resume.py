"""Park/resume benchmark: N sessions park on a client tool, then each is resumed with an answer.

Run by hand (not part of the test suite):

```
.venv/bin/python bench/park_resume.py            # N=1000, SQLite vs the in-memory baseline
.venv/bin/python bench/park_resume.py 5000
.venv/bin/python bench/park_resume.py 1000 --store sqlite --json
.venv/bin/python bench/park_resume.py 500 --baseline a1c99e0 --rounds 3 --expires-after 3600
```

Each session runs the `fixtures/agent-tools-hitl` app with its own mock model:

- park: `create_session()`, then `send("help me pick a template")`; the model calls the app's
  client-resolved `ask_question` and the turn returns `status="waiting"`.
- resume: once all N sessions are parked, each is opened again by id (`get_session`) and
  answered (`respond([{requestId, value: {pickedIds: ["tpl_blue"]}}])`); the turn runs the
  `note` tool and completes.

Memory is read from `/proc/self/status` (VmRSS, VmHWM) before the first park and again while all
N sessions are parked and none is resumed. Only session ids are kept between the phases.

With `--expires-after SECONDS`, every tool of the app that parks (client-resolved, or needing
approval) gets `expires_after=SECONDS` as if defined with it, so each request carries a deadline
(`expiresAt`) that the store indexes, and nothing expires if SECONDS outlasts the run. With
`--baseline`, only the current tree's runs get it: a commit from before requests could expire
runs without, which is the comparison that shows what a deadline costs when nothing expires.

With `--trace`, every turn's spans are recorded by the OpenTelemetry SDK (`eve-py[otel]` and
`opentelemetry-sdk`): a `TracerProvider` with a batch processor whose exporter drops them, so the
figure is eve-py's tracing and the SDK's, not a collector's. With `--baseline`, only the current
tree's runs trace (a run without `--trace` on a tree with tracing is the no-provider cost).
With `--without-otel`, the OpenTelemetry API cannot be imported in the current tree's runs (as
if `opentelemetry-api` were not installed): the cost of tracing's hooks when the API is absent.

With `--wires`, the park and resume run on `MemorySessionStore` in this process, and then what
every stream read does with the stored events is timed for both of the server's eve wires, in
alternating repeats (`time.process_time`): eve 0.80.1's (version 26, one stored event per line)
and eve 1.0's (version 27, `V27Lines` over the same events). Two reads per session, as a
frontend makes them: the whole log (a page that loads the session), and the answered turn's
part from the answer's `startIndex` (which on v27 first replays the events before it through
the renderer, as the server's `_v27_lines` does, with no output), that read again with the
renderer a read before it left at that index (what the server keeps, so nothing is replayed).
Printed: microseconds per session for each read on each wire, and v27 / v26.

Without `--store`, the SQLite run and the baseline run (the same flow on `MemorySessionStore`)
each run in a fresh child process, so neither sees the other's heap, and the ratio
sqlite/memory is printed.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import anyio

from eve_py import Agent, Runtime, load_agent
from eve_py.agent import load_mock_model
from eve_py.models import Model
from eve_py.protocol.events import Event
from eve_py.sessions import MemorySessionStore, SessionStore, SQLiteSessionStore
from eve_py.testing import MockModel

StoreKind = Literal["sqlite", "memory"]

REPO = Path(__file__).resolve().parent.parent
DEFAULT_APP = REPO / "fixtures" / "agent-tools-hitl"
MESSAGE = "help me pick a template"
ANSWER = {"pickedIds": ["tpl_blue"]}
WARMUP = 50


@dataclass(frozen=True, kw_only=True)
class Memory:
    """Resident set size now and at its peak, in KiB."""

    rss_kib: int
    hwm_kib: int


@dataclass(frozen=True, kw_only=True)
class Result:
    """One store's numbers."""

    store: StoreKind
    sessions: int
    concurrency: int
    park_s: float
    resume_s: float
    park_p50_ms: float
    park_p99_ms: float
    resume_p50_ms: float
    resume_p99_ms: float
    rss_before_kib: int
    rss_parked_kib: int
    hwm_parked_kib: int
    db_bytes: int | None
    marginal_per_1000_kib: float | None
    """RSS growth per 1,000 sessions over the second half of the parking phase."""
    expires_after_s: float | None = None
    """The `expires_after` given to the app's parking tools (None: as the app defines them)."""

    @property
    def cycles_per_s(self) -> float:
        """Sessions parked and resumed per second (one park plus one resume is one cycle)."""
        return self.sessions / (self.park_s + self.resume_s)

    @property
    def parks_per_s(self) -> float:
        """Sessions parked per second (create + send until waiting)."""
        return self.sessions / self.park_s

    @property
    def resumes_per_s(self) -> float:
        """Sessions resumed per second (get_session + respond until completed)."""
        return self.sessions / self.resume_s

    @property
    def rss_growth_per_1000_kib(self) -> float:
        """RSS growth while all sessions are parked, per 1,000 parked sessions."""
        return (self.rss_parked_kib - self.rss_before_kib) * 1000 / self.sessions

    @property
    def peak_growth_per_1000_kib(self) -> float:
        """Peak RSS (VmHWM) growth up to the moment all sessions are parked, per 1,000 sessions."""
        return (self.hwm_parked_kib - self.rss_before_kib) * 1000 / self.sessions


def read_memory() -> Memory:
    """VmRSS and VmHWM from /proc/self/status (Linux); falls back to getrusage's peak."""
    fields: dict[str, int] = {}
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    fields[key] = int(value.split()[0])
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return Memory(rss_kib=peak, hwm_kib=peak)
    return Memory(rss_kib=fields["VmRSS"], hwm_kib=fields["VmHWM"])


def percentile_ms(samples: list[float], q: int) -> float:
    """The q-th percentile of `samples` (seconds), in milliseconds."""
    if len(samples) < 2:
        return samples[0] * 1000 if samples else 0.0
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1] * 1000


def marginal_growth(samples: list[tuple[int, int]]) -> float | None:
    """RSS growth per 1,000 parked sessions between the middle and the end of parking (KiB).

    Fixed costs (SQLite's page cache, interpreter caches) are paid early; this slope shows what
    each further parked session costs.
    """
    if len(samples) < 2:
        return None
    last = samples[-1]
    middle = next(sample for sample in samples if sample[0] * 2 >= last[0])
    if middle[0] == last[0]:
        middle = samples[-2]
    return (last[1] - middle[1]) * 1000 / (last[0] - middle[0])


def forget_requests(model: Model) -> None:
    """Drop the mock model's record of requests, which otherwise grows with every step."""
    if isinstance(model, MockModel):
        model.requests.clear()


def database_bytes(folder: Path) -> int:
    """Size of the SQLite database with its WAL and shared-memory files."""
    return sum(path.stat().st_size for path in folder.glob("sessions.db*"))


async def park(runtime: Runtime, deadline: bool = False) -> tuple[str, float]:
    """Create a session and park it on `ask_question`; returns (session id, seconds).

    With `deadline`, the request must carry one (`expires_at`).
    """
    started = time.perf_counter()
    session = await runtime.create_session()
    result = await session.send(MESSAGE)
    elapsed = time.perf_counter() - started
    if result.status != "waiting" or len(result.input_requests) != 1:
        raise RuntimeError(f"session {session.id} did not park: {result.status} {result.error}")
    if deadline and result.input_requests[0].expires_at is None:
        raise RuntimeError(f"session {session.id} parked without a deadline")
    forget_requests(runtime.model)
    return session.id, elapsed


async def resume(runtime: Runtime, session_id: str) -> float:
    """Open a parked session by id and answer its one request; returns seconds."""
    started = time.perf_counter()
    session = await runtime.get_session(session_id)
    (request,) = session.input_requests
    result = await session.respond([{"requestId": request.request_id, "value": ANSWER}])
    elapsed = time.perf_counter() - started
    if result.status != "completed":
        raise RuntimeError(f"session {session_id} did not complete: {result.status} {result.error}")
    forget_requests(runtime.model)
    return elapsed


async def park_all(
    runtime: Runtime,
    n: int,
    concurrency: int,
    samples: list[tuple[int, int]] | None = None,
    deadline: bool = False,
) -> tuple[list[str], list[float]]:
    """Park `n` sessions with `concurrency` workers (never more tasks than that).

    With `samples`, VmRSS is appended as (sessions parked, KiB) every n/10 parks.
    """
    ids: list[str] = []
    times: list[float] = []
    every = max(1, n // 10)
    remaining = iter(range(n))

    async def worker() -> None:
        for _ in remaining:
            session_id, elapsed = await park(runtime, deadline)
            ids.append(session_id)
            times.append(elapsed)
            if samples is not None and len(ids) % every == 0:
                samples.append((len(ids), read_memory().rss_kib))

    async with anyio.create_task_group() as group:
        for _ in range(concurrency):
            group.start_soon(worker)
    return ids, times


async def resume_all(runtime: Runtime, ids: list[str], concurrency: int) -> list[float]:
    """Resume every parked session with `concurrency` workers."""
    times: list[float] = []
    remaining = iter(ids)

    async def worker() -> None:
        for session_id in remaining:
            elapsed = await resume(runtime, session_id)
            times.append(elapsed)

    async with anyio.create_task_group() as group:
        for _ in range(concurrency):
            group.start_soon(worker)
    return times


def with_expiry(agent: Agent, seconds: float) -> Agent:
    """The agent with `expires_after=seconds` on every tool whose calls park (client-resolved or approval)."""
    tools = {
        name: dataclasses.replace(tool, expires_after_s=seconds)
        if tool.client_resolved or tool.needs_approval is not False
        else tool
        for name, tool in agent.tools.items()
    }
    return dataclasses.replace(agent, tools=tools)


async def measure(kind: StoreKind, n: int, concurrency: int, app: Path, expires_after: float | None = None) -> Result:
    """Run the whole flow on one store kind in this process."""
    agent = load_agent(app)
    if expires_after is not None:
        agent = with_expiry(agent, expires_after)
    deadline = expires_after is not None
    model = load_mock_model(app)
    with tempfile.TemporaryDirectory(prefix="eve-bench-") as tmp:
        db = Path(tmp) / "sessions.db"
        store: SessionStore = SQLiteSessionStore(db) if kind == "sqlite" else MemorySessionStore()
        try:
            # Warm up imports, pydantic validators, the thread pool, and the SQLite file; the
            # warm-up sessions are completed, so they are not part of the parked set.
            warm = Runtime(agent, model=model, store=store)
            warm_ids, _ = await park_all(warm, WARMUP, concurrency, deadline=deadline)
            await resume_all(warm, warm_ids, concurrency)
            runtime = Runtime(agent, model=model, store=store)

            gc.collect()
            before = read_memory()
            started = time.perf_counter()
            samples: list[tuple[int, int]] = []
            ids, park_times = await park_all(runtime, n, concurrency, samples, deadline)
            park_s = time.perf_counter() - started
            gc.collect()
            parked = read_memory()

            started = time.perf_counter()
            resume_times = await resume_all(runtime, ids, concurrency)
            resume_s = time.perf_counter() - started
        finally:
            await store.aclose()
        db_bytes = database_bytes(Path(tmp)) if kind == "sqlite" else None
    return Result(
        store=kind,
        sessions=n,
        concurrency=concurrency,
        park_s=park_s,
        resume_s=resume_s,
        park_p50_ms=percentile_ms(park_times, 50),
        park_p99_ms=percentile_ms(park_times, 99),
        resume_p50_ms=percentile_ms(resume_times, 50),
        resume_p99_ms=percentile_ms(resume_times, 99),
        rss_before_kib=before.rss_kib,
        rss_parked_kib=parked.rss_kib,
        hwm_parked_kib=parked.hwm_kib,
        db_bytes=db_bytes,
        marginal_per_1000_kib=marginal_growth(samples),
        expires_after_s=expires_after,
    )


def run_child(
    kind: StoreKind,
    n: int,
    concurrency: int,
    app: Path,
    root: Path = REPO,
    expires_after: float | None = None,
    trace: bool = False,
    without_otel: bool = False,
) -> Result:
    """Run one store kind in a fresh interpreter and read its JSON result.

    `root`: the tree whose `bench/park_resume.py` and `eve_py` run (another commit's worktree for
    a baseline). `expires_after`: passed on as `--expires-after` (the current tree only).
    """
    env = dict(os.environ)
    if root != REPO:
        # Ahead of the editable install's path entry: the worktree's eve_py is the one imported.
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)
    command = [
        sys.executable,
        str(root / "bench" / "park_resume.py"),
        str(n),
        "--store",
        kind,
        "--concurrency",
        str(concurrency),
        "--app",
        str(app),
        "--json",
    ]
    if expires_after is not None:
        command += ["--expires-after", str(expires_after)]
    if trace:
        command.append("--trace")
    if without_otel:
        command.append("--without-otel")
    completed = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    data = json.loads(completed.stdout)
    return Result(**data)


def report(result: Result) -> list[str]:
    """Readable lines for one store's result."""
    mib = 1024
    deadline = "" if result.expires_after_s is None else f", each request expiring after {result.expires_after_s:g} s"
    lines = [
        f"{result.store}: {result.sessions} sessions, concurrency {result.concurrency}{deadline}",
        f"  park+resume cycles/s  {result.cycles_per_s:10.1f}"
        f"   (parks/s {result.parks_per_s:.1f}, resumes/s {result.resumes_per_s:.1f})",
        f"  park   p50/p99 ms     {result.park_p50_ms:10.2f} / {result.park_p99_ms:.2f}",
        f"  resume p50/p99 ms     {result.resume_p50_ms:10.2f} / {result.resume_p99_ms:.2f}",
        f"  RSS before parking    {result.rss_before_kib / mib:10.1f} MiB",
        f"  RSS with all parked   {result.rss_parked_kib / mib:10.1f} MiB"
        f"   (peak {result.hwm_parked_kib / mib:.1f} MiB)",
        f"  RSS growth / 1,000 parked sessions   {result.rss_growth_per_1000_kib / mib:7.2f} MiB"
        f"   (peak growth {result.peak_growth_per_1000_kib / mib:.2f} MiB)",
    ]
    if result.marginal_per_1000_kib is not None:
        lines.append(f"  marginal RSS / 1,000 parked (2nd half) {result.marginal_per_1000_kib / mib:6.2f} MiB")
    if result.db_bytes is not None:
        lines.append(f"  database file (+WAL) after the run    {result.db_bytes / mib / mib:7.1f} MiB")
    return lines


def compare(
    ref: str,
    rounds: int,
    n: int,
    concurrency: int,
    app: Path,
    expires_after: float | None = None,
    trace: bool = False,
    without_otel: bool = False,
) -> int:
    """SQLite park/resume of the working tree against commit `ref`, in alternating rounds; prints the ratios.

    `expires_after` applies to the working tree's runs only.
    """
    from server_load import worktree

    ratios: dict[str, list[float]] = {"cycles/s": [], "park p50": [], "resume p50": []}
    with worktree("baseline", ref) as side:
        for _ in range(rounds):
            theirs = run_child("sqlite", n, concurrency, app, side.root)
            ours = run_child(
                "sqlite", n, concurrency, app, expires_after=expires_after, trace=trace, without_otel=without_otel
            )
            ratios["cycles/s"].append(ours.cycles_per_s / theirs.cycles_per_s)
            ratios["park p50"].append(ours.park_p50_ms / theirs.park_p50_ms)
            ratios["resume p50"].append(ours.resume_p50_ms / theirs.resume_p50_ms)
            print("\n".join(["baseline " + ref, *report(theirs), "current", *report(ours)]))
    deadline = "" if expires_after is None else f"; current with expires_after={expires_after:g} s"
    deadline += "; current traced (OpenTelemetry SDK)" if trace else ""
    deadline += "; current without the OpenTelemetry API" if without_otel else ""
    print(f"current / baseline {ref} (SQLite, {n} sessions, median of {rounds} alternating rounds{deadline}):")
    for name, values in ratios.items():
        print(f"  {name:<12} {statistics.median(values):6.2f}x   (rounds: {', '.join(f'{v:.2f}' for v in values)})")
    return 0


def encode_wires(events: list[list[Event]], starts: list[int], repeats: int) -> dict[str, dict[str, float]]:
    """Microseconds of CPU per session that each wire's encoding spends on two reads of every
    session's log: `whole` (from 0) and `tail` (from the answer's index in `starts`); see `--wires`.
    The wires alternate, `repeats` times each; the median of the repeats is kept."""
    from eve_py.server._eve_v27 import V27Encoding, V27Lines, stored_json
    from eve_py.server._stream import Encoding

    def v26(log: list[Event], start: int) -> bytes:
        return Encoding().encode(log[start:])

    def v27(log: list[Event], start: int) -> bytes:
        lines = V27Lines()
        for event in log[:start]:
            lines.line(stored_json(event))
        return V27Encoding(lines).encode(log[start:])

    def primed(log: list[Event], start: int) -> V27Lines:
        lines = V27Lines()
        for event in log[:start]:
            lines.line(stored_json(event))
        return lines

    reads = ("whole", "tail", "kept")
    samples: dict[str, dict[str, list[float]]] = {w: {read: [] for read in reads} for w in ("v26", "v27")}
    for _ in range(repeats):
        for wire, encode in (("v26", v26), ("v27", v27)):
            for read in reads:
                pairs = list(zip(events, starts, strict=True))
                kept = [primed(log, start) for log, start in pairs] if wire == "v27" and read == "kept" else None
                began = time.process_time()
                for index, (log, start) in enumerate(pairs):
                    if kept is not None:  # the renderer the read before left at `start`: nothing replayed
                        V27Encoding(kept[index]).encode(log[start:])
                    else:
                        encode(log, 0 if read == "whole" else start)
                samples[wire][read].append((time.process_time() - began) * 1e6 / len(events))
    return {wire: {read: statistics.median(v) for read, v in got.items()} for wire, got in samples.items()}


async def measure_wires(n: int, app: Path, repeats: int) -> dict[str, dict[str, float]]:
    """Park and resume `n` sessions on the memory store, then time both wires' encoding of their logs."""
    store = MemorySessionStore()
    runtime = Runtime(load_agent(app), model=load_mock_model(app), store=store)
    ids, _ = await park_all(runtime, n, 1)
    starts = [(await store.load(session_id)).event_count for session_id in ids]
    await resume_all(runtime, ids, 1)
    events = [await store.read_events(session_id) for session_id in ids]
    return encode_wires(events, starts, repeats)


def report_wires(n: int, table: dict[str, dict[str, float]]) -> list[str]:
    """Readable lines for `--wires`."""
    lines = [f"stream encoding per session ({n} sessions, each parked once and answered once; CPU, median)"]
    rows = (
        ("whole", "the whole log"),
        ("tail", "from the answer's startIndex"),
        ("kept", "the same, renderer kept"),
    )
    for read, what in rows:
        v26, v27 = table["v26"][read], table["v27"][read]
        lines.append(f"  {what:<30} v26 {v26:8.1f} us   v27 {v27:8.1f} us   v27 / v26 {v27 / v26:5.2f}x")
    return lines


def record_spans() -> None:
    """Set an OpenTelemetry SDK tracer provider whose batch processor hands every span to an exporter that drops it."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Drop(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Drop()))
    trace.set_tracer_provider(provider)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the benchmark, print the report; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("sessions", nargs="?", type=int, default=1000, help="sessions to park and resume")
    parser.add_argument("--store", choices=("sqlite", "memory"), help="run only this store, in this process")
    parser.add_argument("--concurrency", type=int, default=1, help="sessions in flight at once (default 1)")
    parser.add_argument("--app", type=Path, default=DEFAULT_APP, help="the app to run (default the HITL fixture)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON (with --store)")
    parser.add_argument("--baseline", metavar="REF", help="compare SQLite against this commit, alternating rounds")
    parser.add_argument(
        "--expires-after",
        type=float,
        metavar="SECONDS",
        help="give the app's parking tools expires_after=SECONDS (with --baseline: the current tree only)",
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help="record every turn's spans with the OpenTelemetry SDK (with --baseline: the current tree only)",
    )
    parser.add_argument(
        "--without-otel",
        action="store_true",
        help="run as if opentelemetry-api were not installed (with --baseline: the current tree only)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds with --baseline (default 3)")
    parser.add_argument(
        "--wires", action="store_true", help="time the eve wires' stream encoding, v27 against v26 (see above)"
    )
    args = parser.parse_args(argv)
    if args.sessions < 1 or args.concurrency < 1:
        parser.error("sessions and --concurrency must be at least 1")
    if args.expires_after is not None and not args.expires_after > 0:
        parser.error("--expires-after must be a positive number of seconds")
    if args.wires:
        table = anyio.run(measure_wires, args.sessions, args.app, args.rounds)
        print(json.dumps(table) if args.json else "\n".join(report_wires(args.sessions, table)))
        return 0
    if args.baseline is not None:
        return compare(
            args.baseline,
            args.rounds,
            args.sessions,
            args.concurrency,
            args.app,
            args.expires_after,
            args.trace,
            args.without_otel,
        )

    if args.trace and args.without_otel:
        parser.error("--trace needs the OpenTelemetry API: leave out --without-otel")
    if args.trace:
        record_spans()
    if args.without_otel:
        # A None entry makes `import opentelemetry` raise ImportError, as when the package is absent.
        assert "opentelemetry" not in sys.modules, "imported before the flow: it would be used"
        sys.modules["opentelemetry"] = None  # type: ignore[assignment]
    if args.store is not None:
        result = anyio.run(measure, args.store, args.sessions, args.concurrency, args.app, args.expires_after)
        print(json.dumps(asdict(result)) if args.json else "\n".join(report(result)))
        return 0

    sqlite = run_child("sqlite", args.sessions, args.concurrency, args.app, expires_after=args.expires_after)
    memory = run_child("memory", args.sessions, args.concurrency, args.app, expires_after=args.expires_after)
    print(f"eve-py park/resume benchmark, python {sys.version.split()[0]}, app {args.app.name}")
    for result in (sqlite, memory):
        print("\n".join(report(result)))
    print("baseline: the same flow on MemorySessionStore; ratio = sqlite / memory")
    print(f"  throughput ratio (cycles/s)         {sqlite.cycles_per_s / memory.cycles_per_s:7.2f}x")
    if memory.rss_growth_per_1000_kib > 0:
        ratio = sqlite.rss_growth_per_1000_kib / memory.rss_growth_per_1000_kib
        print(f"  RSS growth ratio (per 1,000 parked) {ratio:7.2f}x")
    if sqlite.marginal_per_1000_kib is not None and memory.marginal_per_1000_kib:
        ratio = sqlite.marginal_per_1000_kib / memory.marginal_per_1000_kib
        print(f"  marginal RSS ratio (2nd half)       {ratio:7.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
