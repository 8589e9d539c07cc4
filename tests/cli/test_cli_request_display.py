"""The terminal shows a request's time left beside its prompt, who answered when it was not the
person at this terminal, and a request nobody answered in time."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from eve_py import Agent, InputResponse, Runtime, define_tool
from eve_py.cli._chat import _converse
from eve_py.cli._prompts import ask_request
from eve_py.cli._render import Renderer
from eve_py.harness._commit import Committed
from eve_py.protocol import Event, new_event
from eve_py.protocol.payloads import InputRequestedData, InputResolution, InputResolvedData
from eve_py.protocol.requests import InputOption, InputRequest, ToolCallAction, parse_deadline
from eve_py.sessions import MemorySessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio

TEN = parse_deadline("2026-11-25T10:00:00Z")
"""The tests' clock: 10:00:00 UTC."""
STEP = {"sequence": 0, "turn_id": "t1", "step_index": 0}


def approval(expires_at: str | None = None) -> InputRequest:
    return InputRequest(
        request_id="call-1",
        kind="tool-approval",
        action=ToolCallAction(call_id="call-1", tool_name="publish", input={"version": "1.4.0"}),
        prompt="Approve tool call: publish",
        display="confirmation",
        options=[InputOption(id="approve", label="Approve"), InputOption(id="deny", label="Deny")],
        allow_freeform=False,
        expires_at=expires_at,
    )


def question(expires_at: str | None = None) -> InputRequest:
    return InputRequest(
        request_id="call-2",
        kind="question",
        action=ToolCallAction(call_id="call-2", tool_name="ask_question", input={"prompt": "Which channel?"}),
        prompt="Which channel?",
        display="select",
        options=[InputOption(id="stable", label="Stable"), InputOption(id="beta", label="Beta")],
        expires_at=expires_at,
    )


def typing(*lines: str) -> Callable[[str], Awaitable[str]]:
    """An `Ask` that types `lines` in order."""
    typed = list(lines)

    async def ask(prompt: str) -> str:
        return typed.pop(0)

    return ask


def asked(*requests: InputRequest) -> Event:
    """The `input.requested` event of a batch of `requests`."""
    return new_event(InputRequestedData.of(list(requests), sequence=0, turn_id="t1", step_index=0))


async def shown_prompt(request: InputRequest, now: float) -> str:
    """The `? ...` line the terminal shows for `request` at `now` (answered with `y`)."""
    lines: list[str] = []
    await ask_request(request, typing("y", "1"), lines.append, now=now)
    return next(line for line in lines if line.startswith("? "))


@pytest.mark.parametrize(
    ("expires_at", "now", "shown"),
    [
        ("2026-11-25T10:05:00.000Z", TEN + 0.4, "answer within 4 min 59 s (by 10:05:00 UTC)"),
        ("2026-11-25T10:00:42Z", TEN, "answer within 42 s (by 10:00:42 UTC)"),
        ("2026-11-25T12:05:30Z", TEN, "answer within 2 h 5 min (by 12:05:30 UTC)"),
        ("2026-11-25T11:00:00Z", TEN, "answer within 1 h (by 11:00:00 UTC)"),
        ("2026-11-27T14:00:00Z", TEN, "answer within 2 d 4 h (by 2026-11-27 14:00:00 UTC)"),
        ("2026-11-25T09:59:00Z", TEN, "the time to answer ran out at 09:59:00 UTC"),
    ],
)
async def test_a_request_with_a_deadline_shows_the_time_left_beside_its_prompt(
    expires_at: str, now: float, shown: str
) -> None:
    assert await shown_prompt(approval(expires_at), now) == f"? Approve tool call: publish - {shown}"


async def test_the_time_left_is_counted_when_the_request_is_shown() -> None:
    request = question("2026-11-25T10:05:00Z")

    assert await shown_prompt(request, TEN) == "? Which channel? - answer within 5 min (by 10:05:00 UTC)"
    assert await shown_prompt(request, TEN + 240) == "? Which channel? - answer within 1 min (by 10:05:00 UTC)"


async def test_a_request_without_a_deadline_shows_only_its_prompt() -> None:
    assert await shown_prompt(approval(), TEN) == "? Approve tool call: publish"


def test_an_answer_from_someone_else_shows_who_gave_it(capsys: pytest.CaptureFixture[str]) -> None:
    render = Renderer(now=lambda: TEN)
    render(asked(approval(), question()))

    edited = InputResponse(request_id="call-1", option_id="approve", edited_input={"version": "1.4.1"})
    picked = InputResponse(request_id="call-2", option_id="beta")
    render(
        new_event(
            InputResolvedData(
                **STEP,
                resolutions=[
                    InputResolution(kind="tool-approval", outcome="approved", request_id="call-1", answered_by="alice"),
                    InputResolution(
                        kind="question", outcome="answered", request_id="call-2", response=picked, answered_by="bob"
                    ),
                ],
            )
        )
    )
    render(
        new_event(
            InputResolvedData(
                **STEP,
                resolutions=[
                    InputResolution(
                        kind="tool-approval",
                        outcome="approved",
                        request_id="call-1",
                        response=edited,
                        answered_by="carol",
                    ),
                    InputResolution(
                        kind="tool-approval",
                        outcome="denied",
                        request_id="call-1",
                        response=InputResponse(request_id="call-1", option_id="deny", text="not on a Friday"),
                        answered_by="link",
                    ),
                ],
            )
        )
    )

    assert capsys.readouterr().out.splitlines() == [
        "  ? Approve tool call: publish - approved by alice",
        "  ? Which channel? - answered by bob: Beta",
        "  ? Approve tool call: publish - approved by carol with changes: version: 1.4.1",
        "  ? Approve tool call: publish - denied by link: not on a Friday",
    ]


