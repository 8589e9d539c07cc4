"""`eve-py chat APP_DIR`: a terminal chat that asks the person every parked question.

Leaving is safe at any prompt (Ctrl-D, `/quit`, or Ctrl-C, which ends the process at once with
status 130): the answers already given to an open batch are kept (`respond(..., settle=False)`:
the batch stays open for the rest), and the command that continues the session is printed with
the same `--model`/`--store`. The questions of a batch are asked before its approvals.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import threading
from collections.abc import Callable, Sequence

import anyio
import anyio.from_thread
import anyio.lowlevel

from eve_py.agent import load_agent
from eve_py.cli._prompts import Ask, QuitChat, ask_request
from eve_py.cli._render import Renderer, say
from eve_py.errors import EveError, InputResponseError, RequestExpiredError
from eve_py.harness import Committed, Runtime, Session
from eve_py.models import Model
from eve_py.protocol import MessageReceived, TurnCancelled, TurnCompleted, TurnFailed
from eve_py.protocol.requests import InputRequest, InputResponse
from eve_py.protocol.turns import TurnResult
from eve_py.sessions._opening import open_store, store_spec

__all__ = ("continue_command", "run_chat")

CHAT_HELP = """\
  Type a message and press Enter; the agent may ask questions or ask to run a tool.
  At a question: a number, an option's id or label (several: 1,3), or your own words when
  allowed; /skip leaves it unanswered, /help explains what it wants.
  /quit or Ctrl-D leaves; answers given so far are kept and the chat can be continued later."""


class _Leave(Exception):  # noqa: N818 - the person left, not an error
    """The person left at a question (Ctrl-D or /quit; a Ctrl-C stays the cancellation it is)."""


def continue_command(args: argparse.Namespace, session_id: str) -> str:
    """The `eve-py chat` command that continues `session_id` with this run's --model and --store."""
    words = ["eve-py", "chat", str(args.app_dir), "--session", session_id]
    if args.model:
        words += ["--model", args.model]
    if args.store:
        words += ["--store", str(args.store)]
    return shlex.join(words)


async def _keep(session: Session, answered: list[InputResponse]) -> None:
    """Keep the answers given so far, the batch left open for the rest."""
    if not answered:
        return
    try:
        await session.respond(answered, settle=False)
    except InputResponseError as exc:  # e.g. another client answered meanwhile
        say(f"your answers could not be kept: {exc}")
        return
    say(f"kept your {len(answered)} answer(s) to this batch; the rest will be asked when you continue")


async def _answer_batch(session: Session, requests: Sequence[InputRequest], ask: Ask) -> TurnResult:
    """Ask every request of the parked batch (questions first, approvals last), then send the answers.

    Raises:
        _Leave: The person left at a question; what could be kept was sent.
        CancelledError: Ctrl-C at a question; what could be kept was sent (shielded) first.
    """
    asked = sorted(requests, key=lambda request: request.kind == "tool-approval")
    answered: list[InputResponse] = []
    try:
        for request in asked:
            answered.append(await ask_request(request, ask, say))  # noqa: PERF401 - kept when the person leaves
    except (EOFError, QuitChat):
        say("")
        await _keep(session, answered)
        raise _Leave from None
    except anyio.get_cancelled_exc_class():  # Ctrl-C: the answers given are kept as on Ctrl-D
        say("")
        with anyio.CancelScope(shield=True):
            await _keep(session, answered)
        raise
    return await session.respond(answered)


async def _converse(session: Session, result: TurnResult | None, ask: Ask, render: Renderer) -> None:
    """Answer parked batches and send messages until the person leaves.

    When an answer is refused because the batch changed meanwhile (another client answered, or a
    request expired), what was written since the batch was shown is shown first (`approved by
    alice`, `expired: ...`, the results and replies that followed), then what is still open is asked.
    """
    while True:
        while result is not None and result.status == "waiting":
            render.remember(result.input_requests)
            start = session.record.event_count
            try:
                result = await _answer_batch(session, result.input_requests, ask)
            except InputResponseError as exc:
                say(f"  ! {exc}")
                if isinstance(exc, RequestExpiredError):
                    await session.expire()  # refused before any write: the turn goes on without it here
                await session.refresh()
                render.catch_up(await session.events(start))
                if session.status != "waiting":
                    say("  (the session no longer waits for these answers)")
                    result = None
                    continue
                result = await session.resume()
        line = (await ask("\nyou > ")).strip()
        if line in ("/quit", "/exit"):
            return
        if line == "/help":
            say(CHAT_HELP)
        elif line:
            result = await session.send(line)


async def _cancelled_message(session: Session) -> str | None:
    """The text of the message whose turn was cancelled, when the session's last turn ended so; else None."""
    try:
        await session.refresh()
        events = await session.events()
    except EveError:
        return None
    ends = [e for e in events if isinstance(e, TurnCompleted | TurnFailed | TurnCancelled)]
    if not ends or not isinstance(ends[-1], TurnCancelled):
        return None
    received = [e.data.message for e in events if isinstance(e, MessageReceived)]
    return received[-1] if received else ""


