"""Resolver overhead benchmark: one tool call whose parameter comes from a 4-resolver DAG, no questions.

Run by hand (not part of the test suite):

```
.venv/bin/python bench/resolve_overhead.py                 # side by side with the mcp package (the dev extra has it)
.venv/bin/python bench/resolve_overhead.py --calls 20000 --repeats 7 --json
```

The DAG, in both frameworks (all resolvers async and pure; `base` takes the tool argument `x`
by name):

```
base(x) ──> left  ──> join ──> tool parameter `total`
        └─> right ─┘
```

Measured, per call, after a warm-up, as the best of `--repeats` runs of `--calls` sequential
calls on one event loop (`time.perf_counter`):

- eve-py: `ExecutorPlan.run(input, ctx)` on a `define_tool` definition's `plan`: validate the
  input, run the DAG (memoized), call the body.
- mcp (when installed): the same tool registered on an `MCPServer`, called three ways:
  `Tool.run(arguments, context)` (the resolver entry point, the same layer as `plan.run`: the
  primary baseline), `MCPServer.call_tool(name, arguments)` (adds the `CallToolResult`
  conversion) and `Client(server).call_tool(name, arguments)` (the in-memory client, a full
  JSON-RPC round trip).

- MCP serving (when mcp is installed): the same tool served by `eve-py mcp`'s server
  (`eve_py.mcp.mcp_server`) and by the SDK's `MCPServer`, each called through the SDK's
  in-memory `Client(server).call_tool(...)`: the whole MCP path, JSON-RPC included (the MCP row).
  Beside it, the plain tool with one `ctx.report_progress` and one `ctx.log` in its body, called
  without a progress token or a log level (nobody listens): what unheard notifications cost.
  These are timed in alternating chunks (ours, theirs, theirs, ours, ...; `--chunks` of
  `--calls`/20 calls each) of the process's CPU time, and a ratio is the median of the chunk
  ratios: the machine's speed drifts between two runs taken at different moments, not between
  two chunks taken back to back, and CPU time leaves out whatever else the machine runs.

Each framework also runs a plain tool with the same body and no resolvers, so the DAG's own
cost (DAG tool - plain tool) is printed too. The ratio is ours / theirs: below 1 means eve-py is
faster.
"""

import argparse
import json
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from importlib import metadata
from typing import Annotated, Any

import anyio
import pydantic

from eve_py import Resolve, ToolContext, define_tool

TARGET = 0.5
"""The issue's target for the ratio eve-py / mcp (resolver entry point)."""
MCP_TARGET = 0.7
"""The target for the MCP row: `eve-py mcp`'s server / the SDK's `MCPServer`, both through `Client`."""
INSTALL_HINT = (
    "python3 -m venv /tmp/mcpvenv && /tmp/mcpvenv/bin/pip install mcp && /tmp/mcpvenv/bin/pip install -e . "
    "&& /tmp/mcpvenv/bin/python bench/resolve_overhead.py"
)

Call = Callable[[], Awaitable[Any]]


def make_dag_tool(resolve: Callable[[Callable[..., Any]], object]) -> Callable[..., Awaitable[int]]:
    """The tool body and its four resolvers, with `resolve` as the framework's `Resolve` marker."""

    async def base(x: int) -> int:
        return x + 1

    async def left(a: Annotated[int, resolve(base)]) -> int:
        return a * 2

    async def right(a: Annotated[int, resolve(base)]) -> int:
        return a * 3

    async def join(b: Annotated[int, resolve(left)], c: Annotated[int, resolve(right)]) -> int:
        return b + c

    async def dag_tool(x: int, total: Annotated[int, resolve(join)]) -> int:
        """Add x to a value resolved through a 4-resolver DAG."""
        return x + total

    return dag_tool


async def plain_tool(x: int) -> int:
    """The same body without resolvers (x + 5 * (x + 1) is what the DAG computes)."""
    return x + 5 * (x + 1)


