"""The stored turn counts its model steps through every way a step ends: parked, calls run, completed, failed."""

from __future__ import annotations

import pytest

from eve_py import Agent, InputResponse, Runtime, define_client_tool, define_tool
from eve_py.sessions import MemorySessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio

pick = define_client_tool(
    description="Let the person pick a colour.",
    input_schema={"type": "object", "properties": {}},
    output_schema={"type": "object", "properties": {"colour": {"type": "string"}}, "required": ["colour"]},
)


def write_note(text: str) -> str:
    return text


note = define_tool(description="Write a note.", execute=write_note)


def respond(request: MockModelRequest) -> str | MockResponse:
    """Step 0 parks on `pick`; step 1 calls `note`; step 2 answers (with text that is not JSON)."""
    if not request.tool_results:
        return MockResponse(tool_calls=[MockToolCall("pick", {})])
    if len(request.tool_results) == 1:
        return MockResponse(tool_calls=[MockToolCall("note", {"text": "noted"})])
    return "done"


@pytest.mark.parametrize("schema", [None, {"type": "object"}])
async def test_the_stored_turn_counts_every_step(schema: dict[str, str] | None) -> None:
    store = MemorySessionStore()
    runtime = Runtime(Agent.from_definitions({"pick": pick, "note": note}), model=MockModel(respond), store=store)
    session = await runtime.create_session()

    parked = await session.send("hi", output_schema=schema)
    waiting = await store.load(session.id)
    assert waiting.turn is not None and (waiting.turn.status, waiting.turn.steps) == ("waiting", 1)
    assert waiting.turn.steps_since_input == 1

    done = await session.respond(
        [InputResponse(request_id=parked.input_requests[0].request_id, value={"colour": "red"})]
    )
    ended = await store.load(session.id)
    assert ended.turn is not None and (ended.turn.steps, ended.turn.steps_since_input) == (3, 2)
    # "done" is not a JSON object: with an output schema the turn fails after its last step.
    assert (done.status, ended.turn.status) == (("completed", "completed") if schema is None else ("failed", "failed"))
