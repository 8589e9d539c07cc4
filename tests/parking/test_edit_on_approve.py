"""Edit on approve: a person approving a call of an `editable=True` tool may change its input.

The executor runs with the edited input, the model's tool result says so and shows what ran,
the call in the history keeps the model's input, and `input.resolved` carries the edit. A bad
edit, an edit to a tool that is not editable, or one setting a resolver-filled parameter is
refused before anything is written, and the call stays parked.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from eve_py import (
    Agent,
    EditNotAllowedError,
    Elicit,
    InputResponse,
    InvalidAnswerError,
    Resolve,
    Runtime,
    Session,
    ToolDefinitionError,
    define_tool,
)
from eve_py._json import JsonValue
from eve_py.parking._results import EDITED_NOTE
from eve_py.protocol.content import ImageContent, TextContent, content_from_json
from eve_py.protocol.events import InputRequested, InputResolved
from eve_py.protocol.messages import AssistantMessage, ToolMessage
from eve_py.sessions import SessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio


class Warehouse(BaseModel):
    name: str


SHIPPED: list[dict[str, Any]] = []
"""What `ship` ran with (its resolver's annotations must be module-level to be resolved)."""


def ask_warehouse(sku: str) -> Elicit[Warehouse]:
    return Elicit(f"Which warehouse ships {sku}?", Warehouse)


def ship(sku: str, quantity: int, warehouse: Annotated[Warehouse, Resolve(ask_warehouse)]) -> str:
    SHIPPED.append({"sku": sku, "quantity": quantity, "warehouse": warehouse.name})
    return f"shipped {quantity} x {sku} from {warehouse.name}"


MODEL_INPUT: dict[str, JsonValue] = {"to": "team@example.com", "amount_cents": 1500}


def refund_agent(ran: list[dict[str, Any]], *, editable: bool = True) -> tuple[Agent, MockModel]:
    """`refund` (approval; editable unless told) and `note` (no approval); the model refunds, then reports."""

    def refund(to: Annotated[str, "who"], amount_cents: int) -> dict[str, Any]:
        ran.append({"to": to, "amount_cents": amount_cents})
        return {"refunded": amount_cents, "to": to}

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("refund", MODEL_INPUT)])
        return f"result: {request.tool_results[-1].output}"

    refund_tool = define_tool(description="Refund.", execute=refund, needs_approval=True, editable=editable)
    refund_tool.input_schema["properties"]["to"]["format"] = "email"
    return Agent.from_definitions({"refund": refund_tool}), MockModel(respond)


async def parked(store: SessionStore, ran: list[dict[str, Any]], *, editable: bool = True) -> tuple[Session, str]:
    agent, model = refund_agent(ran, editable=editable)
    session = await Runtime(agent, model=model, store=store).create_session()
    result = await session.send("refund it")
    assert result.status == "waiting"
    [request] = result.input_requests
    return session, request.request_id


async def snapshot(session: Session) -> tuple[str, int]:
    await session.refresh()
    return session.record.model_dump_json(), len(await session.events())


async def test_an_edited_approval_runs_the_tool_with_the_edit_and_tells_the_model(store: SessionStore) -> None:
    ran: list[dict[str, Any]] = []
    session, request_id = await parked(store, ran)
    [request] = session.input_requests
    assert request.edit_schema is not None and set(request.edit_schema["properties"]) == {"to", "amount_cents"}

    # A restart between the park and the answer: a new runtime on the same store answers.
    agent, model = refund_agent(ran)
    restarted = await Runtime(agent, model=model, store=store).get_session(session.id)
    edit = {"to": "ada@example.com", "amount_cents": 900}
    result = await restarted.respond([InputResponse(request_id=request_id, option_id="approve", edited_input=edit)])

    assert result.status == "completed"
    assert ran == [edit]
    messages = await restarted.messages()
    [call] = [m for m in messages if isinstance(m, AssistantMessage) and m.tool_calls][0].tool_calls
    assert call.input == MODEL_INPUT, "the model's call stays in the history as it was made"
    [told] = [m for m in messages if isinstance(m, ToolMessage)][0].content
    assert told.output == {"note": EDITED_NOTE, "ranWith": edit, "output": {"refunded": 900, "to": "ada@example.com"}}
    assert not told.is_error
    resolved = [e for e in await restarted.events() if isinstance(e, InputResolved)]
    [resolution] = resolved[0].data.resolutions
    assert resolution.outcome == "approved"
    assert resolution.response is not None and resolution.response.edited_input == edit


