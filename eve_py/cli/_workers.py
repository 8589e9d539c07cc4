"""`eve-py serve --workers N`: N server processes on one listening socket, kept running.

The parent binds the port once and starts each worker as `python -m eve_py serve ...
--listen-fd FD`, which serves the inherited socket with its own event loop (so N workers use N
cores). SIGINT and SIGTERM are forwarded to every worker, which stops gracefully. A worker
that dies on its own (a crash, the OOM killer, a stray SIGKILL) is replaced; its running turns
are finished by the other workers once their leases lapse. A worker that exits by itself within
`_HEALTHY_S` seconds of its start (a broken app or store: it reports why on stderr) stops the
whole server instead of being restarted in a loop.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import FrameType

__all__ = ("supervise",)

_HEALTHY_S = 10.0


@dataclass
class _Worker:
    process: subprocess.Popen[bytes]
    started: float


def supervise(command: Sequence[str], sock: socket.socket, count: int) -> int:
    """Run `count` workers (`command` plus `--listen-fd`) until SIGINT/SIGTERM; returns the exit code.

    Returns:
        0 when every worker stopped cleanly after a stop signal, 1 when one failed to start.
    """
    full = [*command, "--listen-fd", str(sock.fileno())]

    def spawn() -> _Worker:
        return _Worker(subprocess.Popen(full, pass_fds=(sock.fileno(),)), time.monotonic())

    workers = {worker.process.pid: worker for worker in (spawn() for _ in range(count))}
    stopping = False
    failed = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        for worker in workers.values():
            if worker.process.returncode is None:
                worker.process.send_signal(signal.SIGTERM)

    previous = {number: signal.signal(number, stop) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        while workers:
            pid, status = os.wait()
            worker = workers.pop(pid, None)
            if worker is None:
                continue
            code = worker.process.returncode = os.waitstatus_to_exitcode(status)
            # A worker still starting when told to stop dies of the SIGTERM itself: a clean stop too.
            if stopping:
                failed |= code not in (0, -signal.SIGTERM)
                continue
            if code >= 0 and time.monotonic() - worker.started < _HEALTHY_S:
                print(f"eve-py serve: worker {pid} failed to start (exit {code}); stopping", file=sys.stderr)
                failed = True
                stop(signal.SIGTERM, None)
                continue
            replacement = spawn()
            workers[replacement.process.pid] = replacement
            print(f"eve-py serve: worker {pid} died (exit {code}); started {replacement.process.pid}", file=sys.stderr)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        sock.close()
    return 1 if failed else 0
