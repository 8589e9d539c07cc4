"""The `eve-py` command line: `init`, `build`, `chat`, `run`, `eval`, `serve` and `mcp`.

```
eve-py --version
eve-py init [DIR] [--force]  (see cli/init.py)
eve-py build APP_DIR [--import-timeout SECONDS]
eve-py chat APP_DIR [--model mock|provider/model] [--session ID] [--store PATH|URL]
eve-py run APP_DIR [MESSAGE] [--answers FILE] [--json] [--model ...] [--session ID] [--store PATH|URL]
eve-py eval APP_DIR [--model ...] [--tag T] [--junit PATH] [--json] [--max-concurrency N] [--list]  (see cli/evals.py)
eve-py serve APP_DIR [--host H] [--port P] [--model mock|provider/model] [--store PATH|URL] [--workers N]
eve-py mcp APP_DIR [--http [--host H] [--port P]]  (see cli/mcp.py)
eve-py store migrate URL | eve-py store copy FROM TO  (see cli/store.py)
```

`--store` takes a SQLite file or a `postgresql://` URL; without it `EVE_STORE`, else
`APP_DIR/.eve/sessions.db`.

`run` without MESSAGE continues the session given by `--session` (a parked one gets the
answers file's answers).

Exit codes: 0 success; 1 compile errors or a failed turn; 2 bad usage or configuration (unknown
model, unknown session, bad answers file, rejected answer); 3 `run` stopped waiting for input it
has no answer for; 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from pydantic import ValidationError

from eve_py._camel import describe_validation_error
from eve_py._version import version
from eve_py.agent import load_agent, load_mock_model
from eve_py.cli._chat import run_chat
from eve_py.cli._evals import add_eval_command, run_eval_command
from eve_py.cli._init import add_init_parser, run_init_command
from eve_py.cli._mcp import add_mcp_parser, run_mcp_command
from eve_py.cli._prompts import describe_answer
from eve_py.cli._render import Renderer, say, showing_retries
from eve_py.cli._serve import add_serve_parser, serve
from eve_py.cli._store import add_store_parser, run_store_command
from eve_py.cli._types import CommandParser, seconds
from eve_py.compiler import compile_app_definitions, manifest_path, save_manifest
from eve_py.errors import (
    CompileError,
    EveError,
    InputResponseError,
    InvalidAnswerError,
    SessionError,
    StoreUnavailableError,
    UsageError,
)
from eve_py.harness import Committed, Runtime, Session
from eve_py.models import Model
from eve_py.parking._answers import check_response
from eve_py.protocol import dump_event
from eve_py.protocol.requests import InputRequest, InputResponse
from eve_py.sessions._opening import open_store, store_spec

__all__ = ("main",)


_print = say

_RESUMABLE = ("chat", "run")
"""The commands that continue a session with --session: an interrupted one says so."""


STORE_HELP = (
    "where sessions are kept: a SQLite file, or a postgresql:// URL (default $EVE_STORE, else APP_DIR/.eve/sessions.db)"
)
APP_DIR_HELP = "the app folder, holding agent/ (agent.py, tools/*.py) and optionally evals/"

_EXAMPLES = """\
examples:
  eve-py init my-app                 write a working app to start from
  eve-py build my-app                check every tool, write my-app/.eve/build/manifest.json
  eve-py chat my-app --model mock    chat offline on the app's agent/mock_model.py
  eve-py eval my-app --model mock    run the app's evals
  eve-py serve my-app --model mock   HTTP API and browser chat on http://127.0.0.1:8000
  eve-py mcp my-app                  the app's tools to an MCP host over stdio (--http for /mcp)
  eve-py run my-app "deploy the app" --model mock --answers answers.json --json
                                     one turn, answers from a file, events as NDJSON lines

