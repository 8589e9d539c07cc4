"""define_tool, define_client_tool, disable_tool and ToolDefinition, as an app author uses them."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import pytest
from pydantic import BaseModel

from eve_py import (
    Agent,
    ApprovalContext,
    DisabledTool,
    InputResponse,
    Runtime,
    ToolContext,
    ToolDefinition,
    ToolDefinitionError,
    define_client_tool,
    define_tool,
    disable_tool,
)
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Address(BaseModel):
    street: str
    city: str


class Order(BaseModel):
    order_id: str
    quantity: int = 1
    ship_to: Address | None = None


class Picked(BaseModel):
    picked_ids: list[str]


class Question(BaseModel):
    prompt: str
    options: list[str] = []


def record_note(text: str, ctx: ToolContext, priority: int = 0, tags: list[str] | None = None) -> dict[str, Any]:
    """Record a note."""
    return {"text": text, "priority": priority, "tags": tags, "callId": ctx.call_id}


def call_tool_once(tool_name: str, tool_input: dict[str, Any]) -> MockModel:
    """A mock model that calls `tool_name` once with `tool_input`, then says "done"."""

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall(tool_name, tool_input)])
        return "done"

    return MockModel(respond)


async def run_one_call(tool: ToolDefinition, tool_input: dict[str, Any]) -> tuple[Any, bool]:
    """Run a one-step turn calling `tool` and return the (output, is_error) the model got back."""
    model = call_tool_once("subject", tool_input)
    runtime = Runtime(Agent.from_definitions({"subject": tool}), model=model)
    session = await runtime.create_session()
    result = await session.send("go")
    assert result.status == "completed", result
    [tool_result] = model.requests[-1].tool_results
    return tool_result.output, tool_result.is_error


# --- define_tool: the input schema comes from the executor's signature -------------------------


def test_define_tool_derives_the_input_schema_from_the_executor_parameters() -> None:
    tool = define_tool(description="Record a note.", execute=record_note)

    schema = tool.input_schema
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"text", "priority", "tags"}
    assert schema["properties"]["text"]["type"] == "string"
    assert schema["properties"]["priority"]["type"] == "integer"


def test_define_tool_leaves_the_tool_context_parameter_out_of_the_input_schema() -> None:
    tool = define_tool(description="Record a note.", execute=record_note)

    assert "ctx" not in tool.input_schema["properties"]
    assert "ctx" not in tool.input_schema.get("required", [])


def test_parameters_with_defaults_are_optional_and_the_others_required() -> None:
    tool = define_tool(description="Record a note.", execute=record_note)

    assert tool.input_schema["required"] == ["text"]


def test_a_pydantic_model_parameter_becomes_a_nested_object_in_the_input_schema() -> None:
    def place(order: Order) -> str:
        return order.order_id

    tool = define_tool(description="Place an order.", execute=place)

    schema = tool.input_schema
    assert schema["required"] == ["order"]
    definitions = schema["$defs"]
    assert set(definitions["Order"]["properties"]) == {"order_id", "quantity", "ship_to"}
    assert definitions["Order"]["required"] == ["order_id"]
    assert "Address" in definitions


def test_define_tool_returns_a_server_tool_definition() -> None:
    tool = define_tool(description="Record a note.", execute=record_note)

    assert isinstance(tool, ToolDefinition)
    assert tool.execute is record_note
    assert tool.client_resolved is False
    assert tool.needs_approval is False
    assert tool.description == "Record a note."


def test_define_tool_takes_an_output_schema_as_a_pydantic_model_or_json_schema() -> None:
    from_model = define_tool(description="Pick.", execute=record_note, output_schema=Picked)
    from_json = define_tool(
        description="Pick.", execute=record_note, output_schema={"type": "object", "required": ["ok"]}
    )

    assert from_model.output_schema is not None
    assert from_model.output_schema["properties"]["picked_ids"]["type"] == "array"
    assert from_json.output_schema == {"type": "object", "required": ["ok"]}


@pytest.mark.anyio
async def test_a_sync_executor_runs_with_the_model_input_and_the_tool_context() -> None:
    tool = define_tool(description="Record a note.", execute=record_note)

    output, is_error = await run_one_call(tool, {"text": "hello", "priority": 3})

    assert is_error is False
    assert output == {"text": "hello", "priority": 3, "tags": None, "callId": "mock-call-0-0"}


@pytest.mark.anyio
async def test_an_async_executor_runs_and_its_awaited_result_is_the_tool_result() -> None:
    async def lookup(order: Order, ctx: ToolContext) -> dict[str, Any]:
        city = order.ship_to.city if order.ship_to else None
        return {"order": order.order_id, "quantity": order.quantity, "city": city, "tool": ctx.tool_name}

    tool = define_tool(description="Look up an order.", execute=lookup)

    output, is_error = await run_one_call(
        tool, {"order": {"order_id": "A-1", "ship_to": {"street": "Main St 1", "city": "Oslo"}}}
    )

    assert is_error is False
    assert output == {"order": "A-1", "quantity": 1, "city": "Oslo", "tool": "subject"}


@pytest.mark.anyio
async def test_input_that_does_not_fit_the_executor_parameters_gives_the_model_an_error_result() -> None:
    ran: list[str] = []

    def strict(count: int) -> int:
        ran.append("ran")
        return count

    tool = define_tool(description="Count.", execute=strict)

    _, is_error = await run_one_call(tool, {"count": "not a number"})

    assert is_error is True
    assert ran == []


def prefixed(text: str, prefix: str) -> str:
    return prefix + text


class Shouter:
    def __call__(self, text: str) -> str:
        return text.upper()


@pytest.mark.anyio
async def test_a_functools_partial_executor_is_accepted_and_runs() -> None:
    tool = define_tool(description="Prefix a text.", execute=functools.partial(prefixed, prefix="> "))

    assert "text" in tool.input_schema["required"]
    assert await run_one_call(tool, {"text": "hi"}) == ("> hi", False)


@pytest.mark.anyio
async def test_a_callable_object_executor_is_accepted_and_runs() -> None:
    tool = define_tool(description="Shout a text.", execute=Shouter())

    assert tool.input_schema["required"] == ["text"]
    assert await run_one_call(tool, {"text": "hi"}) == ("HI", False)


# --- define_tool: shapes it refuses ---------------------------------------------------------------


def test_define_tool_without_execute_raises_tool_definition_error() -> None:
    with pytest.raises(ToolDefinitionError, match="execute"):
        define_tool(description="No executor.")


def test_define_tool_with_a_non_callable_execute_raises_tool_definition_error() -> None:
    with pytest.raises(ToolDefinitionError, match="execute must be callable"):
        define_tool(description="Bad executor.", execute="not a function")  # type: ignore[arg-type]


def test_define_tool_names_the_parameter_that_has_no_annotation() -> None:
    def untyped(text: str, amount) -> None:  # type: ignore[no-untyped-def]
        return None

    with pytest.raises(ToolDefinitionError, match="'amount'") as caught:
        define_tool(description="Untyped.", execute=untyped)
    assert "no annotation" in str(caught.value)


def test_define_tool_names_a_variadic_positional_parameter() -> None:
    def variadic(text: str, *rest: str) -> None:
        return None

    with pytest.raises(ToolDefinitionError, match="'rest'") as caught:
        define_tool(description="Variadic.", execute=variadic)
    assert "variadic" in str(caught.value)


def test_define_tool_names_a_variadic_keyword_parameter() -> None:
    def keywords(text: str, **extra: str) -> None:
        return None

    with pytest.raises(ToolDefinitionError, match="'extra'"):
        define_tool(description="Keywords.", execute=keywords)


def test_define_tool_requires_a_non_empty_description() -> None:
    with pytest.raises(ToolDefinitionError, match="description"):
        define_tool(description="  ", execute=record_note)


def test_define_tool_rejects_an_invalid_output_schema() -> None:
    with pytest.raises(ToolDefinitionError, match="output_schema is not a valid JSON Schema"):
        define_tool(description="Bad schema.", execute=record_note, output_schema={"type": "no-such-type"})


# --- needs_approval -------------------------------------------------------------------------------


def test_needs_approval_accepts_a_bool_or_a_callable_and_rejects_anything_else() -> None:
    def policy(ctx: ApprovalContext) -> bool:
        return True

    assert define_tool(description="x", execute=record_note, needs_approval=True).needs_approval is True
    assert define_tool(description="x", execute=record_note, needs_approval=policy).needs_approval is policy
    with pytest.raises(ToolDefinitionError, match=r"approval must be never\(\), always\(\), once\(\)"):
        define_tool(description="x", execute=record_note, needs_approval="yes")  # type: ignore[arg-type]


def echo(text: str) -> dict[str, str]:
    return {"echo": text}


async def approval_asked_for(tool: ToolDefinition, text: str) -> bool:
    """Whether a call of `tool` with `text` parks for approval (else it ran at once)."""
    runtime = Runtime(Agent.from_definitions({"subject": tool}), model=call_tool_once("subject", {"text": text}))
    session = await runtime.create_session()
    result = await session.send("go")
    if result.status == "waiting":
        [request] = result.input_requests
        assert request.kind == "tool-approval"
        assert request.action.input == {"text": text}
        return True
    assert result.status == "completed"
    return False


@pytest.mark.anyio
async def test_needs_approval_true_parks_every_call_and_false_runs_it_at_once() -> None:
    assert await approval_asked_for(define_tool(description="Echo.", execute=echo, needs_approval=True), "hi")
    assert not await approval_asked_for(define_tool(description="Echo.", execute=echo, needs_approval=False), "hi")


@pytest.mark.anyio
async def test_a_sync_approval_policy_decides_per_call_from_the_call_input() -> None:
    seen: list[ApprovalContext] = []

    def risky_only(ctx: ApprovalContext) -> bool:
        seen.append(ctx)
        return ctx.tool_input.get("text") == "delete everything"

    tool = define_tool(description="Echo.", execute=echo, needs_approval=risky_only)

    assert await approval_asked_for(tool, "delete everything")
    assert not await approval_asked_for(tool, "hello")
    assert [ctx.tool_name for ctx in seen] == ["subject", "subject"]


@pytest.mark.anyio
async def test_an_async_approval_policy_is_awaited() -> None:
    async def risky_only(ctx: ApprovalContext) -> bool:
        return ctx.tool_input.get("text") == "delete everything"

    tool = define_tool(description="Echo.", execute=echo, needs_approval=risky_only)

    assert await approval_asked_for(tool, "delete everything")
    assert not await approval_asked_for(tool, "hello")


@pytest.mark.anyio
async def test_an_approved_call_runs_its_executor_and_a_denied_one_gets_the_denial() -> None:
    ran: list[str] = []

    def guarded(text: str, ctx: ToolContext) -> dict[str, Any]:
        ran.append(text)
        return {"echo": text, "approved": ctx.approved}

    tool = define_tool(description="Guarded echo.", execute=guarded, needs_approval=True)
    for answer, expected in (("approve", {"echo": "hi", "approved": True}), ("deny", "Tool execution was denied.")):
        model = call_tool_once("subject", {"text": "hi"})
        session = await Runtime(Agent.from_definitions({"subject": tool}), model=model).create_session()
        parked = await session.send("go")
        [request] = parked.input_requests
        result = await session.respond([InputResponse(request_id=request.request_id, option_id=answer)])
        assert result.status == "completed"
        [tool_result] = model.requests[-1].tool_results
        assert tool_result.output == expected
    assert ran == ["hi"]


# --- define_client_tool ---------------------------------------------------------------------------


def test_define_client_tool_with_pydantic_models_is_client_resolved_without_executor() -> None:
    tool = define_client_tool(description="Ask a question.", input_schema=Question, output_schema=Picked)

    assert isinstance(tool, ToolDefinition)
    assert tool.client_resolved is True
    assert tool.execute is None
    assert tool.needs_approval is False
    assert tool.input_schema["type"] == "object"
    assert set(tool.input_schema["properties"]) == {"prompt", "options"}
    assert tool.output_schema is not None
    assert tool.output_schema["required"] == ["picked_ids"]


def test_define_client_tool_with_json_schemas_keeps_them_as_given() -> None:
    input_schema = {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}
    output_schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}

    tool = define_client_tool(description="Ask.", input_schema=input_schema, output_schema=output_schema)

    assert tool.client_resolved is True
    assert tool.execute is None
    assert tool.input_schema == input_schema
    assert tool.output_schema == output_schema


def test_define_client_tool_without_output_schema_has_none() -> None:
    tool = define_client_tool(description="Ask.", input_schema=Question)

    assert tool.output_schema is None


def test_define_client_tool_with_execute_raises_tool_definition_error() -> None:
    with pytest.raises(ToolDefinitionError, match='must not define "execute"'):
        define_client_tool(description="Ask.", input_schema=Question, execute=record_note)  # type: ignore[arg-type]


def test_define_client_tool_rejects_an_invalid_json_schema() -> None:
    with pytest.raises(ToolDefinitionError, match="input_schema is not a valid JSON Schema"):
        define_client_tool(description="Ask.", input_schema={"type": "object", "properties": {"a": {"type": 7}}})
    with pytest.raises(ToolDefinitionError, match="output_schema is not a valid JSON Schema"):
        define_client_tool(description="Ask.", input_schema=Question, output_schema={"required": "prompt"})


def test_define_client_tool_rejects_an_input_schema_that_is_not_an_object() -> None:
    with pytest.raises(ToolDefinitionError, match='"type": "object"'):
        define_client_tool(description="Ask.", input_schema={"type": "string"})


def test_define_client_tool_rejects_a_schema_that_is_neither_a_model_nor_a_dict() -> None:
    with pytest.raises(ToolDefinitionError, match="pydantic model class or a JSON Schema object"):
        define_client_tool(description="Ask.", input_schema="prompt: str")  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_a_call_to_a_client_tool_parks_and_the_answer_value_is_its_result() -> None:
    tool = define_client_tool(description="Pick.", input_schema=Question, output_schema=Picked)
    model = call_tool_once("subject", {"prompt": "Which?", "options": ["a", "b"]})
    session = await Runtime(Agent.from_definitions({"subject": tool}), model=model).create_session()

    parked = await session.send("go")
    assert parked.status == "waiting"
    [request] = parked.input_requests
    assert request.kind == "client-tool"
    assert request.prompt == "Which?"
    result = await session.respond([InputResponse(request_id=request.request_id, value={"picked_ids": ["b"]})])

    assert result.status == "completed"
    [tool_result] = model.requests[-1].tool_results
    assert tool_result.output == {"picked_ids": ["b"]}


# --- disable_tool and ToolDefinition --------------------------------------------------------------


def test_disable_tool_returns_the_disabled_marker() -> None:
    assert isinstance(disable_tool(), DisabledTool)


def test_disable_tool_removes_the_built_in_ask_question_from_an_agent() -> None:
    with_builtin = Agent.from_definitions({"note": define_tool(description="Note.", execute=record_note)})
    without = Agent.from_definitions({"ask_question": disable_tool()})

    assert "ask_question" in with_builtin.tools
    assert "ask_question" not in without.tools


def test_tool_definition_is_a_frozen_dataclass_with_the_public_fields() -> None:
    tool = define_tool(description="Record a note.", execute=record_note)

    assert dataclasses.is_dataclass(tool)
    names = {field.name for field in dataclasses.fields(tool)}
    assert {"description", "execute", "input_schema", "output_schema", "client_resolved", "needs_approval"} <= names
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.description = "changed"  # type: ignore[misc]


def test_replace_builds_a_new_definition_and_leaves_the_original_alone() -> None:
    tool = define_tool(description="Record a note.", execute=record_note)

    mixed = dataclasses.replace(tool, client_resolved=True)

    assert mixed.client_resolved is True
    assert mixed.execute is record_note
    assert tool.client_resolved is False