async def _still_waiting(session: Session) -> bool:
    """Whether the session waits for an answer (for the parting hint; a store that fails says no)."""
    try:
        await session.refresh()
    except EveError:
        return False
    return session.status == "waiting"


class _Line:
    """One line being read in a daemon thread, and the event loop waiting for it."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self._token = anyio.lowlevel.current_token()
        self._line = ""
        self._error: BaseException | None = None

    def fill(self, read: Callable[[], str]) -> None:
        """Read the line (in the thread) and wake the loop; a loop that has ended is not told."""
        try:
            self._line = read()
        except BaseException as exc:  # noqa: BLE001 - handed to the reader, EOFError included
            self._error = exc
        try:
            anyio.from_thread.run_sync(self.done.set, token=self._token)
        except RuntimeError:  # the chat has ended (Ctrl-C): nobody waits for this line
            pass

    def result(self) -> str:
        if self._error is not None:
            raise self._error
        return self._line


class TerminalLines:
    """Reads the person's lines (an `Ask`) so that a Ctrl-C at a prompt ends the process at once.

    `input()` in an anyio worker thread kept a Ctrl-C'd chat alive until Enter (the interpreter
    joins such threads at exit) and swallowed that line. Here each line is read by a daemon
    thread, which exit does not wait for, straight from the descriptor (`os.read`: no lock of
    `sys.stdin` for the exit to trip on). A read that a cancellation left behind is picked up by
    the next call, so no line is lost. A `sys.stdin` without a descriptor (`io.StringIO`) is read
    with `input()`.
    """

    def __init__(self) -> None:
        self._buffer = b""
        self._pending: _Line | None = None

    async def __call__(self, prompt: str) -> str:
        print(prompt, end="", flush=True)
        if self._pending is None:
            self._pending = _Line()
            thread = threading.Thread(target=self._pending.fill, args=(self._read,), name="eve-py chat input")
            thread.daemon = True
            thread.start()
        line = self._pending
        await line.done.wait()
        self._pending = None
        return line.result()

    def _read(self) -> str:
        """One line of standard input without its newline, as `input()` reads it; EOFError at the end."""
        try:
            fd = sys.stdin.fileno()
        except (AttributeError, OSError, ValueError):  # no descriptor to read
            return input()
        while b"\n" not in self._buffer:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # e.g. the terminal hung up: the input has ended
                chunk = b""
            if not chunk:
                line, self._buffer = self._buffer, b""
                if not line:
                    raise EOFError
                return self._decode(line)
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return self._decode(line)

    @staticmethod
    def _decode(line: bytes) -> str:
        return line.decode(getattr(sys.stdin, "encoding", None) or "utf-8", errors="replace")


async def run_chat(args: argparse.Namespace, model: Model | str | None) -> int:
    """Run `eve-py chat` with parsed arguments and the chosen model (see `cli.main`); returns the exit code."""
    agent = load_agent(args.app_dir)
    render = Renderer()

    async def listen(committed: Committed) -> None:
        render.catch_up(committed.events)  # a tool's reports, shown live, come again committed: once

    store = await open_store(store_spec(args.store, args.app_dir))
    runtime = Runtime(agent, model=model, store=store, on_event=listen, on_live=lambda _, event: render(event))
    session: Session | None = None
    try:
        session = await (runtime.get_session(args.session) if args.session else runtime.create_session())
        say(f"eve-py chat: {agent.name} with model {runtime.model.name}; session {session.id}")
        say("(/help for help; /quit or Ctrl-D leaves, and the chat continues later with:")
        say(f"  {continue_command(args, session.id)})")
        result: TurnResult | None = None
        if session.status == "running" and session.record.lease_held():
            say(
                "this session's turn is running in another process right now; let it finish (or stop that "
                f"process), then continue with: {continue_command(args, session.id)}"
            )
            return 2
        if session.status == "running":
            say("this session's last turn was interrupted (its process stopped); continuing it")
            result = await session.resume()
        elif session.status == "waiting":
            result = await session.resume()
        elif (unanswered := await _cancelled_message(session)) is not None:
            say(f"your last message got no reply: its turn was cancelled (Ctrl-C). It was: {unanswered}")
        await _converse(session, result, TerminalLines(), render)
    except _Leave:
        pass
    except EOFError:
        say("")
    except anyio.get_cancelled_exc_class():
        if session is not None:
            with anyio.CancelScope(shield=True):
                if await _cancelled_message(session) is not None:
                    say(
                        "\nyour message got no reply: its turn was cancelled; continue with: "
                        f"{continue_command(args, session.id)}"
                    )
        raise
    finally:
        if session is not None and await _still_waiting(session):
            say(f"the session is waiting for your answer; continue with: {continue_command(args, session.id)}")
        await runtime.aclose()
        await store.aclose()
    return 0