Run "eve-py COMMAND --help" for a command's options.
"""


def _parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="eve-py",
        description="Build and run eve-py agent apps: tools that park for a person's answer or approval.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"eve-py {version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_init_parser(commands)

    build = commands.add_parser("build", help="compile an app and write .eve/build/manifest.json")
    build.add_argument("app_dir", type=Path, help=APP_DIR_HELP)
    build.add_argument(
        "--import-timeout",
        type=seconds,
        metavar="SECONDS",
        help="report a file still importing after SECONDS as an error instead of waiting for it "
        "(default: $EVE_IMPORT_TIMEOUT, else 5)",
    )

    def runtime_options(command: argparse.ArgumentParser) -> None:
        command.add_argument("app_dir", type=Path, help=APP_DIR_HELP)
        command.add_argument(
            "--model",
            help='"mock" for the app\'s agent/mock_model.py, "provider/model" (Vercel AI Gateway), '
            '"anthropic:MODEL" or "openai:MODEL"; overrides EVE_MODEL and the agent\'s own model',
        )
        command.add_argument("--session", help="continue this session id (e.g. one that is parked)")
        command.add_argument("--store", help=STORE_HELP)

    chat = commands.add_parser("chat", help="chat with an app in the terminal, answering its questions")
    runtime_options(chat)

    run = commands.add_parser("run", help="send one message non-interactively")
    runtime_options(run)
    run.add_argument("message", nargs="?", help="the user message; leave out to continue --session")
    run.add_argument("--answers", type=Path, help="JSON array of answers, given to parked requests in order")
    run.add_argument("--json", action="store_true", help="print every event as one JSON line (NDJSON)")
    add_eval_command(commands)

    add_serve_parser(commands)
    add_mcp_parser(commands)
    add_store_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "init":
            return run_init_command(args)
        if args.command == "build":
            return _build(args.app_dir, import_timeout_s=args.import_timeout)
        if args.command == "chat":
            with showing_retries():
                return anyio.run(_chat, args)
        if args.command == "eval":
            return run_eval_command(args)
        if args.command == "serve":
            return serve(args)
        if args.command == "mcp":
            return run_mcp_command(args)
        if args.command == "store":
            return run_store_command(args)
        with showing_retries():
            return anyio.run(_run, args)
    except CompileError as exc:
        _print(str(exc), err=True)
        return 1
    except (UsageError, SessionError) as exc:
        _print(f"error: {exc}", err=True)
        return 2
    except StoreUnavailableError as exc:  # the database went away mid-run: what was stored stays stored
        _print(f"error: {exc}; parked sessions stay parked and can be continued with --session", err=True)
        return 1
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); point stdout at devnull so the exit flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        # The --session hint is for `run`; chat says what became of its turn, and its own command.
        hint = "; parked sessions stay parked and can be continued with --session" if args.command == "run" else ""
        _print(f"\ninterrupted{hint}", err=True)
        return 130


def _build(app_dir: Path, *, import_timeout_s: float | None) -> int:
    compiled = compile_app_definitions(app_dir, import_timeout_s=import_timeout_s)
    for diagnostic in compiled.diagnostics:
        _print(diagnostic.render(), err=True)
    manifest = save_manifest(compiled)
    _print(f"compiled {len(manifest.tools)} tool(s) -> {manifest_path(app_dir)}")
    for tool in manifest.tools:
        flags = (
            ("client-resolved", tool.client_resolved),
            ("approval", tool.needs_approval),
            ("editable", tool.editable),
        )
        traits = [trait for trait, on in flags if on]
        _print(f"  {tool.name:<24} {tool.source}{'  [' + ', '.join(traits) + ']' if traits else ''}")
    return 0


def _model(args: argparse.Namespace) -> Model | str | None:
    """The --model choice; without it the Runtime picks EVE_MODEL, then the agent's own model."""
    if args.model == "mock":
        return load_mock_model(args.app_dir)
    chosen: str | None = args.model
    return chosen


async def _chat(args: argparse.Namespace) -> int:
    return await run_chat(args, _model(args))


async def _open(args: argparse.Namespace, runtime: Runtime) -> Session:
    if args.session:
        return await runtime.get_session(args.session)
    return await runtime.create_session()