async def test_an_approval_without_an_edit_runs_the_models_input_untouched(store: SessionStore) -> None:
    ran: list[dict[str, Any]] = []
    session, request_id = await parked(store, ran)

    result = await session.respond([{"requestId": request_id, "optionId": "approve"}])

    assert result.status == "completed" and ran == [MODEL_INPUT]
    assert result.message == "result: {'refunded': 1500, 'to': 'team@example.com'}"


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (
            {"optionId": "approve", "editedInput": {"to": "not an address", "amount_cents": 900}},
            "editedInput fails the tool's input schema at to: 'not an address' is not a valid email",
        ),
        (
            {"optionId": "approve", "editedInput": {"to": "ada@example.com", "amount_cents": "nine"}},
            "editedInput fails the tool's input schema at amount_cents: 'nine' is not of type 'integer'",
        ),
        (
            {"optionId": "approve", "editedInput": {"to": "ada@example.com"}},
            "editedInput fails the tool's input schema at (root): 'amount_cents' is a required property",
        ),
        (
            {"optionId": "approve", "editedInput": {**MODEL_INPUT, "ledger": "secret"}},
            "editedInput sets 'ledger', which the model does not set",
        ),
        (
            {"optionId": "deny", "editedInput": MODEL_INPUT},
            "editedInput goes with optionId 'approve'; a denial runs nothing",
        ),
    ],
    ids=["format", "type", "missing", "unknown-key", "with-deny"],
)
async def test_a_bad_edit_is_refused_and_nothing_changes(
    store: SessionStore, answer: dict[str, Any], problem: str
) -> None:
    ran: list[dict[str, Any]] = []
    session, request_id = await parked(store, ran)
    before = await snapshot(session)

    with pytest.raises(InvalidAnswerError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        await session.respond([{"requestId": request_id, **answer}])

    assert await snapshot(session) == before and ran == []
    done = await session.respond([{"requestId": request_id, "optionId": "approve", "editedInput": MODEL_INPUT}])
    assert done.status == "completed" and ran == [MODEL_INPUT]


async def test_an_edit_to_a_tool_that_is_not_editable_is_refused(store: SessionStore) -> None:
    ran: list[dict[str, Any]] = []
    session, request_id = await parked(store, ran, editable=False)
    assert session.input_requests[0].edit_schema is None
    before = await snapshot(session)

    with pytest.raises(EditNotAllowedError, match="the tool 'refund' is not editable"):
        await session.respond([{"requestId": request_id, "optionId": "approve", "editedInput": MODEL_INPUT}])

    assert await snapshot(session) == before and ran == []


async def test_the_edit_rides_in_input_requested_as_an_extension_only_for_editable_tools(store: SessionStore) -> None:
    for editable in (True, False):
        session, _ = await parked(store, [], editable=editable)
        [requested] = [e for e in await session.events() if isinstance(e, InputRequested)]
        extensions = requested.data.extensions or {}
        if editable:
            [extension] = extensions.values()
            assert extension.edit_schema is not None and extension.edit_schema["required"] == ["to", "amount_cents"]
        else:
            assert extensions == {}


def test_editable_without_approval_is_a_definition_error() -> None:
    def act(x: int) -> int:
        return x

    with pytest.raises(ToolDefinitionError, match="editable=True .* needs needs_approval"):
        define_tool(description="Act.", execute=act, editable=True)


async def test_a_resolver_filled_parameter_cannot_be_edited_and_the_edit_survives_its_question(
    store: SessionStore,
) -> None:
    ran = SHIPPED
    ran.clear()

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("ship", {"sku": "MUG", "quantity": 1})])
        return "done"

    tool = define_tool(description="Ship.", execute=ship, needs_approval=True, editable=True)
    session = await Runtime(
        Agent.from_definitions({"ship": tool}), model=MockModel(respond), store=store
    ).create_session()
    [approval] = (await session.send("ship it")).input_requests

    with pytest.raises(InvalidAnswerError, match="'warehouse', which the model does not set"):
        await session.respond(
            [
                {
                    "requestId": approval.request_id,
                    "optionId": "approve",
                    "editedInput": {"sku": "LAMP", "quantity": 2, "warehouse": "X"},
                }
            ]
        )
    asked = await session.respond(
        [{"requestId": approval.request_id, "optionId": "approve", "editedInput": {"sku": "LAMP", "quantity": 2}}]
    )
    [question] = asked.input_requests
    assert question.kind == "elicitation" and question.prompt == "Which warehouse ships LAMP?"

    done = await session.respond([{"requestId": question.request_id, "value": {"name": "Leeds"}}])

    assert done.status == "completed"
    assert ran == [{"sku": "LAMP", "quantity": 2, "warehouse": "Leeds"}]


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="


def plot(title: str) -> list[TextContent | ImageContent]:
    return [TextContent(text=f"chart: {title}"), ImageContent(data=PNG, mime_type="image/png")]


async def test_an_edited_call_that_returns_an_image_still_gives_the_model_content(store: SessionStore) -> None:
    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall("plot", {"title": "rain"})])
        return "plotted"

    tool = define_tool(description="Plot.", execute=plot, needs_approval=True, editable=True)
    runtime = Runtime(Agent.from_definitions({"plot": tool}), model=MockModel(respond), store=store)
    session = await runtime.create_session()
    [request] = (await session.send("plot the rain")).input_requests
    edit = {"title": "snow"}
    await session.respond([InputResponse(request_id=request.request_id, option_id="approve", edited_input=edit)])

    [told] = [m for m in await session.messages() if isinstance(m, ToolMessage)][0].content
    blocks = content_from_json(told.output)
    assert blocks is not None, told.output  # still text and an image, not JSON holding base64
    note, text, image = blocks
    assert isinstance(note, TextContent) and json.loads(note.text) == {"note": EDITED_NOTE, "ranWith": edit}
    assert isinstance(text, TextContent) and text.text == "chart: snow"
    assert isinstance(image, ImageContent) and image.data == PNG
