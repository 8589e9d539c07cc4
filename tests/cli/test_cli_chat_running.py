"""`eve-py chat --session` on a session whose turn another process is running (its lease is live):
one true sentence with the CLI step to take, exit status 2, and the running turn left alone."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from eve_py import Runtime
from eve_py.agent import load_agent
from eve_py.models import ModelRequest, ModelResponse
from eve_py.sessions import SQLiteSessionStore
from tests.cli.conftest import FIXTURE_APP, REPO

pytestmark = pytest.mark.anyio


class Stuck:
    """A model whose step never ends (until the test cancels it)."""

    name = "stuck"

    def __init__(self) -> None:
        self.entered = anyio.Event()

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.entered.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


async def test_chat_on_a_session_another_process_runs_says_so_and_exits_2(tmp_path: Path) -> None:
    store_path = tmp_path / "s.db"
    model = Stuck()
    runtime = Runtime(load_agent(FIXTURE_APP), model=model, store=SQLiteSessionStore(store_path))
    session = await runtime.create_session()
    async with anyio.create_task_group() as group:
        group.start_soon(session.send, "hello")
        with anyio.fail_after(10):
            await model.entered.wait()
        command = [sys.executable, "-m", "eve_py", "chat", str(FIXTURE_APP), "--session", session.id]
        command += ["--model", "mock", "--store", str(store_path)]
        with anyio.fail_after(60):
            done = await anyio.run_process(command, cwd=REPO, check=False, stdin=None)
        group.cancel_scope.cancel()
    await runtime.aclose()
    out = done.stdout.decode() + done.stderr.decode()
    assert done.returncode == 2, out
    assert "this session's turn is running in another process right now" in out
    assert f"continue with: eve-py chat {FIXTURE_APP} --session {session.id} --model mock --store {store_path}" in out
    assert "resume(" not in out and "interrupted" not in out
