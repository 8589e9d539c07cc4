"""History scaling benchmark: what one park+resume cycle costs as a session's conversation grows.

Run by hand (not part of the test suite):

```
.venv/bin/python bench/history_scaling.py                      # lengths 10, 100, 1000, 5000
.venv/bin/python bench/history_scaling.py --lengths 10,1000 --cycles 20 --json
```

One **cycle** is what a person does with the `fixtures/agent-tools-hitl` app on its mock model,
in one session that already holds `L` earlier cycles: `send("help me pick a template")` parks on
the typed picker, and `respond([{requestId, value: {pickedIds: ["tpl_blue"]}}])` resumes it:
the `note` tool runs and the model answers. A cycle appends 6 messages and about 17 events.

For each history length `L` and each configuration, the session is first grown to `L` cycles,
then `--cycles` more are timed. Per configuration it prints the time per cycle, how many store
commits a cycle makes (every commit is one fsync with `synchronous=FULL`), the JSON bytes eve-py
hands the store per cycle (record + appended messages + events), and the bytes the process
really wrote to disk per cycle (`write_bytes` of `/proc/self/io`, which counts page writes,
journal included). Configurations, in one process and one run:

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
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any

import anyio

from eve_py import Runtime, load_agent
from eve_py.agent import load_mock_model
from eve_py.events import Event, dump_event
from eve_py.models.base import Model, ModelRequest, ModelResponse
from eve_py.models.messages import Message, dump_message
from eve_py.sessions import MemorySessionStore, SessionRecord, SessionStore, SQLiteSessionStore
from eve_py.sessions.codec import encode

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
    """What the SQLite store writes: the record and each write's log chunks, encoded (`eve_py.sessions.codec`)."""
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


class Counting:
    """A `SessionStore` wrapper counting commits and the JSON bytes handed to the store."""

    def __init__(self, inner: SessionStore) -> None:
        self.inner = inner
        self.commits = 0
        self.durable = 0
        self.json_bytes = 0
        self.stored_bytes = 0

    async def create(self, record: SessionRecord, events: Sequence[Event]) -> SessionRecord:
        return await self.inner.create(record, events)

    async def load(self, session_id: str) -> SessionRecord:
        return await self.inner.load(session_id)

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
        parts = [
            [record.model_dump_json(by_alias=True, exclude_none=True)],
            [dump_event(e) for e in events],
            [dump_message(m) for m in messages],
        ]
        self.json_bytes += sum(len(text) for part in parts for text in part)
        self.stored_bytes += sum(len(encode("\n".join(part))) for part in parts if part)
        return await self.inner.commit(record, events, messages, durable=durable)

    async def read_events(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Event]:
        return await self.inner.read_events(session_id, start, stop)

    async def read_messages(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Message]:
        return await self.inner.read_messages(session_id, start, stop)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _eve_cycle(runtime: Runtime, session_id: str) -> None:
    session = await runtime.get_session(session_id)
    parked = await session.send(MESSAGE)
    assert parked.status == "waiting", parked
    request_id = parked.input_requests[0].request_id
    done = await session.respond([{"requestId": request_id, "value": ANSWER}])
    assert done.status == "completed" and done.message == "Recorded your pick: tpl_blue.", done


async def _eve_points(
    name: str, make_store: Callable[[Path], Awaitable[SessionStore]], lengths: list[int], cycles: int, folder: Path
) -> list[Point]:
    store = Counting(await make_store(folder / f"{name}.db"))
    model = Timed(load_mock_model(APP))
    runtime = Runtime(load_agent(APP), model=model, store=store)
    session = await runtime.create_session()
    done = 0
    points = []
    for length in lengths:
        while done < length:
            await _eve_cycle(runtime, session.id)
            done += 1
        commits, durable, json_bytes, stored = store.commits, store.durable, store.json_bytes, store.stored_bytes
        disk, modelled = _written(), model.seconds
        started = time.perf_counter()
        for _ in range(cycles):
            await _eve_cycle(runtime, session.id)
        elapsed = time.perf_counter() - started
        done += cycles
        points.append(
            Point(
                config=name,
                history=length,
                ms_per_cycle=round(elapsed * 1000 / cycles, 3),
                framework_ms_per_cycle=round((elapsed - (model.seconds - modelled)) * 1000 / cycles, 3),
                commits_per_cycle=round((store.commits - commits) / cycles, 2),
                durable_per_cycle=round((store.durable - durable) / cycles, 2),
                json_bytes_per_cycle=round((store.json_bytes - json_bytes) / cycles),
                stored_bytes_per_cycle=round((store.stored_bytes - stored) / cycles),
                disk_bytes_per_cycle=round((_written() - disk) / cycles),
            )
        )
        print(f"  {name:<16} history {length:>5}: {points[-1].ms_per_cycle:8.2f} ms/cycle", file=sys.stderr)
    await store.aclose()
    return points


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


