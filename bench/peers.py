"""eve-py against LangGraph, same flow, same run: a person's park + resume cycle on SQLite and PostgreSQL.

Run by hand (not part of the test suite; needs the `bench` extra: `pip install -e '.[bench]'`):

```
.venv/bin/python bench/peers.py                           # SQLite: fresh, 10-turn, 64 at once
.venv/bin/python bench/peers.py --store postgres          # a throwaway PostgreSQL server
.venv/bin/python bench/peers.py --fsyncs                  # + fsyncs per cycle, counted by strace
.venv/bin/python bench/peers.py --json
```

A **cycle** is what a new user of either library writes for the `fixtures/agent-tools-hitl`
flow: create a session (LangGraph: a new `thread_id`), send "help me pick a template" (the
model calls the typed picker `ask_question`; the turn parks: eve-py's `send` returns `waiting`,
LangGraph's node calls `interrupt()`), and answer it (eve-py's `respond`, LangGraph's
`Command(resume=...)`): the `note` tool runs and the model answers. eve-py runs the app on its
own mock model; LangGraph's node appends the same messages (the tool call, its result, the note
call and result, the answer) to an `add_messages` channel. Both stores sync every commit they
call durable: eve-py's SQLite store with `synchronous=FULL` (its default), LangGraph's
`SqliteSaver` / `AsyncSqliteSaver` on a WAL connection with `synchronous=FULL`.

Scenarios, each timed in alternating rounds (eve-py, LangGraph, eve-py, ...), ratios printed as
the median over rounds of LangGraph's time per cycle / eve-py's:

- `fresh`: one session at a time, each cycle on a new session (`SqliteSaver`, `PostgresSaver`);
- `ten`: one session at a time, the 11th cycle of sessions grown to 10 cycles beforehand;
- `concurrent`: `--concurrency` (64) asyncio tasks at once on one file or database, each doing
  fresh-session cycles (`AsyncSqliteSaver`, `AsyncPostgresSaver` with a pool of as many
  connections as eve-py's store has).

PostgreSQL is a throwaway server started from Debian's binaries as `tests/postgres.py` does (fsync
off, `synchronous_commit` off: the figures count round trips and CPU, not the disk), or `--url`.
On PostgreSQL each round also prints, per cycle, the CPU time of the server processes serving
each side's database (read from `/proc`: a server on this machine) and the statements each
side's client sent (`execute` calls, each row of an `executemany` counted) with, for LangGraph,
the pipelines they went in.
With `--fsyncs`, every SQLite scenario is run again in a child process under `strace -f -c` to
count `fsync`/`fdatasync` calls per cycle. Each round also prints the process CPU time per cycle
(`time.process_time`: every thread of this process, eve-py's store writer included; not a
PostgreSQL server's), which moves less than wall time with what else the machine runs. Another
tree's eve-py is measured with `PYTHONPATH=that/tree`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Annotated, Any

import anyio

REPO = Path(__file__).resolve().parent.parent
sys.path.append(str(REPO))  # after PYTHONPATH: another tree's eve_py may be measured

from eve_py import Runtime, load_agent  # noqa: E402
from eve_py.agent import load_mock_model  # noqa: E402
from eve_py.sessions import SessionStore, SQLiteSessionStore  # noqa: E402

APP = REPO / "fixtures" / "agent-tools-hitl"
MESSAGE = "help me pick a template"
ANSWER = {"pickedIds": ["tpl_blue"]}
TARGETS = {
    ("sqlite", "fresh"): 5.0,
    ("sqlite", "ten"): 6.0,
    ("sqlite", "concurrent"): 10.0,
    ("postgres", "fresh"): 3.0,
    ("postgres", "ten"): 3.0,
    ("postgres", "concurrent"): 5.0,
}
"""Issue 25's targets: LangGraph's time per cycle / eve-py's, at least."""

Cycle = Callable[[], Awaitable[None]]


# --- eve-py -------------------------------------------------------------------------------------


