"""Three park/answer/settle flows for the crash and recovery tests, one per kind of parked call.

- `approval`: `charge` needs a person's approval; once it ran, the model calls `note`.
- `client-tool`: `pick` is client-resolved with an output schema; then the model calls `note`.
- `elicitation`: `refund`'s resolvers ask for an amount, then (a second park of the same call)
  for a reason; then the model calls `note`.

Every executor appends `<tool> <call id>` to the file named by `$CRASH_RUNS` when it runs, so
a test counts runs across processes. With `$CRASH_HOLD` naming a FIFO, `charge` reports
`executing` on stdout and waits until a test writes to that FIFO (to hold a worker mid-run).
The model reads only the conversation, so any process continues the script where it stopped.
"""

from __future__ import annotations

import json
import os
from typing import Annotated

from pydantic import BaseModel

from eve_py import Agent, Elicit, InputRequest, Resolve, ToolContext, define_client_tool, define_tool
from eve_py._json import JsonValue
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

__all__ = ("FINAL_MESSAGES", "MESSAGES", "agent", "answer", "emit", "model")

MESSAGES = {"approval": "charge me", "client-tool": "pick a template", "elicitation": "refund ORD-1"}
"""The message that starts each flow."""

FINAL_MESSAGES = {
    "approval": "charged {'charged': 500}",
    "client-tool": "picked {'pickedIds': ['tpl_green']}",
    "elicitation": "refunded {'orderId': 'ORD-1', 'cents': 700, 'memo': 'it broke'}",
}
"""Each flow's last assistant text once every answer was used as given."""


def emit(event: str, **fields: JsonValue) -> None:
    """One JSON line on stdout, written in one `write` (so lines of several processes never mix)."""
    os.write(1, (json.dumps({"pid": os.getpid(), "event": event, **fields}) + "\n").encode())


def _ran(tool: str, ctx: ToolContext) -> None:
    with open(os.environ["CRASH_RUNS"], "a", encoding="utf-8") as runs:
        runs.write(f"{tool} {ctx.call_id}\n")


def charge(cents: int, ctx: ToolContext) -> dict[str, int]:
    """Charge the customer."""
    _ran("charge", ctx)
    hold = os.environ.get("CRASH_HOLD")
    if hold:
        emit("executing", callId=ctx.call_id)
        with open(hold, encoding="utf-8") as fifo:  # blocks until the test opens it for writing
            fifo.read()
    return {"charged": cents}


def note(text: str, ctx: ToolContext) -> dict[str, str]:
    """Record a note."""
    _ran("note", ctx)
    return {"noted": text}


class PickInput(BaseModel):
    prompt: str


class Picked(BaseModel):
    pickedIds: list[str]  # noqa: N815


class Amount(BaseModel):
    cents: int


class Memo(BaseModel):
    text: str


def ask_amount(order_id: str) -> Elicit[Amount]:
    return Elicit(f"How many cents should be refunded on {order_id}?", Amount)


def ask_memo(order_id: str, amount: Annotated[Amount, Resolve(ask_amount)]) -> Elicit[Memo]:
    return Elicit(f"Why refund {amount.cents} cents on {order_id}?", Memo)


def refund(
    order_id: str,
    amount: Annotated[Amount, Resolve(ask_amount)],
    memo: Annotated[Memo, Resolve(ask_memo)],
    ctx: ToolContext,
) -> dict[str, str | int]:
    """Refund an order."""
    _ran("refund", ctx)
    return {"orderId": order_id, "cents": amount.cents, "memo": memo.text}


agent = Agent.from_definitions(
    {
        "charge": define_tool(description="Charge the customer.", execute=charge, needs_approval=True),
        "note": define_tool(description="Record a note.", execute=note),
        "pick": define_client_tool(description="Pick a template.", input_schema=PickInput, output_schema=Picked),
        "refund": define_tool(description="Refund an order.", execute=refund),
    }
)

_FIRST = {
    "approval": MockToolCall("charge", {"cents": 500}),
    "client-tool": MockToolCall("pick", {"prompt": "Which template?"}),
    "elicitation": MockToolCall("refund", {"order_id": "ORD-1"}),
}
_VERB = {"approval": "charged", "client-tool": "picked", "elicitation": "refunded"}


def _respond(request: MockModelRequest) -> str | MockResponse:
    flow = next(name for name, text in MESSAGES.items() if text == request.last_user_message)
    done = request.tool_results_since_last_user_message
    if not done:
        return MockResponse(tool_calls=[_FIRST[flow]])
    if len(done) == 1:
        return MockResponse(tool_calls=[MockToolCall("note", {"text": f"{flow} done"})])
    return f"{_VERB[flow]} {done[0].output}"


model = MockModel(_respond)


def answer(request: InputRequest) -> dict[str, JsonValue]:
    """The answer a person gives to each request of the flows (always the same one)."""
    if request.kind == "tool-approval":
        return {"requestId": request.request_id, "optionId": "approve"}
    if request.kind == "client-tool":
        return {"requestId": request.request_id, "value": {"pickedIds": ["tpl_green"]}}
    schema = request.response_schema or {}
    properties = schema.get("properties", {})
    wants_cents = isinstance(properties, dict) and "cents" in properties
    value: JsonValue = {"cents": 700} if wants_cents else {"text": "it broke"}
    return {"requestId": request.request_id, "action": "accept", "value": value}
