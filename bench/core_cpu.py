"""The engine's own CPU per park + resume cycle, this tree against another commit, alternating rounds.

Run by hand (not part of the test suite):

```
.venv/bin/python bench/core_cpu.py                         # this tree only
.venv/bin/python bench/core_cpu.py --baseline main --rounds 5
.venv/bin/python bench/core_cpu.py --profile 300           # cProfile of 300 fresh memory-store cycles
.venv/bin/python bench/core_cpu.py --instructions --baseline main   # instructions per cycle (valgrind)
```

A cycle is `bench/peers.py`'s (create a session, send, answer the typed picker; the `note` tool
runs and the model answers), on the app's mock model. Each round runs one child process per
side, which times **process CPU** (`time.process_time`, both threads of the process: the loop
and the store's writer and worker threads) per cycle in three scenarios: fresh sessions one at
a time on `MemorySessionStore` (no storage at all: the core's floor), the same on a SQLite file
(`synchronous=FULL`), and 64 sessions at once on SQLite. CPU time, not wall time, so that other
jobs on a shared machine move the figures less; the sides alternate within a round and the
medians over rounds are compared.

`--instructions` counts what a fresh memory-store cycle executes instead of timing it, which the
machine's load does not move: `valgrind --tool=cachegrind` runs N and 3N cycles (after 30 to
warm up) in one process each, and (I(3N) - I(N)) / 2N is one cycle's instructions, both threads
of the process counted (`PYTHONHASHSEED=0`). Ids and times differ between runs, so two runs of
one tree differ by up to 1 % at the default N = 40 (a minute a run), less at `--cycles 100`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = ("memory fresh", "sqlite fresh", "sqlite 64 at once")


async def measure(cycles: int) -> dict[str, float]:
    """CPU ms per cycle in each scenario, in this process (eve_py as imported here)."""
    sys.path.insert(0, str(REPO / "bench"))
    import peers

    from eve_py.sessions import MemorySessionStore, SQLiteSessionStore

    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        for kind in ("memory", "sqlite"):
            store = MemorySessionStore() if kind == "memory" else await SQLiteSessionStore.open(Path(folder) / "e.db")
            try:
                eve = peers.Eve(store)
                await peers.timed_serial(eve.cycle, [None] * 30)  # warm-up: imports, caches
                started = time.process_time()
                await peers.timed_serial(eve.cycle, [None] * cycles)
                out[f"{kind} fresh"] = (time.process_time() - started) * 1000 / cycles
                if kind == "sqlite":
                    started = time.process_time()
                    await peers.timed_concurrent(eve.cycle, cycles, 64)
                    out["sqlite 64 at once"] = (time.process_time() - started) * 1000 / cycles
            finally:
                await store.aclose()
    return out


async def profile(cycles: int) -> None:
    """cProfile of `cycles` fresh memory-store cycles: the top functions by own time and by cumulative time."""
    import cProfile
    import pstats

    sys.path.insert(0, str(REPO / "bench"))
    import peers

    from eve_py.sessions import MemorySessionStore

    eve = peers.Eve(MemorySessionStore())
    await peers.timed_serial(eve.cycle, [None] * 30)
    profiler = cProfile.Profile()
    profiler.enable()
    await peers.timed_serial(eve.cycle, [None] * cycles)
    profiler.disable()
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(30)
    stats.sort_stats("cumtime").print_stats(50)


async def cycles_only(cycles: int) -> None:
    """30 fresh memory-store cycles to warm up, then `cycles` more: what `--instructions` counts."""
    sys.path.insert(0, str(REPO / "bench"))
    import peers

    from eve_py.sessions import MemorySessionStore

    eve = peers.Eve(MemorySessionStore())
    await peers.timed_serial(eve.cycle, [None] * (30 + cycles))


def _env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    if root != REPO:
        # Ahead of the editable install's path entry: the worktree's eve_py is the one imported.
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)
    return env


def instructions(root: Path, cycles: int) -> float:
    """Instructions per fresh memory-store cycle with eve_py from `root`, counted by cachegrind."""
    counts = []
    for n in (cycles, 3 * cycles):
        with tempfile.TemporaryDirectory() as folder:
            command = [
                "valgrind",
                "--tool=cachegrind",
                "--cache-sim=no",
                f"--cachegrind-out-file={folder}/out",
                sys.executable,
                str(REPO / "bench" / "core_cpu.py"),
                "--cycles-only",
                str(n),
            ]
            env = {**_env(root), "PYTHONHASHSEED": "0"}
            done = subprocess.run(command, check=True, capture_output=True, text=True, env=env, cwd=root)
        found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
        assert found is not None, done.stderr[-2000:]
        counts.append(int(found.group(1).replace(",", "")))
    return (counts[1] - counts[0]) / (2 * cycles)


def count(ref: str | None, cycles: int) -> None:
    """Instructions per fresh memory-store cycle: this tree, and `ref` when given."""
    sys.path.insert(0, str(REPO / "bench"))
    from server_load import worktree

    ours = instructions(REPO, cycles)
    if ref is None:
        print(f"instructions per fresh memory-store cycle: {ours / 1e6:.3f} M")
        return
    with worktree("baseline", ref) as side:
        theirs = instructions(side.root, cycles)
    print(f"instructions per fresh memory-store cycle ({ref} -> this tree, {cycles} and {3 * cycles} cycles):")
    print(f"  {theirs / 1e6:.3f} M -> {ours / 1e6:.3f} M   ({ours / theirs:.3f}x)")


def child(root: Path, cycles: int) -> dict[str, float]:
    """`measure` in a fresh interpreter importing eve_py from `root`."""
    command = [sys.executable, str(REPO / "bench" / "core_cpu.py"), "--cycles", str(cycles), "--json"]
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=_env(root), cwd=root)
    result: dict[str, float] = json.loads(done.stdout)
    return result


def compare(ref: str, rounds: int, cycles: int) -> None:
    """This tree against `ref`, alternating child processes; prints medians and ratios."""
    sys.path.insert(0, str(REPO / "bench"))
    from server_load import worktree

    ours: list[dict[str, float]] = []
    theirs: list[dict[str, float]] = []
    with worktree("baseline", ref) as side:
        for n in range(rounds):
            theirs.append(child(side.root, cycles))
            ours.append(child(REPO, cycles))
            line = ", ".join(f"{s} {theirs[-1][s]:.2f} -> {ours[-1][s]:.2f}" for s in SCENARIOS)
            print(f"round {n + 1}: {line}", flush=True)
    print(f"CPU ms per cycle, median of {rounds} alternating rounds of {cycles} cycles ({ref} -> this tree):")
    for s in SCENARIOS:
        before = statistics.median(r[s] for r in theirs)
        after = statistics.median(r[s] for r in ours)
        print(f"  {s:<18} {before:7.2f} -> {after:7.2f}   ({after / before:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REF", help="compare against this commit, alternating rounds")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds with --baseline (default 5)")
    parser.add_argument("--cycles", type=int, help="cycles per scenario (default 200; --instructions: 40)")
    parser.add_argument("--profile", type=int, metavar="N", help="cProfile N fresh memory-store cycles instead")
    parser.add_argument("--json", action="store_true", help="print one JSON object (this tree only)")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions per fresh memory-store cycle with valgrind (--cycles N and 3N; default 40)",
    )
    parser.add_argument("--cycles-only", type=int, metavar="N", help=argparse.SUPPRESS)  # what --instructions runs
    args = parser.parse_args()
    if args.cycles_only:
        anyio.run(cycles_only, args.cycles_only)
    elif args.instructions:
        count(args.baseline, args.cycles or 40)
    elif args.profile:
        anyio.run(profile, args.profile)
    elif args.baseline:
        compare(args.baseline, args.rounds, args.cycles or 200)
    else:
        result = anyio.run(measure, args.cycles or 200)
        print(json.dumps(result) if args.json else "\n".join(f"{k}: {v:.2f} ms CPU/cycle" for k, v in result.items()))


if __name__ == "__main__":
    main()
