"""A fork server for crash tests: imports eve-py once, then forks a real worker process per command.

Importing eve-py costs seconds; forking a process that already has it costs milliseconds, so a
test can kill dozens of workers at every store commit and recover each in a new process.

Run as `python tests/crash/forkserver.py`. Commands are JSON lines on stdin; every line on
stdout is JSON with `pid` and `event`, written by this server or by one of its children:

- `{"op": "fork", "role": "worker"|"recover", "flow", "db", "session"?, "killAt"?, "gate"?, "env"?}`
  forks a child (`forked` with its pid). A `worker` creates a session (`session`), sends the
  flow's message and answers every request until the turn ends; a `recover` opens `session`,
  calls `resume(force=True)` (sends the message again if it was never stored) and answers
  what is still open. Both end with `done` (`status`,
  `message`, `asked`: the request ids it answered, `commits`) or `error` (`type`, `message`).
  With `killAt: [n, "before"|"after"]` the child reports `killpoint` at its n-th store commit
  (before or after it is written) and waits there to be killed. With `gate`, it first waits
  until `open-gate`. `env` adds environment variables (the flows read `CRASH_RUNS`, `CRASH_HOLD`).
- `{"op": "open-gate"}` lets every gated child go at once (`gate-open`).
- `{"op": "wait", "pid": n}` reaps a child (`exited` with `status`: exit code, or -signal).

The kill point lives only here, in a store wrapper passed to `Runtime(store=...)`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from eve_py import EveError, Runtime, TurnResult  # noqa: E402
from eve_py._json import JsonValue  # noqa: E402
from eve_py.protocol import Event  # noqa: E402
from eve_py.protocol.messages import Message  # noqa: E402
from eve_py.sessions import ForwardingStore, SessionRecord, SQLiteSessionStore  # noqa: E402
from tests.crash.flows import MESSAGES, agent, answer, emit, model  # noqa: E402


class KillPointStore(ForwardingStore):
    """A real SQLite store that stops at one commit (before or after writing it) to be killed."""

    def __init__(self, path: str, kill_at: tuple[int, str] | None) -> None:
        super().__init__(SQLiteSessionStore(path))
        self.kill_at = kill_at
        self.commits = 0

    def _stop_if(self, when: str) -> None:
        if self.kill_at == (self.commits, when):
            emit("killpoint", commit=self.commits, when=when)
            while True:  # the test kills this process by its pid
                signal.pause()

    async def commit(
        self,
        record: SessionRecord,
        events: Sequence[Event],
        messages: Sequence[Message] = (),
        *,
        durable: bool = True,
    ) -> SessionRecord:
        self.commits += 1
        self._stop_if("before")
        stored = await self.inner.commit(record, events, messages, durable=durable)
        self._stop_if("after")
        return stored


async def _answer_all(runtime: Runtime, session_id: str, result: TurnResult, asked: list[str]) -> TurnResult:
    session = await runtime.get_session(session_id)
    while result.status == "waiting":
        asked += [request.request_id for request in result.input_requests]
        result = await session.respond([answer(request) for request in result.input_requests])
    return result


async def _child(command: dict[str, Any]) -> None:
    kill_at = command.get("killAt")
    store = KillPointStore(command["db"], (kill_at[0], kill_at[1]) if kill_at else None)
    runtime = Runtime(agent, model=model, store=store)
    asked: list[str] = []
    try:
        if command["role"] == "worker":
            session = await runtime.create_session()
            emit("session", session=session.id)
            result = await session.send(MESSAGES[command["flow"]])
        else:
            session = await runtime.get_session(command["session"])
            result = await session.resume(force=True)
            if session.record.turn is None:  # the worker died before its message was stored: send it again
                result = await session.send(MESSAGES[command["flow"]])
        result = await _answer_all(runtime, session.id, result, asked)
    except EveError as exc:
        emit("error", type=type(exc).__name__, message=str(exc))
        return
    finally:
        await store.aclose()
    emit("done", status=result.status, message=result.message, asked=list[JsonValue](asked), commits=store.commits)


def _fork(command: dict[str, Any], gate: tuple[int, int] | None) -> int:
    pid = os.fork()
    if pid:
        return pid
    try:  # the child: never returns to the server's loop
        os.environ.update(command.get("env", {}))
        if gate is not None:
            os.close(gate[1])  # only the server holds the write end: its close is everyone's EOF
            if command.get("gate"):
                os.read(gate[0], 1)
        anyio.run(_child, command)
        code = 0
    except BaseException as exc:  # noqa: BLE001  # report anything, then leave without cleanup
        emit("error", type=type(exc).__name__, message=str(exc))
        code = 1
    os._exit(code)


def main() -> None:
    gate: tuple[int, int] | None = None
    for line in sys.stdin:
        command = json.loads(line)
        op = command["op"]
        if op == "fork":
            if command.get("gate") and gate is None:
                gate = os.pipe()
            pid = _fork(command, gate)
            emit("forked", child=pid)
        elif op == "open-gate":
            if gate is not None:
                os.close(gate[1])
                os.close(gate[0])
                gate = None
            emit("gate-open")
        elif op == "wait":
            _, status = os.waitpid(command["pid"], 0)
            code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            emit("exited", child=command["pid"], status=code)


if __name__ == "__main__":
    main()
