"""A session store's own cost per park + resume cycle: one real cycle's store calls, replayed on new sessions.

Run by hand (not part of the test suite):

```
.venv/bin/python bench/store_cycle.py                         # SQLite and memory, one session at a time
.venv/bin/python bench/store_cycle.py --concurrency 64        # 64 sessions at once
.venv/bin/python bench/store_cycle.py --store postgres        # a throwaway PostgreSQL server (or --url)
PYTHONPATH=../other-tree .venv/bin/python bench/store_cycle.py   # another tree's eve-py
```

`bench/peers.py`'s cycle (create a session, send, answer) is run once on `MemorySessionStore`
with every store call recorded (`create` and five `commit`s at `3676429`; the script prints
them), with their records, events, messages and `durable` flags. Those calls are then replayed, unchanged but for the
session id, on each store named, so the figures are the store's work alone (no agent loop, no
model, no schema checks): process CPU time per cycle (every thread, the SQLite writer's
included), the event loop thread's CPU time, and wall time. On a machine shared with other jobs
CPU time moves far less than wall time; compare trees in alternating runs. PostgreSQL is a
throwaway server as in `bench/peers.py`, or `--url`; the CPU time of the server processes
serving the store's database is printed apart (read from `/proc`: a server on this machine).
"""

from __future__ import annotations

import argparse
import secrets
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio

sys.path.append(str(Path(__file__).resolve().parent))  # peers.py, beside this file
sys.path.append(str(Path(__file__).resolve().parent.parent))

import peers  # noqa: E402

from eve_py.protocol import Event  # noqa: E402
from eve_py.protocol.messages import Message  # noqa: E402
from eve_py.sessions import MemorySessionStore, SessionRecord, SessionStore, SQLiteSessionStore  # noqa: E402

Call = tuple[str, SessionRecord | None, list[Event], list[Message], bool]


class Recorder(MemorySessionStore):
    """A memory store that records every `create`, `load` and `commit` it is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[Call] = []
        self._committing = False

    async def create(self, record: SessionRecord, events: Sequence[Event], *, durable: bool = True) -> SessionRecord:
        self.calls.append(("create", record, list(events), [], durable))
        return await super().create(record, events, durable=durable)

    async def load(self, session_id: str) -> SessionRecord:
        if not self._committing:  # not the memory store's own read inside `commit`
            self.calls.append(("load", None, [], [], False))
        return await super().load(session_id)

    async def commit(
        self, record: SessionRecord, events: Sequence[Event], messages: Sequence[Message] = (), *, durable: bool = True
    ) -> SessionRecord:
        self.calls.append(("commit", record, list(events), list(messages), durable))
        self._committing = True
        try:
            return await super().commit(record, events, messages, durable=durable)
        finally:
            self._committing = False


async def record_cycle() -> list[Call]:
    """The store calls of one fresh cycle (the second one, once everything is warm)."""
    recorder = Recorder()
    eve = peers.Eve(recorder)
    await eve.cycle()
    recorder.calls.clear()
    await eve.cycle()
    return recorder.calls


async def replay(store: SessionStore, calls: list[Call], first: int, cycles: int, concurrency: int) -> None:
    """`cycles` replays of `calls`, each on a new session id, `concurrency` at a time."""
    numbers = iter(range(first, first + cycles))
    run = secrets.token_hex(4)  # new ids on a database that earlier runs used (`--url`)

    async def worker() -> None:
        for n in numbers:
            session_id = f"ses_replay{run}{n:09d}"
            for kind, record, events, messages, durable in calls:
                if kind == "load":
                    await store.load(session_id)
                    continue
                assert record is not None
                renamed = record.model_copy(update={"id": session_id})
                if kind == "create":
                    await store.create(renamed, events, durable=durable)
                else:
                    await store.commit(renamed, events, messages, durable=durable)

    async with anyio.create_task_group() as group:
        for _ in range(concurrency):
            group.start_soon(worker)


async def open_store(kind: str, folder: Path, stack: AsyncExitStack, args: argparse.Namespace) -> Any:
    """A new store of `kind` (sqlite, postgres, memory)."""
    if kind == "sqlite":
        return await SQLiteSessionStore.open(folder / f"s-{args.synchronous}.db", synchronous=args.synchronous)
    if kind == "postgres":
        from eve_py.sessions.postgres import PostgresSessionStore

        return await PostgresSessionStore.open((await peers.postgres_urls(stack, args.url))[0])
    return MemorySessionStore()


async def main(args: argparse.Namespace) -> None:
    calls = await record_cycle()
    print(f"one cycle's store calls: {', '.join(call[0] for call in calls)}")
    with tempfile.TemporaryDirectory(prefix="eve-store-cycle-") as folder:
        for kind in args.store.split(","):
            async with AsyncExitStack() as stack:
                await measure(kind, await open_store(kind, Path(folder), stack, args), calls, args)


async def backends_cpu(store: Any) -> dict[int, float]:
    """CPU seconds so far of each PostgreSQL server process serving the store's database (a local server's),
    but the one answering this query."""
    if not hasattr(store, "connection"):
        return {}
    import psycopg

    # A connection of its own, outside the store's pool: one of the pool's would leave out the
    # backend it is served by, which may be the one that ran the cycles.
    async with await psycopg.AsyncConnection.connect(store.url, autocommit=True) as conn:
        query = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        pids = [row[0] for row in await (await conn.execute(query)).fetchall()]
    return {pid: seconds for pid in pids if (seconds := peers.process_cpu(pid)) is not None}


async def measure(kind: str, store: Any, calls: list[Call], args: argparse.Namespace) -> None:
    """Warm `store` up, then print its CPU and wall time per replayed cycle."""
    await replay(store, calls, 0, 50, args.concurrency)  # warm-up
    server = await backends_cpu(store)
    cpu, thread, wall = time.process_time(), time.thread_time(), time.perf_counter()
    await replay(store, calls, 1_000_000, args.cycles, args.concurrency)
    per = 1000 / args.cycles
    cpu, thread, wall = (
        (now - then) * per
        for now, then in zip(
            (time.process_time(), time.thread_time(), time.perf_counter()), (cpu, thread, wall), strict=True
        )
    )
    server = {pid: seconds - server.get(pid, 0.0) for pid, seconds in (await backends_cpu(store)).items()}
    label = f"{kind} {args.synchronous}" if kind == "sqlite" else kind
    print(
        f"{label:<14} concurrency {args.concurrency:>3}: process CPU {cpu:.3f} ms/cycle,"
        f" event loop thread {thread:.3f}, wall {wall:.3f}"
        + (f", database server processes {sum(server.values()) * per:.3f}" if server else "")
    )
    await store.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--store", default="sqlite,memory", help="comma-separated: sqlite, postgres, memory")
    parser.add_argument("--url", help="with postgres: a migrated database to use instead of a throwaway server")
    parser.add_argument("--cycles", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--synchronous", choices=("FULL", "NORMAL"), default="FULL", help="the SQLite store's setting")
    anyio.run(main, parser.parse_args())
