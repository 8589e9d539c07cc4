"""define_agent: the agent's model, instructions and limits."""

from __future__ import annotations

import pytest

from eve_py import AgentDefinition, define_agent
from eve_py.errors import UsageError
from eve_py.testing import MockModel


def test_define_agent_keeps_model_instructions_and_max_steps() -> None:
    agent = define_agent(model="anthropic/claude-sonnet-4.6", instructions="Be brief.", max_steps=5)

    assert isinstance(agent, AgentDefinition)
    assert agent.model == "anthropic/claude-sonnet-4.6"
    assert agent.instructions == "Be brief."
    assert agent.max_steps == 5


def test_define_agent_defaults_to_no_model_no_instructions_and_twenty_steps() -> None:
    agent = define_agent()

    assert agent.model is None
    assert agent.instructions is None
    assert agent.max_steps == 20


def test_define_agent_accepts_a_model_instance() -> None:
    model = MockModel(lambda request: "hi")

    assert define_agent(model=model).model is model


@pytest.mark.parametrize("max_steps", [0, -3])
def test_define_agent_rejects_max_steps_below_one(max_steps: int) -> None:
    with pytest.raises(UsageError, match=f"max_steps must be at least 1, got {max_steps}"):
        define_agent(max_steps=max_steps)


@pytest.mark.parametrize("max_steps", ["ten", 2.5, True, None])
def test_define_agent_refuses_max_steps_that_is_not_a_whole_number_with_a_clear_error(max_steps: object) -> None:
    with pytest.raises(UsageError) as caught:
        define_agent(max_steps=max_steps)  # type: ignore[arg-type]

    assert "max_steps must be at least 1" in str(caught.value) and repr(max_steps) in str(caught.value)


def test_define_agent_rejects_instructions_that_are_not_a_string() -> None:
    with pytest.raises(UsageError, match="instructions must be a string"):
        define_agent(instructions=["Be brief."])  # type: ignore[arg-type]
