"""History scaling benchmark: what one park+resume cycle costs as a session's conversation grows.

Run by hand (not part of the test suite):

```
.venv/bin/python bench/history_scaling.py                      # lengths 10, 100, 1000, 5000
.venv/bin/python bench/history_scaling.py --lengths 10,1000 --rounds 6 --json
.venv/bin/python bench/history_scaling.py --disk 500                  # bytes per parked session
```

One **cycle** is what a person does with the `fixtures/agent-tools-hitl` app on its mock model,
in one session that already holds `L` earlier cycles: `send("help me pick a template")` parks on
the typed picker, and `respond([{requestId, value: {pickedIds: ["tpl_blue"]}}])` resumes it:
the `note` tool runs and the model answers. A cycle appends 6 messages and about 17 events.

For each configuration and history length `L`, a session is first grown to `L` cycles; then
every (configuration, length) pair is timed for `--cycles` cycles per round, round after round
(`--rounds`), so that a change in the machine's load hits them all alike. Per configuration it
prints the time per cycle, the same less the mock model's own time, the store commits per cycle
and how many of them are durable (with `synchronous=FULL`, each durable commit is one fsync of
the WAL; the others are synced with it), the JSON eve-py hands the store per cycle (record +
appended messages + events), what the store keeps of it (on SQLite, read back from the file:
each write's record row, as a delta or a new base, and its log chunks; on the memory store, the
JSON), and the bytes the process really wrote to disk per cycle (`write_bytes` of
`/proc/self/io`, which counts page writes, WAL included). First, a short session of eve-py
SQLite FULL and one of LangGraph (both from 10 cycles, 10 more per round) run in 7 alternating
rounds, which gives their ratio. Configurations, in one process and one run:

- eve-py on SQLite with `synchronous=FULL` (the default) and `NORMAL`, and on `MemorySessionStore`;
- LangGraph with `SqliteSaver` (when `langgraph` and `langgraph-checkpoint-sqlite` are installed):
  a graph whose node appends the user's message and the model's tool call, interrupts (`interrupt()`,
  the park), and on resume (`Command(resume=...)`) appends the tool result, the note and the answer,
  on a `messages` channel with `add_messages`, so its checkpoint grows as eve-py's conversation does.

Ratios are printed against the same configuration at the shortest length (flat is 1.0), and
eve-py SQLite FULL against LangGraph at each length. Disk per parked session is measured
separately (`--disk`): N fresh sessions each parked once, the database's size divided by N.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any

import anyio

from eve_py import Runtime, load_agent
from eve_py.agent import load_mock_model
from eve_py.models._base import Model, ModelRequest, ModelResponse
from eve_py.protocol import Event, dump_event
from eve_py.protocol.messages import Message, dump_message
from eve_py.sessions import ForwardingStore, MemorySessionStore, SessionRecord, SessionStore, SQLiteSessionStore

REPO = Path(__file__).resolve().parent.parent
APP = REPO / "fixtures" / "agent-tools-hitl"
MESSAGE = "help me pick a template"
ANSWER = {"pickedIds": ["tpl_blue"]}


@dataclass(frozen=True, kw_only=True)
class Point:
    """One configuration at one history length."""

    config: str
    history: int
    ms_per_cycle: float
    framework_ms_per_cycle: float
    """`ms_per_cycle` less the time spent inside the (mock) model's `request`."""
    commits_per_cycle: float
    durable_per_cycle: float
    """Durable commits: with `synchronous=FULL`, each is one fsync of the WAL (the others sync with them)."""
    json_bytes_per_cycle: float
    stored_bytes_per_cycle: float
    """What the store keeps of a cycle's writes: on SQLite, the record rows and log chunks as the file holds them."""
    disk_bytes_per_cycle: float


