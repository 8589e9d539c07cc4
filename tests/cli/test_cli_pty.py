"""`eve-py chat` as a person uses it: the real process on a pseudo-terminal (pexpect), typed keys, Ctrl-D.

Every wait is bounded (pexpect's timeout); nothing sleeps.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TypeAlias

import anyio
import anyio.to_thread
import pexpect
import pytest

from eve_py.agent import load_mock_model
from eve_py.testing import MockModel
from tests.cli.conftest import FIXTURE_APP, REPO
from tests.models.fake_provider import mock_brain, running_fake_provider

TIMEOUT_S = 20
Child: TypeAlias = "pexpect.spawn[str]"
EVE = Path(sys.executable).parent / "eve-py"
"""The installed `eve-py` command (the one a printed "continue with" line names)."""

PLAN_STAY = '''\
"""Ask for the stay's dates: a client tool whose answer is a typed form."""

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field

from eve_py import define_client_tool


class Ask(BaseModel):
    prompt: str


class Stay(BaseModel):
    arrival: dt.date = Field(title="Arrival", description="The day you arrive.")
    nights: int = Field(ge=1, le=14, title="Nights")
    room: Literal["single", "double"] = Field(title="Room")


tool = define_client_tool(description="Ask for the stay.", input_schema=Ask, output_schema=Stay)
'''

MOCK_MODEL = '''\
"""Asks for the stay, then reports it."""

import json

from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall


def respond(request: MockModelRequest) -> str | MockResponse:
    done = request.tool_results_since_last_user_message
    if done:
        return "Booked: " + json.dumps(done[-1].output, sort_keys=True)
    return MockResponse(tool_calls=[MockToolCall("plan_stay", {"prompt": "When do you arrive?"})])