class Eve:
    """eve-py on one store: a runtime with the app's mock model."""

    database: str | None = None
    """With PostgreSQL, the store's database URL (its server processes' CPU is measured)."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self.model = load_mock_model(APP)
        self.runtime = Runtime(load_agent(APP), model=self.model, store=store)

    async def cycle(self, session_id: str | None = None) -> None:
        """One cycle: a fresh session, or `session_id` opened again by id."""
        runtime = self.runtime
        session = await runtime.create_session() if session_id is None else await runtime.get_session(session_id)
        parked = await session.send(MESSAGE)
        assert parked.status == "waiting", parked
        done = await session.respond([{"requestId": parked.input_requests[0].request_id, "value": ANSWER}])
        assert done.status == "completed", done
        requests = getattr(self.model, "requests", None)
        if isinstance(requests, list):
            requests.clear()  # MockModel keeps every request it got

    async def grown(self, turns: int) -> str:
        session = await self.runtime.create_session()
        for _ in range(turns):
            await self.cycle(session.id)
        return session.id


# --- LangGraph ----------------------------------------------------------------------------------


def langgraph_builder() -> Any:
    """The flow as a LangGraph graph (not compiled): a node that parks on `interrupt()` and then answers."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: F401
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages
    from langgraph.types import interrupt
    from typing_extensions import TypedDict

    # The functional form: this module's postponed annotations would hide the reducer.
    State = TypedDict("State", {"messages": Annotated[list[Any], add_messages]})  # noqa: UP013
    counter = {"n": 0}

    def turn(state: Any) -> dict[str, Any]:
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
    return builder


class LangGraph:
    """A compiled graph on a checkpointer; `sync` graphs run on the loop's thread (as a script would)."""

    database: str | None = None

    def __init__(self, graph: Any, *, sync: bool) -> None:
        from langchain_core.messages import HumanMessage
        from langgraph.types import Command

        self.graph, self.sync = graph, sync
        self._human, self._command = HumanMessage, Command
        self._threads = 0

    async def cycle(self, thread_id: str | None = None) -> None:
        if thread_id is None:
            self._threads += 1
            thread_id = f"t{os.getpid()}-{self._threads}-{time.monotonic_ns()}"
        config = {"configurable": {"thread_id": thread_id}}
        first, second = {"messages": [self._human(content=MESSAGE)]}, self._command(resume=ANSWER["pickedIds"][0])
        if self.sync:
            parked = self.graph.invoke(first, config)
            done = self.graph.invoke(second, config)
        else:
            parked = await self.graph.ainvoke(first, config)
            done = await self.graph.ainvoke(second, config)
        assert "__interrupt__" in parked and "__interrupt__" not in done, (parked, done)

    async def grown(self, turns: int) -> str:
        self._threads += 1
        thread_id = f"g{os.getpid()}-{self._threads}"
        for _ in range(turns):
            await self.cycle(thread_id)
        return thread_id


# --- stores -------------------------------------------------------------------------------------


async def sqlite_pair(stack: AsyncExitStack, folder: Path, *, concurrent: bool) -> tuple[Eve, LangGraph]:
    """eve-py's SQLite store and LangGraph's (sync, or async for `concurrent`) on new files in `folder`."""
    tag = f"{time.monotonic_ns()}"
    store = await SQLiteSessionStore.open(folder / f"eve-{tag}.db")
    stack.push_async_callback(store.aclose)
    path = folder / f"langgraph-{tag}.db"
    if concurrent:
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        connection = await aiosqlite.connect(path)
        await connection.execute("PRAGMA journal_mode=WAL")
        await connection.execute("PRAGMA synchronous=FULL")
        stack.push_async_callback(connection.close)
        saver: Any = AsyncSqliteSaver(connection)
    else:
        from langgraph.checkpoint.sqlite import SqliteSaver

        sync_connection = sqlite3.connect(path, check_same_thread=False)
        sync_connection.execute("PRAGMA journal_mode=WAL")
        sync_connection.execute("PRAGMA synchronous=FULL")
        stack.callback(sync_connection.close)
        saver = SqliteSaver(sync_connection)
    return Eve(store), LangGraph(langgraph_builder().compile(checkpointer=saver), sync=not concurrent)


