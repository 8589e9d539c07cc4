"""NaN, Infinity and lone surrogates in answers and messages: a clear error, nothing written.

Python's `json` reads and writes NaN, and a lone UTF-16 surrogate decodes to a Python string,
but neither can be stored as standard JSON (NaN became `null`; a surrogate broke the SQLite
store mid-write). They are refused before anything is written, on every store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from eve_py import (
    Agent,
    InputResponse,
    InvalidAnswerError,
    InvalidMessageError,
    Runtime,
    Session,
    define_client_tool,
    define_tool,
)
from eve_py.sessions import MemorySessionStore, SessionStore, SQLiteSessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio


class Measure(BaseModel):
    prompt: str


class Length(BaseModel):
    cm: float


AGENT = Agent.from_definitions(
    {"measure": define_client_tool(description="Measure.", input_schema=Measure, output_schema=Length)}
)


def respond(request: MockModelRequest) -> str | MockResponse:
    if not request.tool_results:
        return MockResponse(tool_calls=[MockToolCall("measure", {"prompt": "How long?"})])
    return f"length: {request.tool_results[-1].output}"


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    made: SessionStore = MemorySessionStore() if request.param == "memory" else SQLiteSessionStore(tmp_path / "s.db")
    yield made
    await made.aclose()


async def snapshot(session: Session) -> tuple[str, int]:
    await session.refresh()
    return session.record.model_dump_json(), len(await session.events())


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"value": {"cm": float("nan")}}, "NaN at value/cm is not a JSON number"),
        ({"value": {"cm": float("inf")}}, "Infinity at value/cm is not a JSON number"),
        ({"value": {"cm": -float("inf")}}, "-Infinity at value/cm is not a JSON number"),
        ({"text": '{"cm": NaN}'}, "NaN is not a JSON number"),
        ({"text": '{"cm": Infinity}'}, "Infinity is not a JSON number"),
        ({"text": "[" * 100_000}, "nested too deeply"),
        ({"value": {"cm": 3, "note": "a\ud800b"}}, "lone UTF-16 surrogate"),
        ({"value": {"cm": 3, "\udfff": 1}}, "lone UTF-16 surrogate"),
        ({"text": '{"cm": 3, "note": "\\ud800"}'}, "lone UTF-16 surrogate"),
        ({"optionId": "x\ud800"}, "lone UTF-16 surrogate"),
    ],
)
async def test_an_answer_that_is_not_standard_json_is_refused_and_changes_nothing(
    store: SessionStore, answer: dict[str, Any], problem: str
) -> None:
    session = await Runtime(AGENT, model=MockModel(respond), store=store).create_session()
    [request] = (await session.send("measure it")).input_requests
    before = await snapshot(session)

    with pytest.raises(InvalidAnswerError) as caught:
        await session.respond([{"requestId": request.request_id, **answer}])

    assert problem in str(caught.value)
    assert caught.value.request_id == request.request_id
    assert await snapshot(session) == before
    done = await session.respond([InputResponse(request_id=request.request_id, value={"cm": 12.5})])
    assert done.message == "length: {'cm': 12.5}", "the session stayed parked and takes a good answer"


async def test_a_request_id_with_a_lone_surrogate_is_refused_with_a_printable_id(store: SessionStore) -> None:
    session = await Runtime(AGENT, model=MockModel(respond), store=store).create_session()
    await session.send("measure it")
    before = await snapshot(session)

    with pytest.raises(InvalidAnswerError) as caught:
        await session.respond([{"requestId": "call\ud800", "value": {"cm": 1}}])

    assert caught.value.request_id == "call\\ud800"
    str(caught.value).encode("utf-8")  # the message itself can be logged and sent
    assert await snapshot(session) == before


CIRCULAR: dict[str, Any] = {"page": "checkout"}
CIRCULAR["self"] = CIRCULAR  # a mapping that holds itself: refused with a message, never walked forever


@pytest.mark.parametrize(
    "turn_input",
    [
        {"message": "a\ud800b"},
        {"message": ["fine", "\udc00"]},
        {"message": "hi", "client_context": {"who": "\ud800"}},
        {"message": "hi", "client_context": ["ok", "x\udbff"]},
        {"message": "hi", "output_schema": {"type": "number", "maximum": float("inf")}},
        {"message": "hi", "client_context": CIRCULAR},
    ],
)
async def test_a_message_that_is_not_standard_json_is_refused_before_anything_is_written(
    store: SessionStore, turn_input: dict[str, Any]
) -> None:
    session = await Runtime(AGENT, model=MockModel(respond), store=store).create_session()
    before = await snapshot(session)

    with pytest.raises(InvalidMessageError, match="cannot be stored"):
        await session.send(**turn_input)

    assert await snapshot(session) == before
    assert session.status == "idle"
    assert (await session.send("measure it")).status == "waiting", "the session is still usable"


async def test_a_parked_turn_refuses_a_client_context_that_is_not_standard_json(store: SessionStore) -> None:
    session = await Runtime(AGENT, model=MockModel(respond), store=store).create_session()
    [request] = (await session.send("measure it")).input_requests
    before = await snapshot(session)

    with pytest.raises(InvalidMessageError):
        await session.respond([InputResponse(request_id=request.request_id, value={"cm": 1})], client_context="\ud800")

    assert await snapshot(session) == before


async def test_a_malformed_response_naming_a_lone_surrogate_gets_a_printable_error(store: SessionStore) -> None:
    session = await Runtime(AGENT, model=MockModel(respond), store=store).create_session()
    await session.send("measure it")
    before = await snapshot(session)

    with pytest.raises(InvalidAnswerError) as caught:
        await session.respond([{"requestId": "call\udc00", "\ud800": 1}])

    str(caught.value).encode("utf-8")
    caught.value.request_id.encode("utf-8")
    assert await snapshot(session) == before


async def test_free_text_and_a_reason_with_a_lone_surrogate_are_refused_before_the_executor_runs(
    store: SessionStore,
) -> None:
    shipped: list[str] = []

    def ship(order: str) -> str:
        shipped.append(order)
        return f"shipped {order}"

    def ask(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            note = MockToolCall("ask_question", {"prompt": "A note for the parcel?", "allowFreeform": True})
            return MockResponse(tool_calls=[MockToolCall("ship", {"order": "o-1"}), note])
        return " | ".join(str(result.output) for result in request.tool_results)

    agent = Agent.from_definitions({"ship": define_tool(description="Ship.", execute=ship, needs_approval=True)})
    session = await Runtime(agent, model=MockModel(ask), store=store).create_session()
    approval, question = (await session.send("ship it")).input_requests
    before = await snapshot(session)

    for bad in (
        InputResponse(request_id=question.request_id, text="fragile \ud800"),
        InputResponse(request_id=approval.request_id, option_id="approve", text="ok \udfff"),
    ):
        with pytest.raises(InvalidAnswerError, match="lone UTF-16 surrogate"):
            await session.respond([bad])

    assert await snapshot(session) == before and shipped == []
    done = await session.respond(
        [
            InputResponse(request_id=approval.request_id, option_id="approve"),
            InputResponse(request_id=question.request_id, text="fragile"),
        ]
    )
    assert done.message == "shipped o-1 | {'status': 'answered', 'text': 'fragile'}"
    assert shipped == ["o-1"]