def _written() -> int:
    """Bytes this process caused to be written to storage so far (`/proc/self/io`)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    return 0


class Timed:
    """Wraps a model, adding up the seconds spent in its `request` (the model's own cost)."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.seconds = 0.0

    @property
    def name(self) -> str:
        return self.inner.name

    async def request(self, request: ModelRequest) -> ModelResponse:
        started = time.perf_counter()
        try:
            return await self.inner.request(request)
        finally:
            self.seconds += time.perf_counter() - started
            requests = getattr(self.inner, "requests", None)
            if isinstance(requests, list):
                requests.clear()  # MockModel keeps every request it got: not what this measures


class Counting(ForwardingStore):
    """A `SessionStore` wrapper counting commits, the JSON bytes handed to the store, and what it stored.

    On a SQLite store, the stored bytes are read back from the file after each commit (with a
    connection of the benchmark's own): the record's row (its delta, and its base when the write
    replaced it) and the log chunks the write appended. On the memory store, they are the JSON
    text it keeps.
    """

    def __init__(self, inner: SessionStore) -> None:
        super().__init__(inner)
        self.commits = 0
        self.durable = 0
        self.json_bytes = 0
        self.stored_bytes = 0
        self.seconds = 0.0
        """Time spent counting bytes, left out of the cycle times."""
        path = inner.path if isinstance(inner, SQLiteSessionStore) else None
        self._file = sqlite3.connect(path) if path is not None else None
        self._bases: dict[str, bytes | None] = {}

    async def commit(
        self,
        record: SessionRecord,
        events: Sequence[Event],
        messages: Sequence[Message] = (),
        *,
        durable: bool = True,
    ) -> SessionRecord:
        self.commits += 1
        self.durable += durable
        started = time.perf_counter()
        json_bytes = len(record.model_dump_json(by_alias=True, exclude_none=True))
        json_bytes += sum(len(dump_event(e)) for e in events) + sum(len(dump_message(m)) for m in messages)
        self.json_bytes += json_bytes
        self.seconds += time.perf_counter() - started
        stored = await self.inner.commit(record, events, messages, durable=durable)
        started = time.perf_counter()
        self.stored_bytes += self._stored(record) if self._file is not None else json_bytes
        self.seconds += time.perf_counter() - started
        return stored

    def _stored(self, record: SessionRecord) -> int:
        """What the commit of `record` (just made) put in the SQLite file, in bytes."""
        assert self._file is not None
        rowid, blob, base = self._file.execute(
            "SELECT rowid, record, base FROM sessions WHERE id = ?", (record.id,)
        ).fetchone()
        size = len(blob) + (len(base) if base is not None and base != self._bases.get(record.id) else 0)
        self._bases[record.id] = base
        for query, key in self._chunk_queries(rowid, record):
            row = self._file.execute(query, key).fetchone()
            size += row[0] if row is not None else 0
        return size

    def _chunk_queries(self, rowid: int, record: SessionRecord) -> list[tuple[str, tuple[int, ...]]]:
        """How to find the write's chunks: one `log` row (schema 8), or one per log (an older eve-py's tree)."""
        assert self._file is not None
        if self._file.execute("SELECT 1 FROM sqlite_master WHERE name = 'log'").fetchone() is not None:
            query = "SELECT length(chunk) FROM log WHERE session = ? AND event = ? AND message = ?"
            return [(query, (rowid, record.event_count, record.message_count))]
        return [
            (f"SELECT length(chunk) FROM {table} WHERE session = ? AND idx = ?", (rowid, first))  # noqa: S608
            for table, first in (("events", record.event_count), ("messages", record.message_count))
        ]

    async def aclose(self) -> None:
        if self._file is not None:
            self._file.close()
        await self.inner.aclose()


async def _eve_cycle(runtime: Runtime, session_id: str) -> None:
    session = await runtime.get_session(session_id)
    parked = await session.send(MESSAGE)
    assert parked.status == "waiting", parked
    request_id = parked.input_requests[0].request_id
    done = await session.respond([{"requestId": request_id, "value": ANSWER}])
    assert done.status == "completed" and done.message == "Recorded your pick: tpl_blue.", done


@dataclass
class _Tally:
    """What the timed cycles of one configuration at one history length added up to, over every round."""

    cycles: int = 0
    seconds: float = 0.0
    modelled: float = 0.0
    commits: int = 0
    durable: int = 0
    json_bytes: int = 0
    stored_bytes: int = 0
    disk_bytes: int = 0

    def point(self, config: str, history: int) -> Point:
        n = self.cycles
        return Point(
            config=config,
            history=history,
            ms_per_cycle=round(self.seconds * 1000 / n, 3),
            framework_ms_per_cycle=round((self.seconds - self.modelled) * 1000 / n, 3),
            commits_per_cycle=round(self.commits / n, 2) if self.commits else float("nan"),
            durable_per_cycle=round(self.durable / n, 2) if self.commits else float("nan"),
            json_bytes_per_cycle=round(self.json_bytes / n) if self.commits else float("nan"),
            stored_bytes_per_cycle=round(self.stored_bytes / n) if self.commits else float("nan"),
            disk_bytes_per_cycle=round(self.disk_bytes / n),
        )


class _Eve:
    """eve-py on one store: one session per history length, grown once, then timed in rounds."""

    def __init__(self, name: str, store: Counting) -> None:
        self.name = name
        self.store = store
        self.model = Timed(load_mock_model(APP))
        self.runtime = Runtime(load_agent(APP), model=self.model, store=store)
        self.sessions: dict[int, str] = {}

    async def grow(self, length: int) -> None:
        session = await self.runtime.create_session()
        for _ in range(length):
            await _eve_cycle(self.runtime, session.id)
        self.sessions[length] = session.id

    async def run(self, length: int, cycles: int, tally: _Tally) -> None:
        store, model = self.store, self.model
        commits, durable, json_bytes, stored = store.commits, store.durable, store.json_bytes, store.stored_bytes
        disk, modelled, counting = _written(), model.seconds, store.seconds
        started = time.perf_counter()
        for _ in range(cycles):
            await _eve_cycle(self.runtime, self.sessions[length])
        tally.seconds += time.perf_counter() - started - (store.seconds - counting)
        tally.cycles += cycles
        tally.modelled += model.seconds - modelled
        tally.commits += store.commits - commits
        tally.durable += store.durable - durable
        tally.json_bytes += store.json_bytes - json_bytes
        tally.stored_bytes += store.stored_bytes - stored
        tally.disk_bytes += _written() - disk


class _LangGraph:
    """LangGraph + SqliteSaver: one thread per history length, grown once, then timed in rounds."""

    name = "langgraph-sqlite"

    def __init__(self, path: Path) -> None:
        from langchain_core.messages import HumanMessage
        from langgraph.types import Command

        _, self.close, self.graph = _langgraph_graph(path)
        self._human, self._command = HumanMessage, Command

    def _cycle(self, length: int) -> None:
        config = {"configurable": {"thread_id": f"history-{length}"}}
        self.graph.invoke({"messages": [self._human(content=MESSAGE)]}, config)  # parks on interrupt()
        self.graph.invoke(self._command(resume=ANSWER["pickedIds"][0]), config)

    async def grow(self, length: int) -> None:
        for _ in range(length):
            self._cycle(length)

    async def run(self, length: int, cycles: int, tally: _Tally) -> None:
        disk, started = _written(), time.perf_counter()
        for _ in range(cycles):
            self._cycle(length)
        tally.seconds += time.perf_counter() - started
        tally.cycles += cycles
        tally.disk_bytes += _written() - disk


async def _interleaved(lengths: list[int], cycles: int, rounds: int, langgraph_max: int, folder: Path) -> list[Point]:
    """Every configuration at every length, timed in `rounds` alternating rounds of `cycles` cycles.

    The machine's load changes during a run; alternating the configurations and lengths round by
    round exposes them all to the same load, so their ratios hold even when absolute times drift.
    """
    subjects: list[_Eve | _LangGraph] = [
        _Eve("sqlite-full", Counting(await _sqlite(folder / "full.db", "FULL"))),
        _Eve("sqlite-normal", Counting(await _sqlite(folder / "normal.db", "NORMAL"))),
        _Eve("memory", Counting(await _memory(folder))),
    ]
    if _langgraph_available():
        subjects.append(_LangGraph(folder / "langgraph.db"))
    else:
        print("LangGraph is not installed: pip install -e '.[bench]'", file=sys.stderr)

    def measured(subject: _Eve | _LangGraph, length: int) -> bool:
        return not isinstance(subject, _LangGraph) or length <= langgraph_max

    tallies: dict[tuple[str, int], _Tally] = {}
    for subject in subjects:
        for length in lengths:
            if measured(subject, length):
                print(f"  growing {subject.name} to {length} cycles", file=sys.stderr)
                await subject.grow(length)
                tallies[subject.name, length] = _Tally()
    for round_ in range(rounds):
        print(f"  round {round_ + 1} of {rounds}", file=sys.stderr)
        for length in lengths:
            for subject in subjects:
                if measured(subject, length):
                    await subject.run(length, cycles, tallies[subject.name, length])
    for subject in subjects:
        if isinstance(subject, _Eve):
            await subject.store.aclose()
        else:
            subject.close()
    return [tally.point(config, length) for (config, length), tally in tallies.items()]


def _langgraph_cycle(path: Path) -> tuple[Callable[[], None], Callable[[], None]]:
    """LangGraph's version of one cycle on a `SqliteSaver` at `path` (WAL, `synchronous=FULL`), and its closer."""
    cycle, close, _ = _langgraph_graph(path)
    return cycle, close


def _langgraph_graph(path: Path) -> tuple[Callable[[], None], Callable[[], None], Any]:
    """The LangGraph graph of the flow on a `SqliteSaver` at `path`: one cycle, the closer, the graph."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages
    from langgraph.types import Command, interrupt
    from typing_extensions import TypedDict

    # The functional form: this module's postponed annotations would hide the reducer.
    State = TypedDict("State", {"messages": Annotated[list[Any], add_messages]})  # noqa: UP013

    counter = {"n": 0}

    def turn(state: State) -> dict[str, Any]:
        counter["n"] += 1
        n = counter["n"]
        call = {"name": "ask_question", "args": {"prompt": "Which template?", "options": ["tpl_blue"]}, "id": f"q{n}"}
        picked = interrupt({"requestId": f"q{n}", "prompt": "Which template?"})  # the park
        note = {"name": "note", "args": {"text": f"picked {picked}"}, "id": f"n{n}"}
        return {
            "messages": [
                AIMessage(content="", tool_calls=[call]),
                ToolMessage(content=json.dumps(picked), tool_call_id=f"q{n}"),
                AIMessage(content="", tool_calls=[note]),
                ToolMessage(content=json.dumps({"recorded": True}), tool_call_id=f"n{n}"),
                AIMessage(content=f"Recorded your pick: {picked}."),
            ]
        }

    builder = StateGraph(State)
    builder.add_node("turn", turn)
    builder.add_edge(START, "turn")
    builder.add_edge("turn", END)
    connection = sqlite3.connect(path, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    saver = SqliteSaver(connection)
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "bench"}}

    def cycle() -> None:
        graph.invoke({"messages": [HumanMessage(content=MESSAGE)]}, config)  # parks on interrupt()
        graph.invoke(Command(resume=ANSWER["pickedIds"][0]), config)

    return cycle, connection.close, graph


async def _short_sessions(rounds: int, cycles: int, folder: Path) -> list[tuple[float, float]]:
    """eve-py (SQLite FULL) and LangGraph + SqliteSaver on a short session, alternating rounds.

    Both sessions start with 10 cycles and gain `cycles` per round. The machine's load changes
    during a run; alternating `rounds` rounds of `cycles` cycles each exposes both to the same
    load. Returns (eve-py, LangGraph) seconds per cycle, per round.
    """
    store = await _sqlite(folder / "short.db", "FULL")
    runtime = Runtime(load_agent(APP), model=Timed(load_mock_model(APP)), store=store)
    session = await runtime.create_session()
    lang_cycle, close = _langgraph_cycle(folder / "short-langgraph.db")
    for _ in range(10):
        await _eve_cycle(runtime, session.id)
        lang_cycle()
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(cycles):
            await _eve_cycle(runtime, session.id)
        eve = (time.perf_counter() - started) / cycles
        started = time.perf_counter()
        for _ in range(cycles):
            lang_cycle()
        times.append((eve, (time.perf_counter() - started) / cycles))
    close()
    await store.aclose()
    return times


async def _sqlite(path: Path, synchronous: str) -> SessionStore:
    return await SQLiteSessionStore.open(path, synchronous=synchronous)  # type: ignore[arg-type]


async def _memory(path: Path) -> SessionStore:
    return MemorySessionStore()


def _langgraph_available() -> bool:
    try:
        import langgraph.checkpoint.sqlite  # noqa: F401
    except ImportError:
        return False
    return True


def _print(points: list[Point]) -> None:
    by_config: dict[str, list[Point]] = {}
    for point in points:
        by_config.setdefault(point.config, []).append(point)
    print(
        f"{'configuration':<17} {'history':>7} {'ms/cycle':>9} {'framework':>9} {'x shortest':>10} "
        f"{'commits':>8} {'durable':>8} {'JSON B':>8} {'stored B':>8} {'disk B':>9}"
    )
    for config, series in by_config.items():
        base = series[0].framework_ms_per_cycle
        for p in series:
            print(
                f"{config:<17} {p.history:>7} {p.ms_per_cycle:>9.2f} {p.framework_ms_per_cycle:>9.2f} "
                f"{p.framework_ms_per_cycle / base:>10.2f} {p.commits_per_cycle:>8} {p.durable_per_cycle:>8} "
                f"{p.json_bytes_per_cycle:>8} {p.stored_bytes_per_cycle:>8} "
                f"{p.disk_bytes_per_cycle:>9}"
            )
    print("(framework: ms/cycle less the mock model's own time; x shortest compares framework times)")
    lang = {p.history: p for p in by_config.get("langgraph-sqlite", [])}
    if lang:
        print("\neve-py SQLite FULL vs LangGraph + SqliteSaver (time per cycle, lower is better for eve-py):")
        for p in by_config.get("sqlite-full", []):
            if p.history in lang:
                other = lang[p.history]
                print(
                    f"  history {p.history:>5}: eve-py {p.ms_per_cycle:.2f} ms, LangGraph {other.ms_per_cycle:.2f} ms, "
                    f"eve-py is {other.ms_per_cycle / p.ms_per_cycle:.1f}x faster"
                )


def _file_bytes(path: Path) -> int:
    """The database's size once its WAL is checkpointed into it."""
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size


async def _disk_per_parked_session(sessions: int, folder: Path) -> dict[str, float]:
    """Bytes on disk per parked session: `sessions` fresh sessions (threads), each parked once."""
    path = folder / "parked.db"
    store = await _sqlite(path, "FULL")
    runtime = Runtime(load_agent(APP), model=load_mock_model(APP), store=store)
    empty = _file_bytes(path)
    for _ in range(sessions):
        session = await runtime.create_session()
        assert (await session.send(MESSAGE)).status == "waiting"
    await store.aclose()
    sizes = {"eve-py SQLite": (_file_bytes(path) - empty) / sessions}
    if _langgraph_available():
        from langchain_core.messages import HumanMessage

        lang_path = folder / "parked-langgraph.db"
        _, close, graph = _langgraph_graph(lang_path)
        empty = _file_bytes(lang_path)
        for n in range(sessions):
            graph.invoke({"messages": [HumanMessage(content=MESSAGE)]}, {"configurable": {"thread_id": f"t{n}"}})
        close()
        sizes["LangGraph SqliteSaver"] = (_file_bytes(lang_path) - empty) / sessions
    return sizes


async def _run(lengths: list[int], cycles: int, rounds: int, langgraph_max: int) -> list[Point]:
    with tempfile.TemporaryDirectory(prefix="eve-history-") as raw:
        folder = Path(raw)
        if _langgraph_available():
            times = await _short_sessions(7, cycles, folder)
            ratios = sorted(lang / eve for eve, lang in times)
            print(
                f"short sessions (10 to {10 + 7 * cycles} cycles), alternating rounds: LangGraph + SqliteSaver "
                f"time / eve-py SQLite FULL time = {ratios[len(ratios) // 2]:.2f} (median of {len(ratios)} rounds; "
                f"min {ratios[0]:.2f}, max {ratios[-1]:.2f}); ms per cycle, medians: eve-py "
                f"{statistics.median(eve for eve, _ in times) * 1000:.2f}, LangGraph "
                f"{statistics.median(lang for _, lang in times) * 1000:.2f}"
            )
        return await _interleaved(lengths, cycles, rounds, langgraph_max, folder)


def main() -> int:
    """Parse arguments, run, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lengths", default="10,100,1000,5000", help="history lengths, in cycles")
    parser.add_argument("--cycles", type=int, default=10, help="timed cycles per length and round (default 10)")
    parser.add_argument("--rounds", type=int, default=4, help="alternating rounds (default 4)")
    parser.add_argument("--langgraph-max", type=int, default=1000, help="longest history LangGraph is grown to")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--disk", type=int, metavar="N", help="only measure disk per parked session, over N sessions")
    args = parser.parse_args()
    if args.disk:
        with tempfile.TemporaryDirectory(prefix="eve-disk-") as raw:
            sizes = anyio.run(_disk_per_parked_session, args.disk, Path(raw))
        for name, size in sizes.items():
            print(f"{name:<22} {size:8.0f} bytes per parked session ({args.disk} sessions)")
        return 0
    lengths = sorted(int(n) for n in args.lengths.split(","))
    points = anyio.run(_run, lengths, args.cycles, args.rounds, args.langgraph_max)
    if args.json:
        print(json.dumps([asdict(p) for p in points], indent=2))
    else:
        _print(points)
    return 0


if __name__ == "__main__":
    os.environ.pop("EVE_MODEL", None)
    raise SystemExit(main())
