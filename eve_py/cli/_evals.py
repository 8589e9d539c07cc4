"""`eve-py eval`: run an app's evals against in-process sessions (or a server) and report.

```
eve-py eval APP_DIR [--model mock|provider/model] [--tag T]... [--junit PATH] [--json]
                    [--max-concurrency N] [--timeout S] [--list] [--url URL]
```

With `--url` the sessions run on that server (`eve-py serve`), with the bearer token from
`EVE_API_TOKEN`; the eval files still come from APP_DIR, and the artifacts go there.

Exit codes: 0 every eval passed; 1 an eval failed or errored; 2 configuration error (a bad
eval file or `evals_config.py`, no eval selected, an app that does not compile, an unknown
model or a missing API key).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx

from eve_py.agent import load_agent
from eve_py.cli._types import positive_int, seconds
from eve_py.client import Client
from eve_py.errors import ApiError, EvalConfigurationError, UsageError
from eve_py.evals import EvalCase, EvalResult, discover_evals, run_evals
from eve_py.evals._backend import EvalBackend, HttpBackend, InProcessBackend
from eve_py.evals._definition import DEFAULT_MAX_CONCURRENCY, DEFAULT_TIMEOUT_S
from eve_py.evals.report import EvalRun, result_record, summary_record, write_artifacts, write_junit
from eve_py.models import Model
from eve_py.models._registry import choose_model_spec, resolve_model
from eve_py.protocol import now_iso

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ("add_eval_command", "run_eval_command")

_RICH_HINT = "eve-py eval needs rich for its terminal output: pip install 'eve-py[evals]' (or pass --json)"


def add_eval_command(commands: argparse._SubParsersAction[Any]) -> None:
    """Register `eval` on the `eve-py` command's subparsers."""
    command = commands.add_parser(
        "eval",
        help="run an app's evals (evals/**/*_eval.py) and report",
        description="Run an app's evals against real sessions. Exit 0: all passed; 1: a failure; 2: bad configuration.",
    )
    command.add_argument("app_dir", type=Path, help="the app folder, holding agent/ and evals/")
    command.add_argument(
        "--model", help='"mock" for the app\'s agent/mock_model.py, or a model string such as "provider/model"'
    )
    command.add_argument(
        "--tag", action="append", default=[], metavar="TAG", help="run only evals with this tag (repeatable: any of)"
    )
    command.add_argument("--junit", type=Path, metavar="PATH", help="also write a JUnit XML report here")
    command.add_argument("--json", action="store_true", help="print the summary and results as JSON, no live output")
    command.add_argument(
        "--max-concurrency",
        type=positive_int,
        metavar="N",
        help=f"evals running at once (default: evals_config.py, else {DEFAULT_MAX_CONCURRENCY})",
    )
    command.add_argument(
        "--timeout",
        type=seconds,
        metavar="SECONDS",
        help=f"time limit of an eval that sets none (default: evals_config.py, else {DEFAULT_TIMEOUT_S:g})",
    )
    command.add_argument("--list", action="store_true", help="list the selected evals and exit")
    command.add_argument(
        "--url",
        help="run against a running eve-py server (e.g. http://127.0.0.1:8000) instead of in-process; "
        "its token is read from EVE_API_TOKEN",
    )


def run_eval_command(args: argparse.Namespace) -> int:
    """Run `eve-py eval` with parsed arguments; returns the exit code."""
    try:
        return anyio.run(_run, args)
    except UsageError as exc:  # bad eval files or config, an app that does not compile, an unknown model
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 2


async def _run(args: argparse.Namespace) -> int:
    app_dir: Path = args.app_dir
    suite = discover_evals(app_dir)
    tags: list[str] = args.tag
    cases = suite.select(tags)
    if not cases:
        known = sorted({tag for case in suite.cases for tag in case.definition.tags})
        raise EvalConfigurationError(
            f"no eval has the tag(s) {', '.join(tags)}; the tags in {app_dir} are: {', '.join(known) or 'none'}"
        )
    console = None if args.json else _console()
    if args.list:
        _list(cases, console)
        return 0
    max_concurrency = args.max_concurrency or suite.config.max_concurrency or DEFAULT_MAX_CONCURRENCY
    timeout_s = args.timeout or suite.config.timeout_s or DEFAULT_TIMEOUT_S
    if args.url:
        if args.model:
            raise EvalConfigurationError("--model does not apply with --url: the server runs its own model")
        async with Client(args.url) as client:
            try:
                await client.health()
            except (httpx.HTTPError, ApiError) as exc:
                raise EvalConfigurationError(f"cannot reach the eve server at {args.url}: {exc}") from exc
            return await _run_and_report(
                args,
                console,
                cases,
                lambda: HttpBackend(client, label=args.url),
                labels=("server", args.url),
                max_concurrency=max_concurrency,
                timeout_s=timeout_s,
            )
    agent = load_agent(app_dir)
    spec = choose_model_spec(args.model, agent.model)
    model: Model = resolve_model(spec, app_dir=app_dir)
    try:
        return await _run_and_report(
            args,
            console,
            cases,
            lambda: InProcessBackend(agent, model),
            labels=(spec if isinstance(spec, str) else type(model).__name__, "in-process"),
            max_concurrency=max_concurrency,
            timeout_s=timeout_s,
        )
    finally:
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()  # the HTTP client a provider model made for itself


async def _run_and_report(
    args: argparse.Namespace,
    console: Console | None,
    cases: list[EvalCase],
    backend: Callable[[], EvalBackend],
    *,
    labels: tuple[str, str],
    max_concurrency: int,
    timeout_s: float,
) -> int:
    started_at, started = now_iso(), time.perf_counter()
    reporter = None
    if console is None:
        results = await run_evals(cases, backend, max_concurrency=max_concurrency, timeout_s=timeout_s)
    else:
        from eve_py.evals.console import ConsoleReporter

        reporter = ConsoleReporter(console, len(cases))
        with reporter:
            results = await run_evals(
                cases,
                backend,
                max_concurrency=max_concurrency,
                timeout_s=timeout_s,
                on_start=reporter.started,
                on_finish=reporter.finished,
            )
    run = EvalRun(
        app_dir=args.app_dir,
        model=labels[0],
        backend=labels[1],
        started_at=started_at,
        duration_s=time.perf_counter() - started,
        results=results,
        tags=tuple(args.tag),
    )
    folder = write_artifacts(run)
    if args.junit is not None:
        write_junit(run, args.junit)
    if reporter is None:
        _print_json(run, results, folder)
    else:
        reporter.summary(run, artifacts=folder, junit=args.junit)
    return run.exit_code


def _console() -> Console:
    try:
        from rich.console import Console
    except ImportError:
        raise EvalConfigurationError(_RICH_HINT) from None
    console = Console(highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = 120  # logs (CI) are read wide; rich would assume 80 columns
    return console


def _list(cases: list[EvalCase], console: Console | None) -> None:
    if console is None:
        listing = [
            {
                "id": case.id,
                "file": case.file,
                "description": case.definition.description,
                "tags": list(case.definition.tags),
                "timeoutS": case.definition.timeout_s,
            }
            for case in cases
        ]
        print(json.dumps({"evals": listing}, indent=2), flush=True)
        return
    from eve_py.evals.console import print_listing

    print_listing(console, cases)


def _print_json(run: EvalRun, results: list[EvalResult], folder: Path) -> None:
    document = {
        "summary": {**summary_record(run), "artifacts": str(folder)},
        "results": [result_record(result) for result in results],
    }
    print(json.dumps(document, indent=2, ensure_ascii=False), flush=True)