async def reporting_tool(x: int, ctx: ToolContext) -> int:
    """The plain tool, reporting progress and logging as it goes (to nobody, in the benchmark)."""
    await ctx.report_progress(0, 1, "adding")
    await ctx.log("info", "adding")
    return x + 5 * (x + 1)


def sdk_reporting_tool() -> Callable[..., Awaitable[int]]:
    """The reporting tool written for the SDK's `MCPServer` (its `Context`; logging is deprecated there)."""
    from mcp.server.mcpserver import Context
    from mcp.shared.exceptions import MCPDeprecationWarning

    # Once for the process: a filter set per call would be timed as the SDK's cost.
    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

    async def reporting_tool(x: int, ctx: Context) -> int:
        """The plain tool, reporting progress and logging as it goes (to nobody, in the benchmark)."""
        await ctx.report_progress(0, 1, "adding")
        await ctx.log("info", "adding")
        return x + 5 * (x + 1)

    return reporting_tool


ARGUMENTS = {"x": 3}
EXPECTED = 3 + 5 * 4


@dataclass(frozen=True, kw_only=True)
class Timing:
    """One entry point's per-call time."""

    label: str
    dag_us: float
    plain_us: float

    @property
    def overhead_us(self) -> float:
        """What the DAG adds to a call of the same tool without resolvers."""
        return self.dag_us - self.plain_us


async def per_call_us(call: Call, calls: int, repeats: int, warmup: int) -> float:
    """Best-of-`repeats` mean time of one `await call()`, in microseconds."""
    for _ in range(warmup):
        await call()
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(calls):
            await call()
        best = min(best, (time.perf_counter() - started) / calls)
    return best * 1e6


async def time_pair(label: str, dag: Call, plain: Call, calls: int, repeats: int, warmup: int) -> Timing:
    """Time the DAG tool and the plain tool through one entry point (checking their results first)."""
    return Timing(
        label=label,
        dag_us=await per_call_us(dag, calls, repeats, warmup),
        plain_us=await per_call_us(plain, calls, repeats, warmup),
    )


async def eve_timing(calls: int, repeats: int, warmup: int) -> Timing:
    """eve-py: `ExecutorPlan.run` on `define_tool` definitions."""
    dag = define_tool(description="DAG tool", execute=make_dag_tool(Resolve))
    plain = define_tool(description="plain tool", execute=plain_tool)
    assert dag.plan is not None and plain.plan is not None
    assert dag.plan.input_schema["properties"].keys() == {"x"}, "resolved parameters are not model-facing"
    dag_plan, plain_plan = dag.plan, plain.plan
    ctx = ToolContext(session_id="ses_bench", turn_id="turn_bench", call_id="call_bench", tool_name="dag_tool")

    async def run_dag() -> Any:
        return await dag_plan.run(ARGUMENTS, ctx)

    async def run_plain() -> Any:
        return await plain_plan.run(ARGUMENTS, ctx)

    for run in (run_dag, run_plain):
        outcome = await run()
        assert outcome.value == EXPECTED, outcome
    return await time_pair("eve-py ExecutorPlan.run", run_dag, run_plain, calls, repeats, warmup)


def mcp_version() -> str | None:
    """The installed `mcp` version, or None when it is not installed."""
    try:
        return metadata.version("mcp")
    except metadata.PackageNotFoundError:
        return None