async def postgres_pair(stack: AsyncExitStack, url: str, lg_url: str, *, concurrent: bool) -> tuple[Eve, LangGraph]:
    """eve-py's PostgreSQL store and LangGraph's `PostgresSaver` / `AsyncPostgresSaver` (pooled)."""
    from eve_py.sessions.postgres import PostgresSessionStore

    store = await PostgresSessionStore.open(url)
    stack.push_async_callback(store.aclose)
    size = 8  # PostgresSessionStore's default max_size
    if concurrent:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import AsyncConnectionPool

        pool = AsyncConnectionPool(
            lg_url, min_size=size, max_size=size, kwargs={"autocommit": True, "row_factory": dict_row}, open=False
        )
        await pool.open()
        stack.push_async_callback(pool.close)
        saver: Any = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        await saver.setup()
    else:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row

        connection = psycopg.connect(lg_url, autocommit=True, row_factory=dict_row)
        stack.callback(connection.close)
        saver = PostgresSaver(connection)
        saver.setup()
    eve, peer = Eve(store), LangGraph(langgraph_builder().compile(checkpointer=saver), sync=not concurrent)
    eve.database, peer.database = url, lg_url
    return eve, peer


class Statements:
    """Counts the statements psycopg sends (every `execute`, every row of an `executemany`) and pipelines."""

    def __init__(self) -> None:
        self.statements = self.pipelines = 0
        self._patched: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> Statements:
        import psycopg

        def counting(cls: Any, name: str, rows: bool) -> None:
            original = getattr(cls, name)
            self._patched.append((cls, name, original))
            if rows:

                def many(cursor: Any, query: Any, params_seq: Any, *args: Any, **kwargs: Any) -> Any:
                    params_seq = list(params_seq)
                    self.statements += len(params_seq)
                    return original(cursor, query, params_seq, *args, **kwargs)

                setattr(cls, name, many)
            else:

                def one(target: Any, *args: Any, **kwargs: Any) -> Any:
                    if name == "pipeline":
                        self.pipelines += 1
                    else:
                        self.statements += 1
                    return original(target, *args, **kwargs)

                setattr(cls, name, one)

        for cls in (psycopg.Cursor, psycopg.AsyncCursor):
            counting(cls, "execute", False)
            counting(cls, "executemany", True)
        for cls in (psycopg.Connection, psycopg.AsyncConnection):
            counting(cls, "pipeline", False)
        return self

    def __exit__(self, *exc: object) -> None:
        for cls, name, original in reversed(self._patched):
            setattr(cls, name, original)


async def server_cpu(database: str | None) -> float:
    """CPU seconds so far of the server processes serving `database` (0 without one, or not on this machine)."""
    if database is None:
        return 0.0
    import psycopg

    async with await psycopg.AsyncConnection.connect(database, autocommit=True) as conn:
        query = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        pids = [row[0] for row in await (await conn.execute(query)).fetchall()]
    return sum(process_cpu(pid) or 0.0 for pid in pids)


