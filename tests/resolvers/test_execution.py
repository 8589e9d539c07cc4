"""Resolvers at run time: memoized, questions parked as elicitation requests, answers durable and pinned."""

import threading
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field, field_validator

from eve_py import (
    AcceptedElicitation,
    Agent,
    CancelledElicitation,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    InputResponse,
    InvalidAnswerError,
    Resolve,
    Runtime,
    Session,
    ToolContext,
    ToolDefinition,
    ToolError,
    TurnResult,
    check_pairing,
    define_tool,
)
from eve_py.protocol.messages import ToolMessage
from eve_py.sessions import SessionStore, SQLiteSessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio


class Login(BaseModel):
    name: str = Field(description="Your login")


class Confirm(BaseModel):
    ok: bool


def calling(tool: str, tool_input: dict[str, Any] | None = None) -> MockModel:
    """A model that calls `tool` once, then reports the call's result as text."""

    def respond(request: MockModelRequest) -> str | MockResponse:
        if not request.tool_results:
            return MockResponse(tool_calls=[MockToolCall(tool, tool_input or {})])
        result = request.tool_results[0]
        return f"{'error' if result.is_error else 'ok'}: {result.output}"

    return MockModel(respond)


async def start(
    definition: ToolDefinition, tool_input: dict[str, Any] | None = None, store: SessionStore | None = None
) -> tuple[Session, TurnResult, MockModel]:
    model = calling("act", tool_input)
    runtime = Runtime(Agent.from_definitions({"act": definition}), model=model, store=store)
    session = await runtime.create_session()
    return session, await session.send("go"), model


async def one_result(session: Session, call_id: str) -> Any:
    messages = await session.messages()
    parts = [p for m in messages if isinstance(m, ToolMessage) for p in m.content if p.tool_call_id == call_id]
    assert len(parts) == 1
    check_pairing(messages)
    return parts[0]


async def test_a_resolver_consumed_twice_runs_once_and_its_question_is_asked_once() -> None:
    runs: list[str] = []

    def who() -> Elicit[Login]:
        runs.append("who")
        return Elicit("Who are you?", Login)

    def greeting(login: Annotated[Login, Resolve(who)]) -> str:
        runs.append("greeting")
        return f"hello {login.name}"

    def act(login: Annotated[Login, Resolve(who)], text: Annotated[str, Resolve(greeting)]) -> str:
        return f"{login.name}/{text}"

    session, parked, _ = await start(define_tool(description="Act.", execute=act))

    [request] = parked.input_requests
    assert (request.kind, request.display, request.prompt) == ("elicitation", "form", "Who are you?")
    assert request.response_schema is not None and request.response_schema["required"] == ["name"]
    assert runs == ["who"]

    done = await session.respond([InputResponse(request_id=request.request_id, action="accept", value={"name": "ada"})])

    assert done.message == "ok: ada/hello ada"
    assert runs == ["who", "who", "greeting"], "one run per pass: the first pass asked, the second used the answer"
    await one_result(session, request.action.call_id)


class Account:
    def __init__(self, name: str) -> None:
        self.name = name
        self.calls = 0

    def who(self) -> str:
        self.calls += 1
        return self.name


ALICE, BOB = Account("alice"), Account("bob")


async def test_bound_methods_memoize_per_instance() -> None:
    def act(
        a: Annotated[str, Resolve(ALICE.who)],
        again: Annotated[str, Resolve(ALICE.who)],
        b: Annotated[str, Resolve(BOB.who)],
    ) -> str:
        return f"{a} {again} {b}"

    session, done, _ = await start(define_tool(description="Act.", execute=act))

    assert done.message == "ok: alice alice bob"
    assert (ALICE.calls, BOB.calls) == (1, 1)


async def test_a_value_the_model_sends_for_a_resolved_parameter_is_ignored() -> None:
    def real_price(title: str) -> int:
        return 100

    def act(title: str, cents: Annotated[int, Resolve(real_price)]) -> str:
        return f"{title} costs {cents}"

    _, done, _ = await start(define_tool(description="Act.", execute=act), {"title": "Dune", "cents": 1})

    assert done.message == "ok: Dune costs 100"