async def mcp_timings(calls: int, repeats: int, warmup: int, *, client: bool) -> list[Timing]:
    """mcp: the same tools on an `MCPServer`, through `Tool.run`, `call_tool` and `Client(server)`."""
    from mcp import Client
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver import Resolve as McpResolve
    from mcp.server.mcpserver.tools import Tool

    server = MCPServer("resolve-overhead")
    server.add_tool(make_dag_tool(McpResolve), name="dag_tool")
    server.add_tool(plain_tool, name="plain_tool")
    dag_tool = Tool.from_function(make_dag_tool(McpResolve), name="dag_tool")
    plain = Tool.from_function(plain_tool, name="plain_tool")
    assert dag_tool.parameters["properties"].keys() == {"x"}, "resolved parameters are not model-facing"
    context = Context(mcp_server=server)

    async def run_dag() -> Any:
        return await dag_tool.run(ARGUMENTS, context)

    async def run_plain() -> Any:
        return await plain.run(ARGUMENTS, context)

    async def call_dag() -> Any:
        return await server.call_tool("dag_tool", ARGUMENTS)

    async def call_plain() -> Any:
        return await server.call_tool("plain_tool", ARGUMENTS)

    for run in (run_dag, run_plain):
        assert await run() == EXPECTED
    for call in (call_dag, call_plain):
        result = await call()
        assert not result.is_error and result.structured_content == {"result": EXPECTED}, result
    timings = [
        await time_pair("mcp Tool.run (resolver entry point)", run_dag, run_plain, calls, repeats, warmup),
        await time_pair("mcp MCPServer.call_tool", call_dag, call_plain, calls, repeats, warmup),
    ]
    if client:
        async with Client(server) as connected:

            async def client_dag() -> Any:
                return await connected.call_tool("dag_tool", ARGUMENTS)

            async def client_plain() -> Any:
                return await connected.call_tool("plain_tool", ARGUMENTS)

            for call in (client_dag, client_plain):
                result = await call()
                assert not result.is_error and result.structured_content == {"result": EXPECTED}, result
            # A JSON-RPC round trip costs ~100x more; a tenth of the calls is plenty.
            few, few_warmup = max(1, calls // 10), max(1, warmup // 10)
            timings.append(
                await time_pair("mcp Client(server).call_tool", client_dag, client_plain, few, repeats, few_warmup)
            )
    return timings


@dataclass(frozen=True, kw_only=True)
class Paired:
    """Two calls timed in alternating chunks on one loop: `ours` and `theirs` per call, and their ratio."""

    label: str
    ours_us: float
    """Median per-call CPU time of `ours` over the chunks."""
    theirs_us: float
    """Median per-call CPU time of `theirs` over the chunks."""
    ratio: float
    """Median over the chunks of (ours / theirs in the chunk next to it)."""
    spread: tuple[float, float]
    """The lowest and highest chunk ratio."""


async def paired(label: str, ours: Call, theirs: Call, *, chunks: int, calls: int, warmup: int) -> Paired:
    """Time `ours` and `theirs` in alternating chunks of `calls` calls (after `warmup` each).

    The machine's speed drifts (other jobs, the host), so a ratio of two times taken at different
    moments moves with it; two chunks taken back to back share the same moment. The ratio is the
    median over `chunks` such pairs, and the order within a pair alternates. Times are the
    process's CPU time (`time.process_time`): everything runs on this one thread and loop, and
    time the machine gives to other processes is not counted.
    """
    for call in (ours, theirs):
        for _ in range(warmup):
            await call()

    async def chunk(call: Call) -> float:
        # CPU time of this process: on a shared machine, wall time also counts whoever else ran.
        started = time.process_time()
        for _ in range(calls):
            await call()
        return (time.process_time() - started) / calls * 1e6

    mine: list[float] = []
    other: list[float] = []
    for index in range(chunks):
        if index % 2:
            other.append(await chunk(theirs))
            mine.append(await chunk(ours))
        else:
            mine.append(await chunk(ours))
            other.append(await chunk(theirs))
    ratios = [a / b for a, b in zip(mine, other, strict=True)]
    return Paired(
        label=label,
        ours_us=statistics.median(mine),
        theirs_us=statistics.median(other),
        ratio=statistics.median(ratios),
        spread=(min(ratios), max(ratios)),
    )


async def mcp_pairs(args: argparse.Namespace) -> tuple[Paired, Paired, Paired, Paired]:
    """eve-py's MCP server (what `eve-py mcp` serves) against the SDK's `MCPServer`, both through
    the SDK's in-memory `Client`, DAG tool and plain tool; and, on each server, the plain tool
    against the same tool reporting progress and a log entry nobody listens to."""
    from mcp import Client
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver import Resolve as McpResolve

    from eve_py.agent import Agent
    from eve_py.mcp import mcp_server

    agent = Agent.from_definitions(
        {
            "dag_tool": define_tool(description="DAG tool", execute=make_dag_tool(Resolve)),
            "plain_tool": define_tool(description="plain tool", execute=plain_tool),
            "reporting_tool": define_tool(description="reporting tool", execute=reporting_tool),
        }
    )
    sdk = MCPServer("resolve-overhead")
    sdk.add_tool(make_dag_tool(McpResolve), name="dag_tool")
    sdk.add_tool(plain_tool, name="plain_tool")
    sdk.add_tool(sdk_reporting_tool(), name="reporting_tool")
    async with Client(mcp_server(agent)) as eve, Client(sdk) as theirs:

        def caller(client: Client, name: str) -> Call:
            async def call() -> Any:
                return await client.call_tool(name, ARGUMENTS)

            return call

        for name in ("dag_tool", "plain_tool", "reporting_tool"):
            result = await caller(eve, name)()
            assert not result.is_error and result.content[0].text == str(EXPECTED), result
        for name in ("dag_tool", "plain_tool", "reporting_tool"):
            result = await caller(theirs, name)()
            assert not result.is_error and result.structured_content == {"result": EXPECTED}, result
        shape = {"chunks": args.chunks, "calls": max(1, args.calls // 20), "warmup": max(1, args.warmup // 10)}
        dag = await paired("DAG tool", caller(eve, "dag_tool"), caller(theirs, "dag_tool"), **shape)
        plain = await paired("plain tool", caller(eve, "plain_tool"), caller(theirs, "plain_tool"), **shape)
        unheard = await paired("eve-py mcp", caller(eve, "reporting_tool"), caller(eve, "plain_tool"), **shape)
        sdk_unheard = await paired("MCPServer", caller(theirs, "reporting_tool"), caller(theirs, "plain_tool"), **shape)
        return dag, plain, unheard, sdk_unheard


def _paired_line(p: Paired) -> str:
    return f"{p.label:<32} {p.ours_us:14.2f} {p.theirs_us:13.2f} {p.ratio:7.3f}x  {p.spread[0]:.3f}-{p.spread[1]:.3f}"


def mcp_row(dag: Paired, plain: Paired, *unheard: Paired) -> list[str]:
    """The MCP row: eve-py's MCP server against the SDK's `MCPServer`, both through `Client`; and
    what a progress report and a log entry nobody listens to add to a call."""
    verdict = "meets" if dag.ratio <= MCP_TARGET else "misses"
    lines = [
        "",
        "MCP serving through the SDK's in-memory Client, CPU time in alternating chunks "
        "(medians; ratio: median of the chunk ratios, lowest-highest)",
        f"{'tool':<32} {'eve-py mcp us':>14} {'MCPServer us':>13} {'ratio':>8}  spread",
    ]
    lines += [_paired_line(p) for p in (dag, plain)]
    lines += [
        f"MCP row: eve-py mcp / MCPServer through Client, DAG tool: {dag.ratio:.3f}x "
        f"(target <= {MCP_TARGET}: {verdict} it)",
        "",
        "unheard notifications: the plain tool reporting progress and a log entry nobody listens to, "
        "against the plain tool",
        f"{'server':<32} {'reporting us':>14} {'plain us':>13} {'ratio':>8}  spread",
    ]
    return lines + [_paired_line(p) for p in unheard]


def report(eve: Timing, theirs: list[Timing], version: str | None, args: argparse.Namespace) -> list[str]:
    """Readable lines: per-call times, DAG overheads, and the ratios ours / theirs."""
    lines = [
        f"resolver overhead: 4-resolver DAG, no questions; python {platform.python_version()}, "
        f"pydantic {pydantic.VERSION}, anyio {metadata.version('anyio')}, "
        f"mcp {version or 'not installed'}",
        f"{args.calls} calls x best of {args.repeats} after {args.warmup} warm-up calls (Client: a tenth of that)",
        "",
        f"{'entry point':<40} {'DAG tool us':>12} {'plain tool us':>14} {'DAG overhead us':>16}",
    ]
    lines += [f"{t.label:<40} {t.dag_us:12.2f} {t.plain_us:14.2f} {t.overhead_us:16.2f}" for t in (eve, *theirs)]
    if not theirs:
        lines += [
            "",
            "baseline unavailable: the mcp package is not installed in this interpreter "
            f"({sys.executable}). Install it in a separate venv (not the project's):",
            f"  {INSTALL_HINT}",
        ]
        return lines
    lines += [
        "",
        "ratio eve-py / mcp (below 1: eve-py is faster)",
        f"{'baseline':<40} {'per call':>12} {'overhead':>14}",
    ]
    for timing in theirs:
        overhead = f"{eve.overhead_us / timing.overhead_us:13.3f}x" if timing.overhead_us > 0 else f"{'-':>14}"
        lines.append(f"{timing.label:<40} {eve.dag_us / timing.dag_us:11.3f}x {overhead}")
    primary = eve.dag_us / theirs[0].dag_us
    verdict = "meets" if primary <= TARGET else "misses"
    lines.append(f"target: per-call ratio vs {theirs[0].label} <= {TARGET}: {primary:.3f} ({verdict} it)")
    return lines


def _timing_json(timing: Timing) -> dict[str, Any]:
    return asdict(timing) | {"overhead_us": timing.overhead_us}


async def main_async(args: argparse.Namespace) -> int:
    """Run the measurements and print them."""
    eve = await eve_timing(args.calls, args.repeats, args.warmup)
    version = mcp_version()
    theirs: list[Timing] = []
    served: tuple[Paired, Paired, Paired, Paired] | None = None
    if version is not None:
        try:
            theirs = await mcp_timings(args.calls, args.repeats, args.warmup, client=not args.no_client)
        except ImportError as exc:
            print(f"mcp {version} is installed but has no resolver API ({exc}); baseline unavailable", file=sys.stderr)
        if theirs and not args.no_client:
            served = await mcp_pairs(args)
    if args.json:
        print(
            json.dumps(
                {
                    "mcp": version,
                    "python": platform.python_version(),
                    "calls": args.calls,
                    "repeats": args.repeats,
                    "timings": [_timing_json(t) for t in (eve, *theirs)],
                    "ratio": eve.dag_us / theirs[0].dag_us if theirs else None,
                    "mcp_served": None if served is None else [asdict(p) for p in served[:2]],
                    "mcp_ratio": None if served is None else served[0].ratio,
                    "mcp_unheard_notifications": None if served is None else [asdict(p) for p in served[2:]],
                }
            )
        )
    else:
        print("\n".join(report(eve, theirs, version, args) + ([] if served is None else mcp_row(*served))))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the benchmark; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=20000, help="timed calls per run (default 20000)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per entry point; the best counts (default 5)")
    parser.add_argument("--warmup", type=int, default=2000, help="untimed calls first (default 2000)")
    parser.add_argument("--no-client", action="store_true", help="skip the in-memory mcp Client round trip")
    parser.add_argument(
        "--chunks", type=int, default=30, help="alternating chunks of --calls/20 calls for the MCP row (default 30)"
    )
    parser.add_argument("--json", action="store_true", help="print the numbers as one JSON object")
    args = parser.parse_args(argv)
    if args.calls < 1 or args.repeats < 1 or args.chunks < 1 or args.warmup < 0:
        parser.error("--calls, --repeats and --chunks must be at least 1, --warmup at least 0")
    return anyio.run(main_async, args)


if __name__ == "__main__":
    raise SystemExit(main())