model = MockModel(respond)
'''


def spawn(*args: str | Path, env: dict[str, str] | None = None) -> Child:
    """Start a command on a pseudo-terminal, from the repository root."""
    words = [str(arg) for arg in args]
    return pexpect.spawn(
        words[0],
        words[1:],
        cwd=str(REPO),
        env={**os.environ, **(env or {}), "COLUMNS": "200"},
        encoding="utf-8",
        timeout=TIMEOUT_S,
        dimensions=(50, 200),
    )


@pytest.fixture
def chats() -> Iterator[list[Child]]:
    """Children to kill (by pid, through pexpect) if a test fails midway."""
    children: list[Child] = []
    yield children
    for child in children:
        if child.isalive():
            child.terminate(force=True)


def chat(chats: list[Child], *args: str | Path, env: dict[str, str] | None = None) -> Child:
    child = spawn(EVE, "chat", *args, env=env)
    chats.append(child)
    return child


def finish(child: Child) -> int:
    """Wait for the process to end; its exit status."""
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus is not None, child.signalstatus
    return int(child.exitstatus)


def test_ctrl_d_at_a_question_keeps_the_batchs_answers_and_prints_a_command_that_continues(
    chats: list[Child], tmp_path: Path
) -> None:
    store = tmp_path / "s.db"
    child = chat(chats, FIXTURE_APP, "--model", "mock", "--store", store)
    child.expect_exact("you > ")
    child.sendline("review my page")
    child.expect_exact("? Which colour should the review use?")  # the question before the approval
    child.expect_exact("Pick (1-2, several: 1,2): ")
    child.sendline("2")
    child.expect_exact("Let guarded_echo run? [y/n] ")
    child.sendeof()  # Ctrl-D
    child.expect_exact("kept your 1 answer(s) to this batch")
    child.expect(r"continue with: (eve-py chat [^\r\n]+)")
    assert isinstance(child.match, re.Match)
    command = child.match.group(1)
    assert finish(child) == 0
    assert f"--model mock --store {store}" in command

    words = shlex.split(command)
    again = chat(chats, *words[2:])  # the printed command, as printed
    again.expect_exact("Let guarded_echo run? [y/n] ")
    assert "Which colour" not in str(again.before)  # answered before leaving: not asked again
    again.sendline("y")
    again.expect_exact("The guarded echo ran and returned the token guarded-echo-ok-T4Q9. Colour: blue.")
    again.expect_exact("you > ")
    again.sendeof()
    assert finish(again) == 0


def test_quit_and_help_at_a_picker_are_commands_not_answers(chats: list[Child], tmp_path: Path) -> None:
    child = chat(chats, FIXTURE_APP, "--model", "mock", "--store", tmp_path / "s.db")
    child.expect_exact("you > ")
    child.sendline("/help")  # at the message prompt: help, not a message to the model
    child.expect_exact("/quit or Ctrl-D leaves")
    child.expect_exact("you > ")
    assert "Try " not in str(child.before)  # the mock model's reply to anything it does not know
    child.sendline("help me pick a template")
    child.expect_exact("Pick (1-3, several: 1,3): ")
    child.sendline("/help")
    child.expect_exact("type a number from 1 to 3, or an option's id or label; several picks")
    child.expect_exact("Pick (1-3, several: 1,3): ")
    child.sendline("1,1")  # a duplicate pick
    child.expect_exact("! 'Blue' is picked twice; name each option once")
    child.expect_exact("Pick (1-3, several: 1,3): ")
    child.sendline("/quit")
    child.expect(r"continue with: eve-py chat \S+ --session ses_\w+ --model mock --store ")
    assert finish(child) == 0


def test_an_approval_explains_itself_in_plain_words(chats: list[Child], tmp_path: Path) -> None:
    child = chat(chats, FIXTURE_APP, "--model", "mock", "--store", tmp_path / "s.db")
    child.expect_exact("you > ")
    child.sendline("run the guarded echo")
    child.expect_exact("guarded_echo will run with: text: hello")
    child.expect_exact("Let guarded_echo run? [y/n] ")
    child.sendline("maybe")
    child.expect_exact("! type y to approve or n to deny")
    child.expect_exact("Let guarded_echo run? [y/n] ")
    assert "optionId" not in str(child.before)
    child.sendline("n")
    child.expect_exact("Reason (optional, Enter to skip): ")
    child.sendline("")
    child.expect_exact("The guarded echo did not run: Tool execution was denied.")
    child.expect_exact("you > ")
    child.sendeof()
    assert finish(child) == 0


def test_a_bad_field_in_a_form_asks_that_field_again_and_only_that_one(chats: list[Child], tmp_path: Path) -> None:
    app = tmp_path / "stays"
    (app / "agent" / "tools").mkdir(parents=True)
    (app / "agent" / "agent.py").write_text("from eve_py import define_agent\n\nagent = define_agent()\n")
    (app / "agent" / "tools" / "plan_stay.py").write_text(PLAN_STAY)
    (app / "agent" / "mock_model.py").write_text(MOCK_MODEL)
    child = chat(chats, app, "--model", "mock")
    child.expect_exact("you > ")
    child.sendline("book a stay")
    child.expect_exact("Arrival: The day you arrive.")
    child.expect_exact("Arrival (YYYY-MM-DD): ")
    child.sendline("2025-13-45")
    child.expect_exact("! '2025-13-45' is not a valid date")
    child.expect_exact("Arrival (YYYY-MM-DD): ")
    child.sendline("2025-05-01")
    child.expect_exact("Nights (a whole number): ")
    child.sendline("0")
    child.expect_exact("! 0 is less than the minimum of 1")
    child.expect_exact("Nights (a whole number): ")
    assert "Arrival" not in str(child.before)  # the good field is not asked again
    child.sendline("2")
    child.expect_exact("Room (1=single 2=double): ")
    child.sendline("suite")
    child.expect_exact("! 'suite' is not one of ['single', 'double']")
    child.expect_exact("Room (1=single 2=double): ")
    child.sendline("2")  # a choice by its number
    child.expect_exact('Booked: {"arrival": "2025-05-01", "nights": 2, "room": "double"}')
    child.expect_exact("you > ")
    child.sendeof()
    assert finish(child) == 0


@pytest.mark.anyio
async def test_a_retried_model_shows_a_status_line(chats: list[Child], tmp_path: Path) -> None:
    model = load_mock_model(FIXTURE_APP)
    assert isinstance(model, MockModel)
    async with running_fake_provider(mock_brain(model)) as provider:
        provider.fail_next(503, body='{"error": {"message": "overloaded"}}', headers={"retry-after": "0"})
        env = {"OPENAI_BASE_URL": provider.openai_base_url, "OPENAI_API_KEY": "sk-test-1"}
        child = chat(chats, FIXTURE_APP, "--model", "openai:gpt-test", "--store", tmp_path / "s.db", env=env)
        # pexpect blocks: wait in a thread, so the provider (in this event loop) keeps serving
        await anyio.to_thread.run_sync(child.expect_exact, "you > ")
        child.sendline("run the guarded echo")
        await anyio.to_thread.run_sync(
            child.expect, re.escape("... openai answered HTTP 503: overloaded; trying again in 0.0 s (attempt 2 of 4)")
        )
        await anyio.to_thread.run_sync(child.expect_exact, "Let guarded_echo run? [y/n] ")
        child.sendline("y")
        await anyio.to_thread.run_sync(child.expect_exact, "guarded-echo-ok-T4Q9.")
        await anyio.to_thread.run_sync(child.expect_exact, "you > ")
        child.sendeof()
        assert await anyio.to_thread.run_sync(finish, child) == 0