def _same_options(args: argparse.Namespace) -> str:
    """The --model/--store options this run was given, to repeat in a hint."""
    options = f" --model {args.model}" if args.model else ""
    return options + (f" --store {args.store}" if args.store else "")


def _nothing_to_continue(args: argparse.Namespace, session: Session) -> str:
    """Why `run --session ID` without a message has nothing to do, and what would."""
    turn = session.record.turn
    last = "" if turn is None else f" (its last turn {turn.status}{f': {turn.error}' if turn.error else ''})"
    return (
        f"session {session.id} is idle{last}: no turn is parked or running, so there is nothing to continue; "
        f"send a message to start one: eve-py run {args.app_dir} --session {session.id}{_same_options(args)} MESSAGE"
    )


def _load_answers(path: Path | None) -> list[dict[str, Any]]:
    if path is None:
        return []
    try:
        answers = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read answers file {str(path)!r}: {exc}") from exc
    if not isinstance(answers, list) or not all(isinstance(a, dict) for a in answers):
        raise UsageError(f'answers file {str(path)!r} must hold a JSON array of objects like {{"optionId": "approve"}}')
    for index, answer in enumerate(answers):
        try:
            InputResponse.model_validate({"requestId": "-", **answer})
        except ValidationError as exc:
            raise UsageError(
                f"answers file {str(path)!r}, answer {index}: not an input response "
                f"(keys: requestId?, optionId, text, value, action): {describe_validation_error(exc)}"
            ) from exc
    return answers


def _answer_text(request: InputRequest, answer: InputResponse) -> str:
    """An answer as the person sees it (labels), or the raw answer when it does not fit (respond says why)."""
    try:
        return describe_answer(request, check_response(request, answer))
    except InvalidAnswerError:
        return json.dumps(answer.model_dump(by_alias=True, exclude_none=True, exclude={"request_id"}))


async def _run(args: argparse.Namespace) -> int:
    if args.message is None and not args.session:
        raise UsageError("give a MESSAGE, or --session ID to continue a session")
    agent = load_agent(args.app_dir)
    answers = _load_answers(args.answers)
    render = Renderer()

    def listen(committed: Committed) -> None:
        for event in committed.events:
            if args.json:
                _print(dump_event(event))
            else:
                render(event)

    store = await open_store(store_spec(args.store, args.app_dir))
    runtime = Runtime(agent, model=_model(args), store=store, on_event=listen)
    try:
        session = await _open(args, runtime)
        # With --json stdout holds events only, and no event names the session: say it on stderr.
        _print(f"session {session.id}", err=args.json)
        if args.message is not None:
            result = await session.send(args.message)
        elif session.status == "idle":
            raise UsageError(_nothing_to_continue(args, session))
        else:
            result = await session.resume()
        while result.status == "waiting":
            if len(answers) < len(result.input_requests):
                _print(
                    f"session {session.id} is waiting for {len(result.input_requests)} answer(s) and the answers "
                    f"file has {len(answers)} left; continue with: eve-py run {args.app_dir} --session {session.id}"
                    f"{_same_options(args)} --answers FILE (or eve-py chat {args.app_dir} --session {session.id}"
                    f"{_same_options(args)})",
                    err=True,
                )
                return 3
            responses = []
            for request in result.input_requests:
                answer = InputResponse.model_validate({"requestId": request.request_id, **answers.pop(0)})
                responses.append(answer)
                if not args.json:  # say which question took which answer from the file
                    _print(f"? {request.prompt}")
                    _print(f"  answer from {args.answers}: {_answer_text(request, answer)}")
            try:
                result = await session.respond(responses)
            except InputResponseError as exc:
                _print(f"error: {exc}", err=True)
                return 2
        return 0 if result.status == "completed" else 1
    except EveError as exc:
        if isinstance(exc, UsageError | SessionError):
            raise
        _print(f"error: {type(exc).__name__}: {exc}", err=True)
        return 1
    finally:
        await runtime.aclose()
        await store.aclose()


if __name__ == "__main__":
    raise SystemExit(main())