def _langgraph_points(lengths: list[int], cycles: int, folder: Path) -> list[Point]:
    cycle, close = _langgraph_cycle(folder / "langgraph.db")
    points = []
    done = 0
    for length in lengths:
        while done < length:
            cycle()
            done += 1
        disk = _written()
        started = time.perf_counter()
        for _ in range(cycles):
            cycle()
        elapsed = time.perf_counter() - started
        done += cycles
        points.append(
            Point(
                config="langgraph-sqlite",
                history=length,
                ms_per_cycle=round(elapsed * 1000 / cycles, 3),
                framework_ms_per_cycle=round(elapsed * 1000 / cycles, 3),
                commits_per_cycle=float("nan"),
                durable_per_cycle=float("nan"),
                json_bytes_per_cycle=float("nan"),
                stored_bytes_per_cycle=float("nan"),
                disk_bytes_per_cycle=round((_written() - disk) / cycles),
            )
        )
        print(f"  langgraph-sqlite history {length:>5}: {points[-1].ms_per_cycle:8.2f} ms/cycle", file=sys.stderr)
    close()
    return points


async def _short_sessions(rounds: int, cycles: int, folder: Path) -> list[float]:
    """eve-py (SQLite FULL) and LangGraph + SqliteSaver on a short session (10 cycles), alternating rounds.

    The machine's load changes during a run; alternating `rounds` rounds of `cycles` cycles each
    exposes both to the same load. Returns LangGraph's time over eve-py's, per round.
    """
    store = await _sqlite(folder / "short.db", "FULL")
    runtime = Runtime(load_agent(APP), model=load_mock_model(APP), store=store)
    session = await runtime.create_session()
    lang_cycle, close = _langgraph_cycle(folder / "short-langgraph.db")
    for _ in range(10):
        await _eve_cycle(runtime, session.id)
        lang_cycle()
    ratios = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(cycles):
            await _eve_cycle(runtime, session.id)
        eve = time.perf_counter() - started
        started = time.perf_counter()
        for _ in range(cycles):
            lang_cycle()
        ratios.append((time.perf_counter() - started) / eve)
    close()
    await store.aclose()
    return ratios


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


async def _run(lengths: list[int], cycles: int, langgraph_max: int) -> list[Point]:
    points: list[Point] = []
    with tempfile.TemporaryDirectory(prefix="eve-history-") as raw:
        folder = Path(raw)
        if _langgraph_available():
            ratios = sorted(await _short_sessions(7, cycles, folder))
            print(
                f"short sessions, alternating rounds: LangGraph + SqliteSaver time / eve-py SQLite FULL time = "
                f"{ratios[len(ratios) // 2]:.2f} (median of {len(ratios)} rounds; min {ratios[0]:.2f}, "
                f"max {ratios[-1]:.2f})"
            )
        points += await _eve_points("sqlite-full", lambda p: _sqlite(p, "FULL"), lengths, cycles, folder)
        points += await _eve_points("sqlite-normal", lambda p: _sqlite(p, "NORMAL"), lengths, cycles, folder)
        points += await _eve_points("memory", _memory, lengths, cycles, folder)
        if _langgraph_available():
            points += _langgraph_points([n for n in lengths if n <= langgraph_max], cycles, folder)
        else:
            print("LangGraph is not installed: pip install langgraph langgraph-checkpoint-sqlite", file=sys.stderr)
    return points


def main() -> int:
    """Parse arguments, run, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lengths", default="10,100,1000,5000", help="history lengths, in cycles")
    parser.add_argument("--cycles", type=int, default=20, help="timed cycles per length (default 20)")
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
    points = anyio.run(_run, lengths, args.cycles, args.langgraph_max)
    if args.json:
        print(json.dumps([asdict(p) for p in points], indent=2))
    else:
        _print(points)
    return 0


if __name__ == "__main__":
    os.environ.pop("EVE_MODEL", None)
    raise SystemExit(main())
