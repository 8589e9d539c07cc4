"""Sync resolver overhead: one tool call whose parameter comes from a 4-resolver DAG of plain (sync) functions.

Run by hand (not part of the test suite), in a venv that has both eve-py and `mcp`:

```
python3 -m venv /tmp/mcpvenv && /tmp/mcpvenv/bin/pip install mcp && /tmp/mcpvenv/bin/pip install -e .
/tmp/mcpvenv/bin/python bench/resolve_sync.py
/tmp/mcpvenv/bin/python bench/resolve_sync.py --calls 5000 --repeats 7
```

The DAG is `bench/resolve_overhead.py`'s (`base(x) -> left, right -> join -> total`) with every
resolver a plain `def`; the tool body stays async. A sync resolver must not block the event
loop, so both frameworks run it in a worker thread: the MCP SDK's `resolve_arguments` takes one
thread hop per sync resolver (4 per call); eve-py runs a pass's sync resolvers in one hop.
Printed: per-call time and the DAG's overhead over the same tool without resolvers, for eve-py's
`ExecutorPlan.run` and mcp's `Tool.run` (which calls `resolve_arguments`), and the ratio of the
overheads, eve-py / mcp (the target is <= 0.3), as the median of alternating rounds.
"""

import argparse
import statistics
import sys
from typing import Annotated, Any

import anyio
from resolve_overhead import ARGUMENTS, EXPECTED, Call, mcp_version, per_call_us, plain_tool

from eve_py import Resolve, ToolContext, define_tool

TARGET = 0.3


def make_sync_dag_tool(resolve: Any) -> Any:
    """The tool body (async) and its four sync resolvers, with `resolve` as the framework's marker."""

    def base(x: int) -> int:
        return x + 1

    def left(a: Annotated[int, resolve(base)]) -> int:
        return a * 2

    def right(a: Annotated[int, resolve(base)]) -> int:
        return a * 3

    def join(b: Annotated[int, resolve(left)], c: Annotated[int, resolve(right)]) -> int:
        return b + c

    async def dag_tool(x: int, total: Annotated[int, resolve(join)]) -> int:
        """Add x to a value resolved through a 4-resolver DAG of sync resolvers."""
        return x + total

    return dag_tool


def eve_calls() -> tuple[Call, Call]:
    """eve-py's DAG and plain calls (`ExecutorPlan.run`)."""
    dag = define_tool(description="sync DAG tool", execute=make_sync_dag_tool(Resolve))
    plain = define_tool(description="plain tool", execute=plain_tool)
    assert dag.plan is not None and plain.plan is not None
    dag_plan, plain_plan = dag.plan, plain.plan
    ctx = ToolContext(session_id="ses_bench", turn_id="turn_bench", call_id="call_bench", tool_name="dag_tool")

    async def run_dag() -> Any:
        return (await dag_plan.run(ARGUMENTS, ctx)).value  # type: ignore[union-attr]

    async def run_plain() -> Any:
        return (await plain_plan.run(ARGUMENTS, ctx)).value  # type: ignore[union-attr]

    return run_dag, run_plain


def mcp_calls() -> tuple[Call, Call]:
    """mcp's DAG and plain calls (`Tool.run`, the resolver entry point)."""
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver import Resolve as McpResolve
    from mcp.server.mcpserver.tools import Tool

    dag = Tool.from_function(make_sync_dag_tool(McpResolve), name="dag_tool")
    plain = Tool.from_function(plain_tool, name="plain_tool")
    context = Context(mcp_server=MCPServer("resolve-sync"))

    async def run_dag() -> Any:
        return await dag.run(ARGUMENTS, context)

    async def run_plain() -> Any:
        return await plain.run(ARGUMENTS, context)

    return run_dag, run_plain


async def main_async(args: argparse.Namespace) -> int:
    """Alternate rounds of both frameworks and print the median overhead ratio."""
    frameworks = {"eve-py ExecutorPlan.run": eve_calls()}
    if mcp_version() is not None:
        frameworks["mcp Tool.run (resolve_arguments)"] = mcp_calls()
    for dag, plain in frameworks.values():
        assert await dag() == EXPECTED and await plain() == EXPECTED
    overheads: dict[str, list[float]] = {name: [] for name in frameworks}
    per_call: dict[str, list[float]] = {name: [] for name in frameworks}
    for _ in range(args.rounds):
        for name, (dag, plain) in frameworks.items():
            dag_us = await per_call_us(dag, args.calls, args.repeats, args.warmup)
            plain_us = await per_call_us(plain, args.calls, args.repeats, args.warmup)
            per_call[name].append(dag_us)
            overheads[name].append(dag_us - plain_us)
    print(f"sync resolver overhead: 4 sync resolvers, async body; {args.rounds} alternating rounds, medians")
    print(f"{'entry point':<36} {'DAG tool us':>12} {'DAG overhead us':>16}")
    for name in frameworks:
        print(f"{name:<36} {statistics.median(per_call[name]):12.2f} {statistics.median(overheads[name]):16.2f}")
    if len(frameworks) == 1:
        print(f"mcp is not installed in {sys.executable}: no baseline (see the module docstring)")
        return 0
    ours, theirs = (statistics.median(values) for values in overheads.values())
    ratio = ours / theirs
    print(f"overhead ratio eve-py / mcp: {ratio:.3f} (target <= {TARGET}: {'meets' if ratio <= TARGET else 'misses'})")
    return 0


def main() -> int:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per run (default 2000)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement; the best counts (default 3)")
    parser.add_argument("--warmup", type=int, default=200, help="untimed calls first (default 200)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    return anyio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())
