"""Ctrl-C at `eve-py chat` and `eve-py mcp` (stdio) on a real pseudo-terminal: the process ends at once.

Each command runs on a pty (pexpect); Ctrl-C is the byte the terminal's line discipline turns into
SIGINT for the foreground process group (`\\x03` written to the pty's master). Nothing more is typed
after it: an exit that waited for Enter times out. Every wait is bounded (pexpect's timeout); nothing
sleeps.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TypeAlias

import pexpect
import pytest

from tests.cli.conftest import FIXTURE_APP, REPO

Child: TypeAlias = "pexpect.spawn[str]"

START_TIMEOUT_S = 30
"""Bound on each wait for the program's own output (start-up, a model step)."""
EXIT_TIMEOUT_S = 10
"""Bound on the exit after Ctrl-C; the old exit waited for Enter, forever."""
CTRL_C = "\x03"


@pytest.fixture
def children() -> Iterator[list[Child]]:
    """Processes to kill (through pexpect, by pid) if a test fails midway."""
    spawned: list[Child] = []
    yield spawned
    for child in spawned:
        if child.isalive():
            child.terminate(force=True)


def eve_py(children: list[Child], *args: str | Path) -> Child:
    """`python -m eve_py ARGS...` (the `eve-py` program) on a pseudo-terminal, from the repository root."""
    child = pexpect.spawn(
        sys.executable,
        ["-m", "eve_py", *map(str, args)],
        cwd=str(REPO),
        env={**os.environ, "COLUMNS": "200"},
        encoding="utf-8",
        timeout=START_TIMEOUT_S,
        dimensions=(50, 200),
    )
    children.append(child)
    return child


def interrupt(child: Child) -> tuple[int, str]:
    """Press Ctrl-C and type nothing more; the exit status and what was shown after the key."""
    child.send(CTRL_C)
    child.expect(pexpect.EOF, timeout=EXIT_TIMEOUT_S)
    shown = str(child.before)
    child.close()
    assert child.exitstatus is not None, f"killed by signal {child.signalstatus}: {shown}"
    return int(child.exitstatus), shown


def session_of(child: Child) -> str:
    """The session id the chat's banner names."""
    child.expect(r"session (ses_\w+)")
    assert isinstance(child.match, re.Match)
    return str(child.match.group(1))


def test_ctrl_c_at_the_message_prompt_ends_the_chat_at_once_with_130(children: list[Child], tmp_path: Path) -> None:
    child = eve_py(children, "chat", FIXTURE_APP, "--model", "mock", "--store", tmp_path / "s.db")
    child.expect_exact("you > ")

    status, shown = interrupt(child)

    assert status == 130, shown
    assert "interrupted" in shown and "parked sessions stay parked" not in shown  # nothing was parked
    assert "Traceback" not in shown


def test_ctrl_c_at_a_batchs_second_request_keeps_the_first_answer_for_the_resumed_chat(
    children: list[Child], tmp_path: Path
) -> None:
    store = tmp_path / "s.db"
    child = eve_py(children, "chat", FIXTURE_APP, "--model", "mock", "--store", store)
    session = session_of(child)
    child.expect_exact("you > ")
    child.sendline("review my page")  # parks a batch of two: a question, then an approval
    child.expect_exact("? Which colour should the review use?")
    child.expect_exact("Pick (1-2, several: 1,2): ")
    child.sendline("2")
    child.expect_exact("Let guarded_echo run? [y/n] ")

    status, shown = interrupt(child)

    assert status == 130, shown
    assert "kept your 1 answer(s) to this batch" in shown
    assert f"continue with: eve-py chat {FIXTURE_APP} --session {session} --model mock --store {store}" in shown

    again = eve_py(children, "chat", FIXTURE_APP, "--session", session, "--model", "mock", "--store", store)
    asked = again.expect_exact(["Pick (1-2, several: 1,2): ", "Let guarded_echo run? [y/n] "])
    assert asked == 1, "the colour, answered before Ctrl-C, is asked again"
    assert "Which colour" not in str(again.before)
    again.sendline("y")
    again.expect_exact("The guarded echo ran and returned the token guarded-echo-ok-T4Q9. Colour: blue.")
    again.expect_exact("you > ")
    again.sendeof()
    again.expect(pexpect.EOF)
    again.close()
    assert again.exitstatus == 0


def test_ctrl_c_during_a_model_call_says_the_message_got_no_reply_and_continuing_shows_it(
    children: list[Child], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = socket.create_server(("127.0.0.1", 0))  # takes the model request and never answers
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(server.accept()[0]), daemon=True).start()
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.getsockname()[1]}/v1")
    try:
        store = tmp_path / "s.db"
        child = eve_py(children, "chat", FIXTURE_APP, "--model", "openai:llama", "--store", store)
        session = session_of(child)
        child.expect_exact("you > ")
        child.sendline("hello there")
        child.expect_exact("waiting for openai to answer")  # the model call is under way
        status, shown = interrupt(child)
        assert status == 130, shown
        assert "your message got no reply: its turn was cancelled; continue with: eve-py chat" in shown
        again = eve_py(children, "chat", FIXTURE_APP, "--session", session, "--model", "mock", "--store", store)
        again.expect_exact("your last message got no reply: its turn was cancelled (Ctrl-C). It was: hello there")
        again.expect_exact("you > ")
        again.sendeof()
        again.expect(pexpect.EOF)
    finally:
        for connection in held:
            connection.close()
        server.close()


def test_ctrl_c_ends_mcp_over_stdio_at_once_with_130_and_no_session_hint(children: list[Child]) -> None:
    child = eve_py(children, "mcp", FIXTURE_APP)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "pty", "version": "0"}},
    }
    child.sendline(json.dumps(initialize))
    child.expect_exact('"serverInfo"')  # serving, and its reader waits for the client's next line

    status, shown = interrupt(child)

    assert status == 130, shown
    assert "interrupted" in shown
    assert "--session" not in shown
    assert "Traceback" not in shown
