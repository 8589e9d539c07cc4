"""A parked batch holding one request of every kind, and random inputs to throw at it.

The agent's model asks, in one step: the built-in `ask_question` (kind `question`), the client
tools `pick` and `measure` with output schemas (`client-tool`; `measure` takes a number, where
NaN would slip through a schema), the approval-gated `charge` (`tool-approval`) and `refund`,
whose resolver elicits an amount (`elicitation`). Any message parks that batch; once the step's
results are in, the model answers with a text.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any

from hypothesis import strategies as st
from pydantic import BaseModel

from eve_py import Agent, Elicit, Resolve, Session, ToolContext, define_client_tool, define_tool
from eve_py._json import JsonValue
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

__all__ = (
    "KINDS",
    "PARKED",
    "TOOLS",
    "answers_for",
    "build_agent",
    "json_values",
    "model",
    "responses",
    "snapshot",
    "texts",
    "with_ids",
)

TOOLS = ("ask_question", "pick", "measure", "charge", "refund")
"""The parked calls' tools, in the batch's order."""
KINDS = ("question", "client-tool", "client-tool", "tool-approval", "elicitation")


class PickInput(BaseModel):
    prompt: str


class Picked(BaseModel):
    pickedIds: list[str]  # noqa: N815


class Length(BaseModel):
    cm: float


class Amount(BaseModel):
    cents: int


def ask_amount(order_id: str) -> Elicit[Amount]:
    return Elicit(f"How many cents should be refunded on {order_id}?", Amount)


def build_agent(runs: Counter[str]) -> Agent:
    """The agent; `runs` counts executor runs by call id."""

    def charge(cents: int, ctx: ToolContext) -> dict[str, int]:
        """Charge."""
        runs[ctx.call_id] += 1
        return {"charged": cents}

    def refund(order_id: str, amount: Annotated[Amount, Resolve(ask_amount)], ctx: ToolContext) -> dict[str, Any]:
        """Refund."""
        runs[ctx.call_id] += 1
        return {"orderId": order_id, "cents": amount.cents}

    return Agent.from_definitions(
        {
            "charge": define_tool(description="Charge.", execute=charge, needs_approval=True),
            "pick": define_client_tool(description="Pick.", input_schema=PickInput, output_schema=Picked),
            "measure": define_client_tool(description="Measure.", input_schema=PickInput, output_schema=Length),
            "refund": define_tool(description="Refund.", execute=refund),
        }
    )


def _respond(request: MockModelRequest) -> str | MockResponse:
    done = request.tool_results_since_last_user_message
    if done:
        return "done: " + "; ".join(f"{r.name}={r.output}" for r in done)
    options: list[JsonValue] = [{"id": "yes", "label": "Yes"}, {"id": "no", "label": "No"}]
    return MockResponse(
        tool_calls=[
            MockToolCall("ask_question", {"prompt": "Go on?", "options": options}),
            MockToolCall("pick", {"prompt": "Which template?"}),
            MockToolCall("measure", {"prompt": "How long?"}),
            MockToolCall("charge", {"cents": 500}),
            MockToolCall("refund", {"order_id": "ORD-1"}),
        ]
    )


def model() -> MockModel:
    return MockModel(_respond)


def answers_for(session: Session) -> dict[str, dict[str, Any]]:
    """A good answer to each open request, by its call's tool name."""
    good: dict[str, dict[str, Any]] = {}
    for request in session.input_requests:
        rid = request.request_id
        by_tool: dict[str, dict[str, Any]] = {
            "ask_question": {"requestId": rid, "optionId": "yes"},
            "pick": {"requestId": rid, "value": {"pickedIds": ["tpl_blue"]}},
            "measure": {"requestId": rid, "value": {"cm": 12.5}},
            "charge": {"requestId": rid, "optionId": "approve"},
            "refund": {"requestId": rid, "action": "accept", "value": {"cents": 700}},
        }
        good[request.action.tool_name] = by_tool[request.action.tool_name]
    return good


async def snapshot(session: Session) -> tuple[str, list[str]]:
    """The stored record and the event ids: what a refused input must leave as they were."""
    await session.refresh()
    return session.record.model_dump_json(), [event.meta.id for event in await session.events()]


NASTY = [
    "",
    " ",
    "yes",
    "no",
    "Yes",
    "1",
    "approve",
    "deny",
    "tpl_blue",
    "NaN",
    "Infinity",
    "\ud800",
    "a\udfffb",
    '{"pickedIds": ["tpl_blue"]}',
    '{"cents": 700}',
    '{"cents": NaN}',
    "[" * 50,
    "\x00",
    "é" * 3,
]
texts = st.one_of(st.sampled_from(NASTY), st.text(st.characters(exclude_categories=()), max_size=12))
"""Strings, lone surrogates included."""

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
"""JSON-ish values as Python has them: NaN, Infinity, huge ints and lone surrogates included."""


PARKED = tuple(f"@{i}" for i in range(len(TOOLS)))
"""Stand-ins for the parked requests' ids (drawn before the batch exists); see `with_ids`."""


def with_ids(response: dict[str, Any], request_ids: list[str]) -> dict[str, Any]:
    """`response` with a stand-in `@i` replaced by the i-th parked request's id."""
    stand_in = response.get("requestId")
    if isinstance(stand_in, str) and stand_in in PARKED:
        return {**response, "requestId": request_ids[PARKED.index(stand_in)]}
    return response


GOOD_VALUES = st.sampled_from(
    [
        {"pickedIds": ["tpl_blue"]},
        {"pickedIds": []},
        {"cents": 700},
        {"cents": 1.5},
        {"cm": 2.5},
        {"cm": float("nan")},
        {"cm": float("inf")},
        {"cm": -float("inf")},
        {"cm": 1, "note": "\ud800"},
    ]
)
"""Values near what the requests' schemas take, NaN and Infinity among them."""


def responses() -> st.SearchStrategy[dict[str, Any]]:
    """One random input response: half near a real answer, half any subset of fields of any shape.

    Its `requestId` is mostly a stand-in for a parked request (`with_ids` puts the real id in).
    """
    near = st.fixed_dictionaries(
        {"requestId": st.sampled_from(PARKED)},
        optional={
            "optionId": st.sampled_from(["yes", "no", "approve", "deny", "maybe"]),
            "text": st.sampled_from(NASTY),
            "value": GOOD_VALUES,
            "action": st.sampled_from(["accept", "decline", "cancel"]),
        },
    )
    wild = st.fixed_dictionaries(
        {"requestId": st.one_of(st.sampled_from(PARKED), texts, json_values)},
        optional={
            "optionId": st.one_of(st.sampled_from(["yes", "no", "approve", "deny", "maybe"]), texts, json_values),
            "text": st.one_of(texts, json_values),
            "value": st.one_of(GOOD_VALUES, json_values),
            "action": st.one_of(st.sampled_from(["accept", "decline", "cancel", "maybe"]), json_values),
            "extra": json_values,
        },
    )
    return near | wild
