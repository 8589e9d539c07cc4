"""Tool outputs and model responses that are not JSON text fail the call or the turn cleanly.

A lone UTF-16 surrogate (a file name read with `surrogateescape`, a provider's broken escape)
cannot be stored, and NaN or Infinity would be stored as null. Before, such a value reached the
store mid-turn: the SQLite commit raised a non-eve-py error and left the session `running`
under a live lease. Now a tool's output becomes the call's error result (the model sees why),
as do a tool call's arguments, like any other invalid argument text; a model response's text
fails the turn (`MODEL_ERROR`); the session stays usable.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from eve_py import Agent, InputResponse, Runtime, check_pairing, define_tool
from eve_py._json import JsonObject
from eve_py.protocol import TurnFailed
from eve_py.protocol.messages import ToolMessage
from eve_py.sessions import MemorySessionStore, SessionStore, SQLiteSessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall, Responder

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    made: SessionStore = MemorySessionStore() if request.param == "memory" else SQLiteSessionStore(tmp_path / "s.db")
    yield made
    await made.aclose()


def listing(name: object, needs_approval: bool = False) -> Agent:
    def ls() -> dict[str, object]:
        """List the folder."""
        return {"files": [name], "ratio": 0.5}

    return Agent.from_definitions({"ls": define_tool(description="List.", execute=ls, needs_approval=needs_approval)})


def call_ls(request: MockModelRequest) -> str | MockResponse:
    if not request.tool_results:
        return MockResponse(tool_calls=[MockToolCall("ls", {})])
    return f"saw an error: {request.tool_results[-1].is_error}"


@pytest.mark.parametrize("name", ["caf\udce9.txt", float("nan"), float("inf")], ids=["surrogate", "nan", "inf"])
@pytest.mark.parametrize("needs_approval", [False, True], ids=["runs-at-once", "approved"])
async def test_a_tool_output_that_is_not_json_becomes_the_call_s_error_result(
    store: SessionStore, name: object, needs_approval: bool
) -> None:
    session = await Runtime(listing(name, needs_approval), model=MockModel(call_ls), store=store).create_session()

    result = await session.send("list the folder")
    if needs_approval:
        [request] = result.input_requests
        result = await session.respond([InputResponse(request_id=request.request_id, option_id="approve")])

    assert result.status == "completed" and result.message == "saw an error: True"
    [output] = [p.output for m in await session.messages() if isinstance(m, ToolMessage) for p in m.content]
    assert isinstance(output, str) and "is not JSON" in output
    assert session.status == "idle" and session.record.lease is None
    check_pairing(await session.messages())


MODEL_REPLIES: dict[str, Responder] = {
    "text": lambda request: "hello \ud800",
    "call id": lambda request: MockResponse(tool_calls=[MockToolCall("ls", {}, id="call\ud800")]),
}


@pytest.mark.parametrize("reply", sorted(MODEL_REPLIES))
async def test_a_model_response_that_is_not_json_fails_the_turn_and_the_session_goes_on(
    store: SessionStore, reply: str
) -> None:
    replies: list[Responder] = [MODEL_REPLIES[reply], lambda request: "fine now"]
    model = MockModel(lambda request: replies[len(request.user_messages) - 1](request))
    session = await Runtime(listing("a.txt"), model=model, store=store).create_session()

    failed = await session.send("go")

    assert failed.status == "failed" and failed.error is not None and "not JSON text" in failed.error
    [event] = [e for e in await session.events() if isinstance(e, TurnFailed)]
    assert event.data.code == "MODEL_ERROR"
    assert session.status == "idle" and session.record.lease is None
    assert (await session.send("again")).message == "fine now"
    check_pairing(await session.messages())


BAD_INPUTS: dict[str, JsonObject] = {
    "NaN": {"depth": float("nan")},
    "Infinity": {"depth": float("inf")},
    "-Infinity": {"limits": [1, -float("inf")]},
    "lone surrogate": {"path": "\udfff"},
}


@pytest.mark.parametrize("bad", sorted(BAD_INPUTS))
async def test_a_tool_call_whose_arguments_are_not_json_gets_an_error_result_and_the_turn_goes_on(
    store: SessionStore, bad: str
) -> None:
    ran: list[str] = []

    def ls(path: str = ".", depth: float = 1, limits: list[float] | None = None) -> str:
        ran.append(path)
        return f"listed {path}"

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("ls", BAD_INPUTS[bad]), MockToolCall("ls", {"path": "b"})])
        return " | ".join(f"{r.is_error}: {r.output}" for r in request.tool_results)

    agent = Agent.from_definitions({"ls": define_tool(description="List.", execute=ls)})
    session = await Runtime(agent, model=MockModel(respond), store=store).create_session()

    done = await session.send("list")

    assert done.status == "completed", done.error
    refused, listed = (done.message or "").split(" | ")
    assert refused.startswith("True: The arguments for tool 'ls' are not a valid JSON object (")
    assert ("lone UTF-16 surrogate" if bad == "lone surrogate" else f"{bad} at ") in refused
    assert refused.endswith("Call it again with valid JSON arguments.")
    assert listed == "False: listed b", "the other call of the step ran"
    assert ran == ["b"]
    assert session.status == "idle" and session.record.lease is None
    check_pairing(await session.messages())


@pytest.mark.parametrize("answer", ['{"ratio": NaN}', '{"ratio": Infinity}', '{"ratio": -Infinity}'])
async def test_a_structured_result_holding_nan_or_infinity_fails_the_turn_and_stores_nothing(
    store: SessionStore, answer: str
) -> None:
    runtime = Runtime(Agent.from_definitions({}), model=MockModel(lambda request: answer), store=store)
    session = await runtime.create_session()
    done = await session.send("the ratio as json", output_schema={"type": "object"})
    assert done.status == "failed" and done.result is None
    assert done.error is not None and "is not JSON" in done.error and "not a JSON number" in done.error
    again = await session.send("hello")  # the session goes on
    assert again.status == "completed"
