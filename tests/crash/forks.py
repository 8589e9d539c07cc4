"""The test side of `forkserver.py`: fork workers, wait for what they report, kill them by pid."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream

SERVER = Path(__file__).resolve().parent / "forkserver.py"


class ForkServer:
    """One running `forkserver.py`; every wait is bounded (`anyio.fail_after`)."""

    def __init__(self, process: Process) -> None:
        self.process = process
        assert process.stdout is not None and process.stdin is not None
        self._lines = TextReceiveStream(process.stdout)
        self._buffer = ""
        self._seen: list[dict[str, Any]] = []
        self.children: set[int] = set()
        """Forked and not reaped yet."""

    async def _send(self, command: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send((json.dumps(command) + "\n").encode())

    async def _next(self) -> dict[str, Any]:
        while "\n" not in self._buffer:
            self._buffer += await self._lines.receive()
        line, self._buffer = self._buffer.split("\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    async def expect(self, pid: int, events: Collection[str], timeout_s: float = 30) -> dict[str, Any]:
        """The first not yet taken report of `pid` whose event is one of `events`."""
        with anyio.fail_after(timeout_s):
            while True:
                for message in self._seen:
                    if message["pid"] == pid and message["event"] in events:
                        self._seen.remove(message)
                        return message
                self._seen.append(await self._next())

    async def fork(self, **command: Any) -> int:
        """Fork a child (see `forkserver.py` for the command's fields); returns its pid."""
        await self._send({"op": "fork", **command})
        forked = await self.expect(self.process.pid, {"forked"})
        pid: int = forked["child"]
        self.children.add(pid)
        return pid

    async def open_gate(self) -> None:
        await self._send({"op": "open-gate"})
        await self.expect(self.process.pid, {"gate-open"})

    async def reap(self, pid: int) -> int:
        """Wait for the child to end; its exit code, or -signal."""
        await self._send({"op": "wait", "pid": pid})
        exited = await self.expect(self.process.pid, {"exited"})
        self.children.discard(pid)
        status: int = exited["status"]
        return status

    async def kill(self, pid: int) -> None:
        """SIGKILL the child by its pid and reap it."""
        os.kill(pid, signal.SIGKILL)
        assert await self.reap(pid) == -signal.SIGKILL

    async def run(self, **command: Any) -> dict[str, Any]:
        """Fork a child and wait for its `done` or `error`, then reap it."""
        pid = await self.fork(**command)
        outcome = await self.expect(pid, {"done", "error"})
        assert await self.reap(pid) == 0
        return outcome


@asynccontextmanager
async def fork_server() -> AsyncIterator[ForkServer]:
    """Start `forkserver.py` (eve-py imported once); stop it at the end."""
    async with await anyio.open_process([sys.executable, str(SERVER)], stderr=None) as process:
        server = ForkServer(process)
        try:
            yield server
        finally:
            for pid in server.children:  # a failed test leaves no worker behind
                os.kill(pid, signal.SIGKILL)
            assert process.stdin is not None
            await process.stdin.aclose()
            with anyio.fail_after(30):
                await process.wait()