async def test_sync_resolvers_run_off_the_event_loop_and_get_context_and_arguments() -> None:
    loop_thread = threading.get_ident()
    seen: list[tuple[bool, str, str]] = []

    def audit(order_id: str, ctx: ToolContext) -> str:
        seen.append((threading.get_ident() != loop_thread, order_id, ctx.tool_name))
        return "audited"

    def act(order_id: str, note: Annotated[str, Resolve(audit)]) -> str:
        return note

    await start(define_tool(description="Act.", execute=act), {"order_id": "A-1"})

    assert seen == [(True, "A-1", "act")]


def ask_login() -> Elicit[Login]:
    return Elicit("Who are you?", Login)


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_declined_answer_aborts_a_consumer_that_wants_the_plain_value(action: str) -> None:
    ran: list[str] = []

    def act(login: Annotated[Login, Resolve(ask_login)]) -> str:
        ran.append(login.name)
        return login.name

    session, parked, _ = await start(define_tool(description="Act.", execute=act))
    [request] = parked.input_requests

    done = await session.respond([{"requestId": request.request_id, "action": action}])

    assert ran == []
    result = await one_result(session, request.action.call_id)
    assert result.is_error
    assert result.output == (
        f"Error executing tool act: Resolver for parameter 'login' could not resolve: elicitation was {action}"
    )
    assert done.status == "completed"


async def test_a_union_consumer_branches_on_the_outcome() -> None:
    def act(login: Annotated[ElicitationResult[Login], Resolve(ask_login)]) -> str:
        if isinstance(login, AcceptedElicitation):
            return f"hi {login.data.name}"
        if isinstance(login, DeclinedElicitation):
            return "declined"
        assert isinstance(login, CancelledElicitation)
        return "cancelled"

    session, parked, _ = await start(define_tool(description="Act.", execute=act))
    done = await session.respond([{"requestId": parked.input_requests[0].request_id, "action": "decline"}])
    assert done.message == "ok: declined"

    session, parked, _ = await start(define_tool(description="Act.", execute=act))
    done = await session.respond([{"requestId": parked.input_requests[0].request_id, "value": {"name": "bo"}}])
    assert done.message == "ok: hi bo"


async def test_a_tool_error_in_a_resolver_reaches_the_model_like_one_from_the_body() -> None:
    def load(order_id: str) -> str:
        raise ToolError(f"unknown order {order_id!r}")

    def act(order_id: str, order: Annotated[str, Resolve(load)]) -> str:
        return order

    _, done, _ = await start(define_tool(description="Act.", execute=act), {"order_id": "ORD-9999"})

    assert done.message == "error: Error executing tool act: unknown order 'ORD-9999'"


def ask_confirm() -> Elicit[Confirm]:
    return Elicit("Sure?", Confirm)


async def test_independent_questions_are_asked_in_one_batch_and_dependent_ones_later() -> None:
    def check(login: Annotated[Login, Resolve(ask_login)]) -> Elicit[Confirm]:
        return Elicit(f"Go ahead as {login.name}?", Confirm)

    def act(
        login: Annotated[Login, Resolve(ask_login)],
        sure: Annotated[Confirm, Resolve(ask_confirm)],
        go: Annotated[Confirm, Resolve(check)],
    ) -> str:
        return f"{login.name} {sure.ok} {go.ok}"

    session, first, model = await start(define_tool(description="Act.", execute=act))

    assert [r.prompt for r in first.input_requests] == ["Who are you?", "Sure?"]
    by_prompt = {r.prompt: r.request_id for r in first.input_requests}
    second = await session.respond(
        [
            InputResponse(request_id=by_prompt["Who are you?"], value={"name": "ada"}),
            InputResponse(request_id=by_prompt["Sure?"], value={"ok": True}),
        ]
    )

    assert second.status == "waiting" and second.turn_id == first.turn_id
    [dependent] = second.input_requests
    assert dependent.prompt == "Go ahead as ada?"
    assert len(model.requests) == 1, "the model is not called while the call waits"

    done = await session.respond([InputResponse(request_id=dependent.request_id, value={"ok": False})])

    assert done.message == "ok: ada True False"
    await one_result(session, dependent.action.call_id)
    for request in model.requests:
        check_pairing(request.messages)


