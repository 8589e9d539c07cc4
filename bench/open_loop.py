"""Open-loop server load: new sessions arrive at a fixed rate, each parks and is answered 0-2 s later.

Run by hand (not part of the test suite):

```
.venv/bin/python bench/open_loop.py                                  # issue 37: 100/s for 300 s over 10,000 parked
.venv/bin/python bench/open_loop.py --rate 50 --duration 60 --parked 1000
```

One `eve-py serve fixtures/agent-tools-hitl --model mock` of this working tree on a SQLite file
(as `bench/server_load.py` starts it: a bearer token, eve 1.0's wire, one worker). First
`--parked` sessions are created and left parked (nobody answers them: the store and the server
carry them for the whole run). Then, open-loop, a new session arrives every `1 / --rate`
seconds whatever the server is doing (a closed loop would slow down with the server and hide
its queue): it is created with a message, follows its stream until the turn parks on the picker,
waits a random 0-2 s (a person reading), answers, and follows the stream to the turn's end.
Each answer `POST`'s time until its `202` is recorded.

Printed: the sessions started and completed, the errors (a non-2xx, a broken stream, a turn that
did not end as expected, a session not done within 120 s of its arrival: none may be lost), the
answer `POST` p50/p99/max, the server's and the load generator's CPU over the run, and whether
the arrivals kept to their schedule (the generator's lag: if it falls behind, the figures say
more about the generator than the server).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import anyio
import server_load as sl  # bench/ is the script's directory, first on sys.path

__all__ = ("main",)


async def _parked(url: str, side: sl.Side, count: int, at_once: int = 50) -> None:
    """`count` sessions parked on the picker and left so, `at_once` at a time."""
    limiter = anyio.CapacityLimiter(at_once)

    async def one() -> None:
        async with limiter, sl._frontend(url) as client:
            with anyio.fail_after(sl.TIMEOUT_S):
                await sl._park(client, side)

    async with anyio.create_task_group() as group:
        for _ in range(count):
            group.start_soon(one)


async def _arrivals(url: str, side: sl.Side, rate: float, duration: float) -> dict[str, object]:
    post_ms: list[float] = []
    errors: list[str] = []
    lags: list[float] = []
    done = 0
    rng = random.Random(37)

    async def session() -> None:
        nonlocal done
        try:
            # A client (and connection) per session, like independent frontends (as `server_load.py`).
            async with sl._frontend(url) as client:
                with anyio.fail_after(sl.TIMEOUT_S):
                    session_id, request_id = await sl._park(client, side)
                    await anyio.sleep(rng.uniform(0.0, 2.0))
                    post_ms.append(await sl._answer(client, side, session_id, request_id))
            done += 1
        except Exception as exc:  # counted: the run reports every lost session
            errors.append(f"{type(exc).__name__}: {exc}"[:300])

    started = time.monotonic()
    count = int(rate * duration)
    async with anyio.create_task_group() as group:
        for number in range(count):
            due = started + number / rate
            wait = due - time.monotonic()
            if wait > 0:
                await anyio.sleep(wait)
            lags.append(max(0.0, time.monotonic() - due) * 1000)
            group.start_soon(session)
    return {"started": count, "done": done, "errors": errors, "post_ms": post_ms, "lag_ms": lags}


async def run(rate: float, duration: float, parked: int) -> int:
    side = sl._working_tree()
    with tempfile.TemporaryDirectory(prefix="eve-open-loop-") as folder:
        process, url = await sl._start_server(side, Path(folder) / "open-loop.db")
        try:
            wire, api = await sl._wire(url, side)
            side = sl.replace(side, eve_py=sl._imported_from(side), wire=wire, api=api, parser=sl._parser(side))
            print(sl._describe(side, process.pid), file=sys.stderr)
            await sl._warm_up(url, side)
            filled = time.monotonic()
            await _parked(url, side, parked)
            print(f"{parked} sessions parked in {time.monotonic() - filled:.0f} s", file=sys.stderr)
            server_cpu, own_cpu, wall = sl._cpu_s(process.pid), time.process_time(), time.monotonic()
            result = await _arrivals(url, side, rate, duration)
            server_cpu = sl._cpu_s(process.pid) - server_cpu
            own_cpu, wall = time.process_time() - own_cpu, time.monotonic() - wall
            rss, peak = sl._memory_mib(process.pid)
        finally:
            await sl._stop_server(process)
    post = result["post_ms"]
    lags = result["lag_ms"]
    errors = result["errors"]
    assert isinstance(post, list) and isinstance(lags, list) and isinstance(errors, list)
    print(f"open loop: {rate:g} new sessions/s for {duration:g} s over {parked} parked sessions, one worker")
    print(f"  sessions: {result['started']} started, {result['done']} completed, {len(errors)} lost")
    p50, p99 = sl._percentile(post, 0.5), sl._percentile(post, 0.99)
    print(f"  answer POST until its 202: p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(post, default=0):.1f} ms")
    print(f"  server CPU {server_cpu:.1f} s of {wall:.0f} s ({server_cpu / wall:.0%} of a core); RSS {rss:.0f} MiB")
    print(f"  load generator CPU {own_cpu:.1f} s ({own_cpu / wall:.0%} of a core)")
    lag50, lag99 = sl._percentile(lags, 0.5), sl._percentile(lags, 0.99)
    print(f"  arrival lag behind schedule: p50 {lag50:.1f} ms, p99 {lag99:.1f} ms")
    print(f"  peak server RSS {peak:.0f} MiB")
    for error in errors[:5]:
        print(f"  error: {error}")
    return 1 if errors else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rate", type=float, default=100.0, help="new sessions per second (default 100)")
    parser.add_argument("--duration", type=float, default=300.0, help="seconds of arrivals (default 300)")
    parser.add_argument("--parked", type=int, default=10_000, help="sessions parked before (default 10,000)")
    args = parser.parse_args()
    return anyio.run(run, args.rate, args.duration, args.parked)


if __name__ == "__main__":
    raise SystemExit(main())