def test_an_answer_given_at_this_terminal_or_by_nobody_in_particular_is_not_announced(
    capsys: pytest.CaptureFixture[str],
) -> None:
    render = Renderer(now=lambda: TEN)
    render(asked(approval(), question()))

    render(
        new_event(
            InputResolvedData(
                **STEP,
                resolutions=[
                    InputResolution(kind="tool-approval", outcome="approved", request_id="call-1", answered_by="local"),
                    InputResolution(kind="question", outcome="ignored", request_id="call-2"),
                ],
            )
        )
    )

    assert capsys.readouterr().out == ""


def test_an_expired_request_says_nobody_answered_by_its_deadline(capsys: pytest.CaptureFixture[str]) -> None:
    render = Renderer(now=lambda: TEN + 301)
    render(asked(approval("2026-11-25T10:05:00.000Z")))
    render.remember([question("2026-11-24T23:00:00Z")])  # parked before this process started

    render(
        new_event(
            InputResolvedData(
                **STEP,
                resolutions=[
                    InputResolution(kind="tool-approval", outcome="expired", request_id="call-1"),
                    InputResolution(kind="question", outcome="expired", request_id="call-2"),
                    InputResolution(kind="question", outcome="expired", request_id="call-unknown"),
                ],
            )
        )
    )

    assert capsys.readouterr().out.splitlines() == [
        "  ? Approve tool call: publish - expired: nobody answered by 10:05:00 UTC",
        "  ? Which channel? - expired: nobody answered by 2026-11-24 23:00:00 UTC",
        "  ? call-unknown - expired: nobody answered in time",
    ]


def test_catching_up_shows_only_the_events_not_shown_yet(capsys: pytest.CaptureFixture[str]) -> None:
    render = Renderer(now=lambda: TEN)
    batch = asked(approval())
    first = new_event(
        InputResolvedData(
            **STEP,
            resolutions=[
                InputResolution(kind="tool-approval", outcome="approved", request_id="call-1", answered_by="alice")
            ],
        )
    )
    render(batch)
    render(first)
    later = new_event(
        InputResolvedData(
            **STEP,
            resolutions=[
                InputResolution(kind="tool-approval", outcome="denied", request_id="call-1", answered_by="bob")
            ],
        )
    )

    render.catch_up([batch, first, later])

    assert capsys.readouterr().out.splitlines() == [
        "  ? Approve tool call: publish - approved by alice",
        "  ? Approve tool call: publish - denied by bob",
    ]


def publish(version: str) -> dict[str, str]:
    """Publish a release."""
    return {"published": version}


def respond(request: MockModelRequest) -> str | MockResponse:
    results = request.tool_results_since_last_user_message
    if not results:
        return MockResponse(tool_calls=[MockToolCall("publish", {"version": "1.4.0"})])
    return f"publish: {results[0].output}"


async def test_the_chat_shows_who_answered_when_another_client_answered_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    agent = Agent.from_definitions(
        {"publish": define_tool(description="Publish a release.", execute=publish, needs_approval=True)}
    )
    store = MemorySessionStore()
    render = Renderer()

    async def listen(committed: Committed) -> None:
        for event in committed.events:
            render(event)

    here = Runtime(agent, model=MockModel(respond), store=store, on_event=listen)
    elsewhere = Runtime(agent, model=MockModel(respond), store=store)  # e.g. `eve-py serve` on the same store
    session = await here.create_session()
    result = await session.send("publish 1.4.0")
    [request] = result.input_requests

    typed = ["n", ""]

    async def ask(prompt: str) -> str:
        if prompt.startswith("  Let publish run?"):  # alice approves while the person is still deciding
            other = await elsewhere.get_session(session.id)
            await other.respond([InputResponse(request_id=request.request_id, option_id="approve")], by="alice")
        if not typed:
            raise EOFError
        return typed.pop(0)

    with pytest.raises(EOFError):
        await _converse(session, result, ask, render)

    out = capsys.readouterr().out
    assert "  ? Approve tool call: publish - approved by alice" in out
    assert "agent > publish: {'published': '1.4.0'}" in out
    assert out.index("approved by alice") < out.index("(the session no longer waits for these answers)")
    await here.aclose()
    await elsewhere.aclose()


async def test_an_answer_after_the_deadline_shows_the_request_expired_once_and_the_turn_going_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    expiring = define_tool(
        description="Publish a release.", execute=publish, needs_approval=True, expires_after=0.000001
    )
    render = Renderer()

    async def listen(committed: Committed) -> None:
        for event in committed.events:
            render(event)

    runtime = Runtime(Agent.from_definitions({"publish": expiring}), model=MockModel(respond), on_event=listen)
    session = await runtime.create_session()
    result = await session.send("publish 1.4.0")  # its deadline has passed by the time it is shown
    typed = ["y"]

    async def ask(prompt: str) -> str:
        if not typed:
            raise EOFError
        return typed.pop(0)

    with pytest.raises(EOFError):
        await _converse(session, result, ask, render)

    out = capsys.readouterr().out
    assert "? Approve tool call: publish - the time to answer ran out at " in out
    assert out.count("  ? Approve tool call: publish - expired: nobody answered by ") == 1
    assert "agent > publish: INPUT_EXPIRED" in out
    assert out.index("expired: nobody answered") < out.index("(the session no longer waits for these answers)")
    await runtime.aclose()
