"""Model adapter overhead: a 20-step tool loop against the loopback fake provider.

Run by hand (not part of the test suite):

```
.venv/bin/python bench/model_overhead.py                      # eve-py only
python3 -m venv /tmp/paivenv && /tmp/paivenv/bin/pip install "pydantic-ai-slim[openai]"
.venv/bin/python bench/model_overhead.py --pydantic-ai /tmp/paivenv/bin/python
.venv/bin/python bench/model_overhead.py --pydantic-ai /tmp/paivenv/bin/python --runs 50 --json
```

The fake provider (`tests/models/fake_provider.py --script counter`) runs in its own process on
127.0.0.1 and speaks OpenAI Chat Completions: for each request it counts the tool results in
the conversation and calls the tool `add_one` again until `steps - 1` calls were made, then
answers with text, so one run is `steps` model requests and `steps - 1` tool calls.

Both frameworks run the same loop against the same server, through their OpenAI-compatible
model class, with one async tool `add_one(n) -> n + 1`:

- eve-py: `Runtime(Agent.from_definitions({"add_one": ...}), model=ChatCompletionsModel(...))`,
  `session.send("count")` on a new session per run (in-memory store, every step committed with
  its events, as in production).
- Pydantic AI (in a separate venv, never a project dependency): `Agent(OpenAIChatModel(...,
  provider=OpenAIProvider(base_url=...)), tools=[add_one])`, `agent.run("count")`; or
  `agent.run_stream` for `--stream`.

The server reports the seconds it spent handling model requests (from a request's last byte to
its response's last byte, `GET /_stats`). The framework's own time per step is
`(wall time of the run - server time) / steps`: client-side request building, HTTP, parsing,
tool dispatch and bookkeeping. Reported: the median over `--runs` runs after `--warmup` runs,
per framework and mode (non-streaming JSON and SSE streaming); the ratio is eve-py / Pydantic AI
(below 1 means eve-py spends less time per step). Target (issue 4): at most 0.5.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TARGET = 0.5
"""The issue's target for the overhead ratio eve-py / Pydantic AI."""

PYDANTIC_AI_DRIVER = r'''
import asyncio, json, statistics, sys, time, urllib.request

from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

base = sys.argv[1]
steps, runs, warmup = (int(arg) for arg in sys.argv[2:5])
stream = sys.argv[5] == "1"
root = base.rsplit("/v1", 1)[0]


def call(path, method="GET"):
    request = urllib.request.Request(root + path, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())


async def add_one(n: int) -> int:
    """Add one."""
    return n + 1


async def main():
    model = OpenAIChatModel("fake/model", provider=OpenAIProvider(base_url=base, api_key="bench-key"))
    agent = Agent(model, tools=[add_one])
    per_step = []
    for index in range(warmup + runs):
        call("/_reset", "POST")
        started = time.perf_counter()
        if stream:
            async with agent.run_stream("count") as result:
                output = await result.get_output()
        else:
            output = (await agent.run("count")).output
        wall = time.perf_counter() - started
        stats = call("/_stats")
        assert stats["requests"] == steps, stats
        assert output == f"Counted to {steps - 1}.", output
        if index >= warmup:
            per_step.append((wall - stats["server_s"]) / steps)
    import pydantic_ai
    print(json.dumps({"per_step_s": per_step, "version": pydantic_ai.__version__}))


asyncio.run(main())
'''


