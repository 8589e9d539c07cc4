"""Resolver DAGs are planned once, at definition: bad shapes raise with messages naming the culprit."""

from typing import Annotated

import pytest
from pydantic import BaseModel

from eve_py import Elicit, ElicitationResult, Resolve, ToolContext, ToolDefinitionError, define_tool


class Login(BaseModel):
    name: str


class Other(BaseModel):
    x: int


def price(title: str) -> int:
    return len(title)


def test_resolved_and_context_parameters_are_hidden_from_the_input_schema() -> None:
    def quote(title: str, cents: Annotated[int, Resolve(price)], ctx: ToolContext) -> str:
        return f"{title}: {cents}"

    definition = define_tool(description="Quote.", execute=quote)

    assert definition.input_schema == {
        "properties": {"title": {"title": "Title", "type": "string"}},
        "required": ["title"],
        "type": "object",
    }


def left(value: "Annotated[int, Resolve(right)]") -> int:
    return value


def right(value: "Annotated[int, Resolve(left)]") -> int:
    return value


def test_a_cycle_is_rejected_naming_the_resolver() -> None:
    def body(value: Annotated[int, Resolve(left)]) -> int:
        return value

    with pytest.raises(ToolDefinitionError) as caught:
        define_tool(description="Cycle.", execute=body)

    assert str(caught.value) == "Resolver 'left' has a cyclic dependency"


class Ring:
    def first(self, value: "Annotated[int, Resolve(RING.second)]") -> int:
        return value

    def second(self, value: "Annotated[int, Resolve(RING.first)]") -> int:
        return value


RING = Ring()


def test_a_cycle_through_bound_methods_is_rejected() -> None:
    def body(value: Annotated[int, Resolve(RING.first)]) -> int:
        return value

    with pytest.raises(ToolDefinitionError, match=r"^Resolver 'first' has a cyclic dependency$"):
        define_tool(description="Cycle.", execute=body)


def lookup(user_id: str, region: str = "eu") -> str:
    return user_id + region


def test_a_resolver_parameter_that_is_nothing_known_is_rejected_even_with_a_default() -> None:
    def body(user_id: str, profile: Annotated[str, Resolve(lookup)]) -> str:
        return profile

    with pytest.raises(ToolDefinitionError) as caught:
        define_tool(description="Profile.", execute=body)

    assert str(caught.value) == (
        "Resolver 'lookup' parameter 'region' cannot be resolved: expected a ToolContext, an "
        "Annotated[_, Resolve(...)], or a tool argument by name"
    )


class BadResolver:
    def __call__(self, nothing: int) -> int:
        return nothing


def test_a_callable_object_resolver_is_named_by_its_type() -> None:
    def body(value: Annotated[int, Resolve(BadResolver())]) -> int:
        return value

    with pytest.raises(ToolDefinitionError, match="^Resolver 'BadResolver' parameter 'nothing' cannot be resolved"):
        define_tool(description="Bad.", execute=body)


def token() -> str:
    return "t"


def test_resolve_wrapped_in_a_union_is_rejected() -> None:
    def body(value: Annotated[str, Resolve(token)] | None = None) -> str:
        return value or ""

    with pytest.raises(ToolDefinitionError) as caught:
        define_tool(description="Union.", execute=body)

    assert str(caught.value) == (
        "Parameter 'value' of 'body' wraps `Resolve(...)` in a union; annotate the parameter directly as "
        "`Annotated[T, Resolve(...)]`"
    )


def ask_twice() -> Elicit[Login] | Elicit[Other]:
    return Elicit("Who?", Login)


def test_a_resolver_returning_two_elicit_arms_is_rejected() -> None:
    def body(value: Annotated[Login, Resolve(ask_twice)]) -> str:
        return value.name

    with pytest.raises(ToolDefinitionError) as caught:
        define_tool(description="Two.", execute=body)

    assert str(caught.value) == (
        "Resolver 'ask_twice' return annotation has multiple Elicit arms; a resolver asks one question - "
        "split it into separate resolvers"
    )


def ask_once() -> Login | Elicit[Login]:
    return Elicit("Who?", Login)


def test_one_elicit_arm_beside_plain_arms_is_fine() -> None:
    def body(value: Annotated[ElicitationResult[Login], Resolve(ask_once)]) -> str:
        return "ok"

    assert define_tool(description="One.", execute=body).input_schema["properties"] == {}
