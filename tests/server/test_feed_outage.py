"""A server process's feed of the store's notices through an outage: woken readers, and a log that says it once.

The feed here is a stand-in for PostgreSQL's LISTEN connection (the layer below `follow_feed`):
it fails a set number of times, then delivers. The PostgreSQL outage itself is driven for real in
`test_server_postgres_outage.py`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from eve_py.agent import Agent
from eve_py.server._feed import follow_feed
from eve_py.server._hub import Hub
from eve_py.server._turns import TurnRunner
from eve_py.sessions._feed import Notice
from tests.server.helpers import hitl_runtime

pytestmark = pytest.mark.anyio


class FlakyFeed:
    """Connects once, loses the connection, fails `outage` more times, then connects for good."""

    def __init__(self, outage: int) -> None:
        self.attempts = 0
        self.outage = outage
        self.back = anyio.Event()

    @asynccontextmanager
    async def notices(self) -> AsyncIterator[AsyncIterator[Notice]]:
        self.attempts += 1
        if 1 < self.attempts <= self.outage + 1:
            raise OSError(f"connection refused (attempt {self.attempts})")
        yield self._stream()

    async def _stream(self) -> AsyncIterator[Notice]:
        if self.attempts == 1:
            raise ConnectionResetError("server closed the connection unexpectedly")
        self.back.set()
        await anyio.sleep_forever()
        yield Notice("events", "never")  # pragma: no cover

    async def request_cancel(self, session_id: str) -> None:
        raise AssertionError("not asked here")


async def test_an_outage_is_logged_once_when_it_starts_and_once_when_it_ends(
    hitl_agent: Agent, caplog: pytest.LogCaptureFixture
) -> None:
    hub = Hub()
    runner = TurnRunner(hitl_runtime(hitl_agent), hub)
    feed = FlakyFeed(outage=5)
    caplog.set_level(logging.DEBUG, logger="eve_py.server")
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        await anyio.lowlevel.checkpoint()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            await group.start(
                lambda task_status: follow_feed(
                    feed, hub, runner, retry_s=1.0, max_retry_s=8.0, sleep=sleep, task_status=task_status
                )
            )
            await feed.back.wait()
            group.cancel_scope.cancel()
    records = [r for r in caplog.records if r.name == "eve_py.server"]
    warnings = [r for r in records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and warnings[0].exc_info is not None, records
    assert "ConnectionResetError" in caplog.text  # the cause, with its traceback, once
    assert [r.getMessage() for r in records if r.levelno == logging.INFO] == [
        "listening to the store's notices again (6 attempt(s) failed)"
    ]
    assert sum(r.levelno == logging.DEBUG for r in records) == 5  # each failed retry, quietly
    assert feed.attempts == 7
    assert waits == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]  # backing off between attempts, up to its cap