def start_server(steps: int) -> tuple[subprocess.Popen[str], int]:
    """The fake provider in its own process; returns it and its port."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.models.fake_provider", "--script", "counter", "--steps", str(steps)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("PORT "):
        process.kill()
        raise SystemExit(f"the fake provider did not start: {line!r}")
    return process, int(line.split()[1])


def server_call(port: int, path: str, method: str = "GET") -> dict[str, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", method=method, data=b"" if method == "POST" else None
    )
    with urllib.request.urlopen(request) as response:
        result: dict[str, Any] = json.loads(response.read())
        return result


def eve_per_step(port: int, steps: int, runs: int, warmup: int, stream: bool) -> list[float]:
    """eve-py's own seconds per step, one value per measured run."""
    import anyio
    import httpx

    from eve_py import Agent, Runtime, define_tool, disable_tool
    from eve_py.models import ChatCompletionsModel
    from eve_py.protocol import Event

    async def add_one(n: int) -> int:
        """Add one."""
        return n + 1

    agent = Agent.from_definitions(
        {"add_one": define_tool(description="Add one.", execute=add_one), "ask_question": disable_tool()}
    )
    deltas = 0

    def listen(events: Sequence[Event]) -> None:
        nonlocal deltas
        deltas += sum(event.type == "message.delta" for event in events)

    async def run() -> list[float]:
        per_step = []
        async with httpx.AsyncClient(trust_env=False) as client:
            model = ChatCompletionsModel(
                "fake/model", base_url=f"http://127.0.0.1:{port}/v1", api_key="bench-key", client=client, stream=stream
            )
            runtime = Runtime(agent, model=model, max_steps=steps + 1, on_event=listen if stream else None)
            for index in range(warmup + runs):
                session = await runtime.create_session()
                server_call(port, "/_reset", "POST")
                started = time.perf_counter()
                result = await session.send("count")
                wall = time.perf_counter() - started
                stats = server_call(port, "/_stats")
                assert stats["requests"] == steps, stats
                assert result.message == f"Counted to {steps - 1}.", result
                if index >= warmup:
                    per_step.append((wall - stats["server_s"]) / steps)
        assert deltas > 0 or not stream
        return per_step

    return anyio.run(run)


def pydantic_ai_per_step(
    python: str, port: int, steps: int, runs: int, warmup: int, stream: bool
) -> tuple[list[float], str]:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(PYDANTIC_AI_DRIVER)
    try:
        out = subprocess.run(
            [python, handle.name, f"http://127.0.0.1:{port}/v1", *map(str, (steps, runs, warmup, int(stream)))],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    finally:
        os.unlink(handle.name)
    data = json.loads(out.strip().splitlines()[-1])
    return data["per_step_s"], data["version"]


def main() -> None:
    parser = argparse.ArgumentParser(description="eve-py model adapter overhead vs Pydantic AI")
    parser.add_argument("--steps", type=int, default=20, help="model requests per run (default 20)")
    parser.add_argument("--runs", type=int, default=30, help="measured runs per framework and mode")
    parser.add_argument("--warmup", type=int, default=5, help="unmeasured runs first")
    parser.add_argument("--pydantic-ai", metavar="PYTHON", help="a Python with pydantic-ai-slim[openai] installed")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()

    process, port = start_server(args.steps)
    results: dict[str, Any] = {"steps": args.steps, "runs": args.runs, "warmup": args.warmup, "modes": {}}
    try:
        for mode, stream in (("json", False), ("sse", True)):
            eve = eve_per_step(port, args.steps, args.runs, args.warmup, stream)
            entry: dict[str, Any] = {"eve_py_us": statistics.median(eve) * 1e6}
            if args.pydantic_ai:
                pai, version = pydantic_ai_per_step(args.pydantic_ai, port, args.steps, args.runs, args.warmup, stream)
                entry["pydantic_ai_us"] = statistics.median(pai) * 1e6
                entry["ratio"] = entry["eve_py_us"] / entry["pydantic_ai_us"]
                results["pydantic_ai_version"] = version
            results["modes"][mode] = entry
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
    results["python"] = platform.python_version()
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{args.steps}-step tool loop, median of {args.runs} runs ({args.warmup} warm-up), own time per step")
    print(f"python {results['python']}; pydantic-ai {results.get('pydantic_ai_version', 'not run')}")
    print(f"{'mode':<6} {'eve-py us':>10} {'pydantic-ai us':>15} {'ratio':>7}  target <= {TARGET}")
    for mode, entry in results["modes"].items():
        theirs = f"{entry['pydantic_ai_us']:.0f}" if "pydantic_ai_us" in entry else "-"
        ratio = f"{entry['ratio']:.2f}" if "ratio" in entry else "-"
        print(f"{mode:<6} {entry['eve_py_us']:>10.0f} {theirs:>15} {ratio:>7}")


if __name__ == "__main__":
    main()
