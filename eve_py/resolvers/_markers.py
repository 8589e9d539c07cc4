"""Resolver markers and elicitation outcomes.

```python
def ask_restock(scope: Annotated[Scope, Resolve(refund_scope)]) -> RestockChoice | Elicit[RestockChoice]:
    ...

def refund_order(order_id: str, restock: Annotated[ElicitationResult[RestockChoice], Resolve(ask_restock)]) -> dict:
    ...
```

`Resolve(fn)` marks a parameter as filled by the resolver `fn`; `Elicit(message, Model)` is
what a resolver returns to ask a person (the call parks as an `elicitation` input request).
The consumer's annotation decides what it gets: the plain value (a decline or cancel then
aborts the call) or the `ElicitationResult` union (the consumer branches).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Literal, TypeVar, Union

from pydantic import BaseModel
from typing_extensions import TypeAliasType

__all__ = (
    "AcceptedElicitation",
    "CancelledElicitation",
    "DeclinedElicitation",
    "Elicit",
    "ElicitationResult",
    "Resolve",
)

T = TypeVar("T")
ModelT = TypeVar("ModelT", bound=BaseModel)


class Resolve:
    """Marks `Annotated[T, Resolve(fn)]`: the parameter is filled by running `fn` first.

    Honoured only as top-level `Annotated` metadata of a tool or resolver parameter; the first
    `Resolve` in the metadata wins.
    """

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __repr__(self) -> str:
        return f"Resolve({getattr(self.fn, '__qualname__', self.fn)!r})"


class Elicit(Generic[ModelT]):
    """Returned by a resolver to ask a person for a `schema`-shaped value.

    Attributes:
        message: The question shown to the person. Derive it deterministically from the tool's
            arguments and earlier answers: a recorded answer is reused only for the same
            message and schema.
        schema: The pydantic model the answer must satisfy.
    """

    __slots__ = ("message", "schema")

    def __init__(self, message: str, schema: type[ModelT]) -> None:
        self.message = message
        self.schema = schema

    def __repr__(self) -> str:
        return f"Elicit({self.message!r}, {self.schema.__name__})"


class AcceptedElicitation(BaseModel, Generic[T]):
    """The person answered; `data` is the answer (or a resolver's plain value)."""

    action: Literal["accept"] = "accept"
    data: T


class DeclinedElicitation(BaseModel):
    """The person declined to answer."""

    action: Literal["decline"] = "decline"


class CancelledElicitation(BaseModel):
    """The person dismissed the question (or left it unanswered in a settled batch)."""

    action: Literal["cancel"] = "cancel"


ElicitationResult = TypeAliasType(
    "ElicitationResult",
    Union[AcceptedElicitation[T], DeclinedElicitation, CancelledElicitation],  # noqa: UP007  # a TypeAliasType value
    type_params=(T,),
)
"""`AcceptedElicitation[T] | DeclinedElicitation | CancelledElicitation`; annotate a consumer with
it to branch on the outcome instead of aborting on decline/cancel."""
