"""Answers are checked against their schema's formats: `date`, `date-time`, `email`, `uri`, ...

A client tool whose output schema says `format: date` (a pydantic `datetime.date`) must not
accept "2025-13-45". A rejected answer names the field and the format, and the session stays
parked exactly as it was.
"""

from __future__ import annotations

import copy
import datetime
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import AnyUrl, BaseModel, Field

from eve_py import Agent, InvalidAnswerError, Runtime, Session, define_client_tool
from eve_py.cli._main import main
from eve_py.parking._answers import schema_validator
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio


class Booking(BaseModel):
    day: datetime.date = Field(description="The day of the visit.")
    starts_at: datetime.datetime
    contact: str = Field(json_schema_extra={"format": "email"})
    link: AnyUrl


GOOD: dict[str, Any] = {
    "day": "2025-05-01",
    "starts_at": "2025-05-01T10:00:00+02:00",
    "contact": "ada@example.com",
    "link": "https://example.com/visits/1",
}


def respond(request: MockModelRequest) -> str | MockResponse:
    if not request.tool_results:
        return MockResponse(tool_calls=[MockToolCall("book", {"prompt": "When should we visit?"})])
    return f"Booked: {json.dumps(request.tool_results[0].output, sort_keys=True)}"


async def parked_booking() -> Session:
    book = define_client_tool(
        description="Ask the person when to visit.",
        input_schema={"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
        output_schema=Booking,
    )
    runtime = Runtime(Agent.from_definitions({"book": book}), model=MockModel(respond))
    session = await runtime.create_session()
    result = await session.send("book a visit")
    assert result.status == "waiting"
    return session


async def snapshot(session: Session) -> tuple[str, int]:
    await session.refresh()
    return session.record.model_dump_json(), len(await session.events())


@pytest.mark.parametrize(
    ("field", "bad", "message"),
    [
        ("day", "2025-13-45", "value fails the schema at day: '2025-13-45' is not a valid date (format \"date\""),
        ("day", "2025-02-30", "at day: '2025-02-30' is not a valid date"),
        ("day", "tomorrow", "at day: 'tomorrow' is not a valid date"),
        ("starts_at", "2025-05-01T10:00:00", "at starts_at: '2025-05-01T10:00:00' is not a valid date-time"),
        ("starts_at", "2025-05-01T25:00:00Z", "at starts_at: '2025-05-01T25:00:00Z' is not a valid date-time"),
        ("contact", "ada.example.com", "at contact: 'ada.example.com' is not a valid email"),
        ("link", "example.com/visits/1", "at link: 'example.com/visits/1' is not a valid uri"),
        ("link", "not a uri", "at link: 'not a uri' is not a valid uri"),
    ],
)
async def test_an_answer_breaking_a_format_is_rejected_and_the_session_stays_parked(
    field: str, bad: str, message: str
) -> None:
    session = await parked_booking()
    before = await snapshot(session)
    [request] = session.input_requests

    with pytest.raises(InvalidAnswerError) as caught:
        await session.respond([{"requestId": request.request_id, "value": {**GOOD, field: bad}}])

    assert message in str(caught.value)
    assert caught.value.request_id == request.request_id
    assert await snapshot(session) == before
    assert session.status == "waiting"

    done = await session.respond([{"requestId": request.request_id, "value": GOOD}])
    assert done.status == "completed"


async def test_the_format_error_says_what_a_valid_value_looks_like() -> None:
    session = await parked_booking()
    [request] = session.input_requests

    with pytest.raises(InvalidAnswerError) as caught:
        await session.respond([{"requestId": request.request_id, "value": {**GOOD, "day": "2025-13-45"}}])

    assert str(caught.value) == (
        f"Answer to request {request.request_id!r} rejected: value fails the schema at day: '2025-13-45' is not a "
        'valid date (format "date": YYYY-MM-DD, e.g. 2025-05-01)'
    )


async def test_an_answer_in_every_format_is_accepted_and_is_the_result() -> None:
    session = await parked_booking()
    [request] = session.input_requests

    done = await session.respond([{"requestId": request.request_id, "value": GOOD}])

    assert done.status == "completed"
    assert done.message == f"Booked: {json.dumps(GOOD, sort_keys=True)}"


async def test_text_holding_json_is_checked_against_the_formats_too() -> None:
    session = await parked_booking()
    [request] = session.input_requests

    with pytest.raises(InvalidAnswerError, match="is not a valid date"):
        await session.respond([{"requestId": request.request_id, "text": json.dumps({**GOOD, "day": "2025-13-45"})}])

    assert session.status == "waiting"


def test_validators_are_built_once_per_schema() -> None:
    schema = Booking.model_json_schema()

    assert schema_validator(schema) is schema_validator(copy.deepcopy(schema))
    assert schema_validator(schema) is not schema_validator({"type": "object"})


# --- eve-py run --answers ----------------------------------------------------------------------------

BOOK_TOOL = """
import datetime

from pydantic import BaseModel

from eve_py import define_client_tool


class Ask(BaseModel):
    prompt: str


class Visit(BaseModel):
    day: datetime.date


tool = define_client_tool(description="Ask the person which day to visit.", input_schema=Ask, output_schema=Visit)
"""

BOOK_MOCK = """
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall


def respond(request: MockModelRequest) -> str | MockResponse:
    if not request.tool_results:
        return MockResponse(tool_calls=[MockToolCall("book", {"prompt": "Which day?"})])
    return f"Booked for {request.tool_results[0].output}"


model = MockModel(respond)
"""


@pytest.fixture
def booking_app(tmp_path: Path) -> Path:
    app = tmp_path / "booking"
    for relative, source in (("agent/tools/book.py", BOOK_TOOL), ("agent/mock_model.py", BOOK_MOCK)):
        path = app / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return app


def test_run_with_an_answer_breaking_a_format_exits_2_and_names_the_field(
    booking_app: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([{"value": {"day": "2025-13-45"}}]), encoding="utf-8")
    store = tmp_path / "sessions.db"

    code = main(
        ["run", str(booking_app), "book a visit", "--model", "mock", "--store", str(store), "--answers", str(answers)]
    )

    assert code == 2
    captured = capsys.readouterr()
    assert "value fails the schema at day: '2025-13-45' is not a valid date" in captured.err
    session_id = captured.out.split()[1]
    answers.write_text(json.dumps([{"value": {"day": "2025-05-01"}}]), encoding="utf-8")
    code = main(
        [
            "run",
            str(booking_app),
            "--session",
            session_id,
            "--model",
            "mock",
            "--store",
            str(store),
            "--answers",
            str(answers),
        ]
    )
    assert code == 0
    assert "Booked for {'day': '2025-05-01'}" in capsys.readouterr().out
