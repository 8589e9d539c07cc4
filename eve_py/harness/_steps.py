"""What one model step is made of: the system prompt it is sent, and the assistant message made of its response.

The step itself, model request to written results, is `TurnUnit.step` (`eve_py.harness._unit`).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from eve_py._json import canonical_dumps, json_problem
from eve_py.agent import Agent
from eve_py.models import ModelResponse
from eve_py.protocol.messages import AssistantMessage, TextPart, ToolCallPart
from eve_py.protocol.turns import TurnState

__all__ = ("assistant_message", "step_instructions")


def step_instructions(agent: Agent, turn: TurnState) -> str | None:
    """The system prompt for a step of `turn`: the agent's, plus the turn's context and output schema."""
    parts = [agent.instructions] if agent.instructions else []
    if turn.client_context is not None:
        parts.append(f"Context from the client for this turn:\n{turn.client_context}")
    if turn.output_schema is not None:
        parts.append(
            "When you give your final answer in this turn, reply with only a JSON value (no prose, no code "
            f"fence) that is valid against this JSON Schema:\n{canonical_dumps(turn.output_schema)}"
        )
    return "\n\n".join(parts) if parts else None


def assistant_message(response: ModelResponse, used: AbstractSet[str]) -> tuple[AssistantMessage, dict[str, str]]:
    """The step's assistant message, and the call ids whose arguments are not a JSON object (with why).

    Some compatible servers reuse ids (`call_0` every step); a repeated id would make every later
    request unpairable, so it gets a suffix, unique in the conversation (`used`) and the response.
    Arguments holding NaN, Infinity or a lone surrogate count as not a JSON object (stored as `{}`),
    like argument text that does not parse: the call gets an error result and the turn goes on.

    Raises:
        pydantic.ValidationError: The response holds data that is not JSON.
    """
    ids: list[str] = []
    for call in response.tool_calls:
        call_id, suffix = call.id, 1
        while call_id in used or call_id in ids:
            suffix += 1
            call_id = f"{call.id}#{suffix}"
        ids.append(call_id)
    text = response.text if response.text and response.text.strip() else None
    content: list[TextPart | ToolCallPart] = [TextPart(text=text)] if text else []
    unparsed: dict[str, str] = {}
    for call_id, call in zip(ids, response.tool_calls, strict=True):
        reason = call.input_error or json_problem(call.input)
        if reason is not None:
            unparsed[call_id] = reason
        content.append(
            ToolCallPart(tool_call_id=call_id, tool_name=call.name, input=call.input if reason is None else {})
        )
    return AssistantMessage(content=content, provider_data=response.provider_data), unparsed
