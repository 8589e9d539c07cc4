"""What a tool's progress report costs in an agent run, nobody listening and with a live listener.

Run by hand (not part of the test suite):

```
.venv/bin/python bench/progress_reports.py                         # the working tree alone
.venv/bin/python bench/progress_reports.py --baseline main --rounds 3
```

Each run is a fresh interpreter: N sessions on `MemorySessionStore`, each one turn whose model
calls a tool once, then answers. The tool makes R `ctx.report_progress` calls ("reporting"), or
none ("plain"). A report's cost is (reporting - plain) / (N * R), from the median of the turns'
wall time. `live` is the working tree's reporting run with `Runtime(on_live=...)` set to a list
append (what the server's hub costs when no reader follows the session is one dict lookup more).
With `--baseline REF`, the same runs on commit REF's tree (a temporary worktree) alternate with
the working tree's, and the ratios current / baseline are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from eve_py import Agent, Runtime, ToolContext, define_tool
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

REPO = Path(__file__).resolve().parents[1]
REPORTS = [0]
"""How many reports the tool makes (set per run)."""


async def work(ctx: ToolContext) -> str:
    """Report progress `REPORTS[0]` times."""
    reports = REPORTS[0]
    for done in range(reports):
        await ctx.report_progress(done, reports, "working")
    return "done"


async def _turns(n: int, reports: int, live: bool) -> float:
    """Seconds per turn (median) of n one-call turns whose tool reports `reports` times."""
    REPORTS[0] = reports

    def respond(request: MockModelRequest) -> str | MockResponse:
        if request.tool_results:
            return "finished"
        return MockResponse(tool_calls=[MockToolCall("work", {})])

    heard: list[object] = []
    options = {"on_live": lambda _, event: heard.append(event)} if live else {}
    agent = Agent.from_definitions({"work": define_tool(description="Work.", execute=work)})
    runtime = Runtime(agent, model=MockModel(respond), **options)  # type: ignore[arg-type]
    times: list[float] = []
    for _ in range(n):
        session = await runtime.create_session()
        started = time.perf_counter()
        await session.send("work")
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _child(n: int, reports: int) -> None:
    import anyio

    live = "--live" in sys.argv
    result = {
        "plain": anyio.run(_turns, n, 0, False),
        "reporting": anyio.run(_turns, n, reports, False),
        "live": anyio.run(_turns, n, reports, True) if live else None,
    }
    print(json.dumps(result))


def _run(root: Path, n: int, reports: int, live: bool) -> dict[str, float | None]:
    env = dict(os.environ)
    if root != REPO:  # ahead of the editable install's path entry: that tree's eve_py is imported
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)
    command = [sys.executable, str(REPO / "bench" / "progress_reports.py"), "--child", str(n), str(reports)]
    command += ["--live"] if live else []
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    result: dict[str, float | None] = json.loads(done.stdout)
    return result


def _per_report_us(result: dict[str, float | None], key: str, reports: int) -> float:
    value, plain = result[key], result["plain"]
    assert value is not None and plain is not None
    return (value - plain) / reports * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=400)
    parser.add_argument("--reports", type=int, default=50, help="reports per call")
    parser.add_argument("--baseline", help="a commit to compare with (run in a temporary worktree)")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    n, reports = args.sessions, args.reports
    rows: dict[str, list[float]] = {"plain turn ms": [], "per report us": [], "live per report us": []}
    ratios: dict[str, list[float]] = {"plain turn": [], "per report": []}
    if args.baseline:
        sys.path.insert(0, str(REPO / "bench"))
        from server_load import worktree

        with worktree("baseline", args.baseline) as side:
            for _ in range(args.rounds):
                theirs = _run(side.root, n, reports, live=False)
                ours = _run(REPO, n, reports, live=True)
                assert theirs["plain"] is not None and ours["plain"] is not None
                ratios["plain turn"].append(ours["plain"] / theirs["plain"])
                ratios["per report"].append(
                    _per_report_us(ours, "reporting", reports) / _per_report_us(theirs, "reporting", reports)
                )
                print(f"baseline {args.baseline}: per report {_per_report_us(theirs, 'reporting', reports):.2f} us")
                rows["plain turn ms"].append(ours["plain"] * 1e3)
                rows["per report us"].append(_per_report_us(ours, "reporting", reports))
                rows["live per report us"].append(_per_report_us(ours, "live", reports))
    else:
        for _ in range(args.rounds):
            ours = _run(REPO, n, reports, live=True)
            assert ours["plain"] is not None
            rows["plain turn ms"].append(ours["plain"] * 1e3)
            rows["per report us"].append(_per_report_us(ours, "reporting", reports))
            rows["live per report us"].append(_per_report_us(ours, "live", reports))
    print(f"current ({n} turns, {reports} reports per call, median of {args.rounds} rounds):")
    for name, values in rows.items():
        print(f"  {name:<20} {statistics.median(values):8.2f}")
    for name, values in ratios.items():
        shown = ", ".join(f"{v:.2f}" for v in values)
        print(f"  {name} current / {args.baseline}: {statistics.median(values):.2f}x   (rounds: {shown})")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(int(sys.argv[2]), int(sys.argv[3]))
    else:
        sys.exit(main())