async def test_an_answer_failing_the_schema_is_rejected_and_the_call_stays_parked() -> None:
    def act(login: Annotated[Login, Resolve(ask_login)]) -> str:
        return login.name

    session, parked, _ = await start(define_tool(description="Act.", execute=act))
    [request] = parked.input_requests
    before = session.record.model_dump_json()

    with pytest.raises(InvalidAnswerError, match="value fails the schema at name: 5 is not of type 'string'"):
        await session.respond([InputResponse(request_id=request.request_id, value={"name": 5})])

    assert (await session.refresh()).record.model_dump_json() == before
    assert session.input_requests == parked.input_requests


async def test_answers_survive_a_restart_between_parks(tmp_path: Path) -> None:
    def check(login: Annotated[Login, Resolve(ask_login)]) -> Elicit[Confirm]:
        return Elicit(f"Go ahead as {login.name}?", Confirm)

    def act(login: Annotated[Login, Resolve(ask_login)], go: Annotated[Confirm, Resolve(check)]) -> str:
        return f"{login.name} {go.ok}"

    definition = define_tool(description="Act.", execute=act)
    store = SQLiteSessionStore(tmp_path / "s.db")
    session, first, _ = await start(definition, store=store)
    await session.respond([InputResponse(request_id=first.input_requests[0].request_id, value={"name": "ada"})])
    await store.aclose()

    store = SQLiteSessionStore(tmp_path / "s.db")
    runtime = Runtime(Agent.from_definitions({"act": definition}), model=calling("act"), store=store)
    again = await runtime.get_session(session.id)
    [dependent] = again.input_requests
    assert dependent.prompt == "Go ahead as ada?"

    done = await again.respond([InputResponse(request_id=dependent.request_id, value={"ok": True})])

    assert done.message == "ok: ada True", "the first answer was restored from the store, not asked again"
    await store.aclose()


async def test_a_reworded_question_is_asked_again_and_a_computed_value_beats_a_recorded_answer() -> None:
    wording = {"text": "Who are you?", "ask": True}
    runs: list[str] = []

    def who() -> Login | Elicit[Login]:
        return Elicit(wording["text"], Login) if wording["ask"] else Login(name="computed")  # type: ignore[arg-type]

    def sure(login: Annotated[Login, Resolve(who)]) -> Elicit[Confirm]:
        return Elicit("Sure?", Confirm)

    def act(login: Annotated[Login, Resolve(who)], ok: Annotated[Confirm, Resolve(sure)]) -> str:
        runs.append(login.name)
        return login.name

    session, first, _ = await start(define_tool(description="Act.", execute=act))
    wording["text"] = "Who are you, really?"

    second = await session.respond([InputResponse(request_id=first.input_requests[0].request_id, value={"name": "x"})])

    [reasked] = second.input_requests
    assert reasked.prompt == "Who are you, really?"
    assert reasked.request_id != first.input_requests[0].request_id

    third = await session.respond([InputResponse(request_id=reasked.request_id, value={"name": "ada"})])
    [confirm] = third.input_requests
    wording["ask"] = False
    done = await session.respond([InputResponse(request_id=confirm.request_id, value={"ok": True})])

    assert done.message == "ok: computed"
    assert runs == ["computed"]


class Even(BaseModel):
    n: int

    @field_validator("n")
    @classmethod
    def must_be_even(cls, value: int) -> int:
        if value % 2:
            raise ValueError("must be even")
        return value


def ask_even() -> Elicit[Even]:
    return Elicit("An even number?", Even)


async def test_an_answer_that_passes_the_json_schema_but_fails_the_model_fails_the_call_instead_of_looping() -> None:
    def act(n: Annotated[Even, Resolve(ask_even)]) -> int:
        return n.n

    session, parked, _ = await start(define_tool(description="Act.", execute=act))

    done = await session.respond([InputResponse(request_id=parked.input_requests[0].request_id, value={"n": 3})])

    assert done.status == "completed"
    assert done.message == (
        "error: Error executing tool act: Resolver 'ask_even' received an accepted elicitation whose content does "
        "not match the requested schema (Value error, must be even)"
    )