def process_cpu(pid: int) -> float | None:
    """A local process's CPU seconds so far (user + system, from `/proc`), or None if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- timing -------------------------------------------------------------------------------------


async def timed_serial(cycle: Callable[[str | None], Awaitable[None]], ids: list[str | None]) -> float:
    """Seconds per cycle, one at a time, over `ids` (None: a fresh session each)."""
    started = time.perf_counter()
    for session_id in ids:
        await cycle(session_id)
    return (time.perf_counter() - started) / len(ids)


async def timed_concurrent(cycle: Callable[[str | None], Awaitable[None]], n: int, concurrency: int) -> float:
    """Seconds per cycle (wall time / cycles) with `concurrency` tasks doing `n` fresh-session cycles."""
    remaining = iter(range(n))

    async def worker() -> None:
        for _ in remaining:
            await cycle(None)

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(concurrency):
            group.start_soon(worker)
    return (time.perf_counter() - started) / n


async def scenario(
    name: str, eve: Eve, peer: LangGraph, *, cycles: int, rounds: int, concurrency: int
) -> dict[str, Any]:
    """Alternating rounds of one scenario; per round eve-py's and LangGraph's ms per cycle."""
    if name == "concurrent":
        await timed_concurrent(eve.cycle, concurrency, concurrency)  # warm-up
        await timed_concurrent(peer.cycle, concurrency, concurrency)
    else:
        await timed_serial(eve.cycle, [None] * 10)
        await timed_serial(peer.cycle, [None] * 10)
    times: list[tuple[float, float]] = []
    cpu: list[tuple[float, float]] = []
    server: list[tuple[float, float]] = []
    sent: list[tuple[float, float]] = [(0.0, 0.0), (0.0, 0.0)]
    for _ in range(rounds):
        pair, pair_cpu, pair_server = [], [], []
        for side, subject in enumerate((eve, peer)):
            if name == "ten":
                ids: list[str | None] = [await subject.grown(10) for _ in range(max(3, cycles // 10))]
            else:
                ids = [None] * (cycles * 2 if name == "concurrent" else cycles)
            serving = await server_cpu(subject.database)
            with Statements() as counted:
                started = time.process_time()  # this process's threads; not a database server's
                if name == "concurrent":
                    pair.append(await timed_concurrent(subject.cycle, len(ids), concurrency))
                else:
                    pair.append(await timed_serial(subject.cycle, ids))
                pair_cpu.append((time.process_time() - started) / len(ids))
            pair_server.append((await server_cpu(subject.database) - serving) / len(ids))
            sent[side] = (counted.statements / len(ids), counted.pipelines / len(ids))
        times.append((pair[0], pair[1]))
        cpu.append((pair_cpu[0], pair_cpu[1]))
        server.append((pair_server[0], pair_server[1]))
    ratios = [theirs / ours for ours, theirs in times]
    postgres = {
        "eve_server_cpu_ms": [round(ours * 1000, 3) for ours, _ in server],
        "langgraph_server_cpu_ms": [round(theirs * 1000, 3) for _, theirs in server],
        "statements": [round(sent[0][0], 2), round(sent[1][0], 2)],
        "pipelines": [round(sent[0][1], 2), round(sent[1][1], 2)],
    }
    return (postgres if eve.database is not None else {}) | {
        "scenario": name,
        "eve_ms": [round(ours * 1000, 3) for ours, _ in times],
        "langgraph_ms": [round(theirs * 1000, 3) for _, theirs in times],
        "eve_cpu_ms": [round(ours * 1000, 3) for ours, _ in cpu],
        "langgraph_cpu_ms": [round(theirs * 1000, 3) for _, theirs in cpu],
        "ratio": statistics.median(ratios),
        "ratios": [round(r, 2) for r in ratios],
    }


async def run_store(kind: str, args: argparse.Namespace, folder: Path) -> list[dict[str, Any]]:
    """Every scenario on one store kind."""
    results = []
    async with AsyncExitStack() as outer:
        if kind == "postgres":
            urls = await postgres_urls(outer, args.url)
        for name in args.scenarios:
            concurrent = name == "concurrent"
            async with AsyncExitStack() as stack:
                if kind == "sqlite":
                    eve, peer = await sqlite_pair(stack, folder, concurrent=concurrent)
                else:
                    eve, peer = await postgres_pair(stack, *urls, concurrent=concurrent)
                print(f"  {kind} {name} ...", file=sys.stderr)
                result = await scenario(
                    name, eve, peer, cycles=args.cycles, rounds=args.rounds, concurrency=args.concurrency
                )
            result["store"] = kind
            result["target"] = TARGETS[kind, name]
            results.append(result)
    return results


async def postgres_urls(stack: AsyncExitStack, url: str | None) -> tuple[str, str]:
    """eve-py's (migrated) database and LangGraph's, on `url` or a throwaway server."""
    if url is not None:
        return url, url
    from tests.postgres import PostgresServer

    server = PostgresServer.create()
    if server is None:
        raise SystemExit("PostgreSQL is not installed (apt-get install postgresql), and no --url was given")
    await anyio.to_thread.run_sync(server.start)
    stack.push_async_callback(anyio.to_thread.run_sync, server.stop)
    eve_url = await anyio.to_thread.run_sync(server.database)
    lg_url = await anyio.to_thread.run_sync(lambda: server.database(migrated=False))
    return eve_url, lg_url


# --- fsyncs -------------------------------------------------------------------------------------


def count_fsyncs(subject: str, name: str, cycles: int, concurrency: int) -> float:
    """fsync + fdatasync calls per cycle of one subject and scenario, counted by `strace -f` in a child.

    Setup (opening files, growing sessions for `ten`) is counted in a second child that stops
    before the cycles, and subtracted.
    """
    counts = []
    for timed in (0, cycles):
        with tempfile.TemporaryDirectory(prefix="eve-peers-") as tmp:
            out = Path(tmp) / "strace.txt"
            command = [
                "strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "-o", str(out),
                sys.executable, __file__, "--child", subject, name, str(timed), str(concurrency),
                "--grow", str(cycles), "--folder", tmp,
            ]  # fmt: skip
            subprocess.run(command, check=True, capture_output=True)
            total = 0
            for line in out.read_text().splitlines():
                match = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(fsync|fdatasync)$", line)
                if match:
                    total += int(match.group(1))
            counts.append(total)
    return (counts[1] - counts[0]) / cycles


async def child_main(argv: list[str]) -> None:
    subject, name, timed, concurrency = argv[0], argv[1], int(argv[2]), int(argv[3])
    grow = int(argv[argv.index("--grow") + 1])
    folder = Path(argv[argv.index("--folder") + 1])
    async with AsyncExitStack() as stack:
        eve, peer = await sqlite_pair(stack, folder, concurrent=name == "concurrent")
        runner: Eve | LangGraph = eve if subject == "eve" else peer
        ids: list[str | None] = [None] * grow
        if name == "ten":
            ids = [await runner.grown(10) for _ in range(grow)]
        if timed:
            if name == "concurrent":
                await timed_concurrent(runner.cycle, timed, concurrency)
            else:
                await timed_serial(runner.cycle, ids[:timed])


# --- main ---------------------------------------------------------------------------------------


def print_report(results: list[dict[str, Any]]) -> None:
    print("LangGraph's time per cycle / eve-py's (median of alternating rounds; higher is better for eve-py)")
    for r in results:
        verdict = "met" if r["ratio"] >= r["target"] else "NOT met"
        print(
            f"  {r['store']:<8} {r['scenario']:<10} {r['ratio']:6.2f}x   target >= {r['target']:g}x {verdict:<7}"
            f"  eve-py ms/cycle {', '.join(f'{v:.2f}' for v in r['eve_ms'])}"
            f"  LangGraph {', '.join(f'{v:.2f}' for v in r['langgraph_ms'])}"
        )
        print(
            f"  {'':<19} process CPU ms/cycle: eve-py {', '.join(f'{v:.2f}' for v in r['eve_cpu_ms'])}"
            f"  LangGraph {', '.join(f'{v:.2f}' for v in r['langgraph_cpu_ms'])}"
        )
        if "eve_server_cpu_ms" in r:
            keys = ("eve_server_cpu_ms", "langgraph_server_cpu_ms")
            ours, theirs = (", ".join(f"{v:.2f}" for v in r[k]) for k in keys)
            print(f"  {'':<19} PostgreSQL server CPU ms/cycle: eve-py {ours}  LangGraph {theirs}")
            print(
                f"  {'':<19} statements/cycle: eve-py {r['statements'][0]:.1f}, LangGraph {r['statements'][1]:.1f}"
                f" in {r['pipelines'][1]:.1f} pipelines"
            )
        if "fsyncs" in r:
            print(f"  {'':<19} fsyncs/cycle: eve-py {r['fsyncs'][0]:.2f}, LangGraph {r['fsyncs'][1]:.2f}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        anyio.run(child_main, argv[1:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--store", choices=("sqlite", "postgres", "both"), default="sqlite")
    parser.add_argument("--url", help="with --store postgres: a database to use instead of a throwaway server")
    parser.add_argument("--scenarios", default="fresh,ten,concurrent", help="comma-separated (fresh,ten,concurrent)")
    parser.add_argument("--cycles", type=int, default=100, help="cycles per subject per round (default 100)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--concurrency", type=int, default=64, help="tasks at once in `concurrent` (default 64)")
    parser.add_argument("--fsyncs", action="store_true", help="count fsyncs per cycle with strace (SQLite)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    args.scenarios = [s for s in args.scenarios.split(",") if s]
    kinds = ["sqlite", "postgres"] if args.store == "both" else [args.store]
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="eve-peers-") as tmp:
        for kind in kinds:
            results += anyio.run(run_store, kind, args, Path(tmp))
    if args.fsyncs:
        for r in results:
            if r["store"] == "sqlite":
                n = max(20, args.cycles // 2) if r["scenario"] != "ten" else 20
                r["fsyncs"] = [count_fsyncs(s, r["scenario"], n, args.concurrency) for s in ("eve", "langgraph")]
    print(json.dumps(results) if args.json else "", end="\n" if args.json else "")
    if not args.json:
        print(f"eve-py vs LangGraph, python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}")
        print_report(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
