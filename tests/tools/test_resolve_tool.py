"""The runtime normalizer (resolve_tool) and load_agent: tools are checked again when an app loads."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest
from pydantic import BaseModel

from eve_py import (
    Agent,
    ResolvedTool,
    ToolContext,
    ToolResolutionError,
    define_client_tool,
    define_tool,
    load_agent,
    resolve_tool,
)

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "agent-tools-hitl"


class Ask(BaseModel):
    prompt: str


def note(text: str, ctx: ToolContext) -> dict[str, bool]:
    return {"recorded": True}


def shout(text: str, times: int = 1) -> str:
    return text.upper() * times


NOTE = define_tool(description="Record a note.", execute=note)
ASK = define_client_tool(description="Ask.", input_schema=Ask)


def test_resolve_tool_names_the_tool_after_its_path() -> None:
    resolved = resolve_tool(NOTE, path="tools/billing/refund.py")

    assert isinstance(resolved, ResolvedTool)
    assert resolved.name == "billing-refund"
    assert resolved.path == "tools/billing/refund.py"
    assert resolved.description == "Record a note."
    assert resolved.input_schema == NOTE.input_schema
    assert resolved.client_resolved is False


def test_resolve_tool_attaches_the_executor_of_a_server_tool() -> None:
    resolved = resolve_tool(NOTE, path="tools/note.py")

    assert resolved.plan is not None
    assert resolved.plan.fn is note


def test_resolve_tool_never_attaches_an_executor_to_a_client_resolved_tool() -> None:
    resolved = resolve_tool(ASK, path="tools/ask.py")

    assert resolved.client_resolved is True
    assert resolved.plan is None


def test_a_client_tool_smuggling_an_executor_plan_still_gets_none() -> None:
    smuggled = dataclasses.replace(ASK, plan=NOTE.plan)

    resolved = resolve_tool(smuggled, path="tools/ask.py")

    assert resolved.plan is None


def test_a_client_resolved_tool_with_an_execute_function_is_rejected_with_the_contract_message() -> None:
    mixed = dataclasses.replace(NOTE, client_resolved=True)

    with pytest.raises(ToolResolutionError) as caught:
        resolve_tool(mixed, path="tools/mixed.py")

    assert str(caught.value) == (
        'Expected the tool export "tool" from "tools/mixed.py" not to define an "execute" function '
        "when it is client-resolved."
    )
    assert caught.value.path == "tools/mixed.py"


def test_a_server_tool_without_an_execute_function_is_rejected_with_the_contract_message() -> None:
    mixed = dataclasses.replace(ASK, client_resolved=False)

    with pytest.raises(ToolResolutionError) as caught:
        resolve_tool(mixed, path="tools/mixed.py")

    assert str(caught.value) == 'Expected the tool export "tool" from "tools/mixed.py" to provide an execute function.'


def test_a_server_tool_whose_execute_is_not_callable_is_rejected() -> None:
    mixed = dataclasses.replace(NOTE, execute="note")  # type: ignore[arg-type]

    with pytest.raises(ToolResolutionError, match="to provide an execute function."):
        resolve_tool(mixed, path="tools/note.py")


def test_an_export_that_is_not_a_tool_definition_is_rejected() -> None:
    with pytest.raises(ToolResolutionError) as caught:
        resolve_tool({"description": "x", "execute": note}, path="tools/x.py")

    assert str(caught.value) == 'Expected the tool export "tool" from "tools/x.py" to match the public eve shape.'


def test_a_client_resolved_tool_that_needs_approval_is_rejected() -> None:
    mixed = dataclasses.replace(ASK, needs_approval=True)

    with pytest.raises(ToolResolutionError, match="not to need approval when it is client-resolved"):
        resolve_tool(mixed, path="tools/ask.py")


def test_a_replaced_executor_is_planned_again_so_it_is_the_one_that_runs() -> None:
    rebuilt = dataclasses.replace(NOTE, execute=shout)

    resolved = resolve_tool(rebuilt, path="tools/note.py")

    assert resolved.plan is not None
    assert resolved.plan.fn is shout


def test_a_replaced_executor_that_cannot_be_planned_is_rejected() -> None:
    def untyped(text):  # type: ignore[no-untyped-def]
        return text

    rebuilt = dataclasses.replace(NOTE, execute=untyped)

    with pytest.raises(ToolResolutionError, match="'text'"):
        resolve_tool(rebuilt, path="tools/note.py")


def test_agent_from_definitions_checks_every_tool_with_the_normalizer() -> None:
    mixed = dataclasses.replace(NOTE, client_resolved=True)

    with pytest.raises(ToolResolutionError, match='from "tools/sneaky.py" not to define an "execute" function'):
        Agent.from_definitions({"note": NOTE, "sneaky": mixed})


def test_agent_from_definitions_offers_the_built_in_ask_question_by_default() -> None:
    agent = Agent.from_definitions({"note": NOTE})

    assert set(agent.tools) == {"note", "ask_question"}
    builtin = agent.tools["ask_question"]
    assert builtin.client_resolved is True
    assert builtin.plan is None
    assert builtin.input_schema["required"] == ["prompt"]


def test_agent_from_definitions_lets_an_app_tool_replace_the_built_in_ask_question() -> None:
    agent = Agent.from_definitions({"ask_question": ASK})

    assert agent.tools["ask_question"].description == "Ask."
    assert agent.tools["ask_question"].path == "tools/ask_question.py"


# --- load_agent on the fixture app ------------------------------------------------------------------


def test_load_agent_on_the_fixture_offers_its_four_tools() -> None:
    agent = load_agent(FIXTURE)

    assert set(agent.tools) == {"ask_question", "note", "guarded_echo", "send_newsletter"}
    assert [name for name, tool in sorted(agent.tools.items()) if tool.editable] == ["send_newsletter"]
    assert agent.name == "agent-tools-hitl"
    assert agent.max_steps == 12
    assert agent.instructions is not None
    assert agent.instructions.startswith("You help people pick a page template")


def test_the_fixture_ask_question_is_the_typed_override() -> None:
    ask = load_agent(FIXTURE).tools["ask_question"]

    assert ask.path == "tools/ask_question.py"
    assert ask.client_resolved is True
    assert ask.plan is None
    assert "ui" in ask.input_schema["properties"]
    assert ask.output_schema is not None
    assert ask.output_schema["required"] == ["pickedIds"]
    assert ask.output_schema["properties"]["pickedIds"]["type"] == "array"


def test_the_fixture_server_tools_have_executors_and_guarded_echo_needs_approval() -> None:
    tools = load_agent(FIXTURE).tools

    assert tools["note"].plan is not None
    assert tools["note"].needs_approval is False
    assert "ctx" not in tools["note"].input_schema["properties"]
    assert tools["guarded_echo"].plan is not None
    assert tools["guarded_echo"].needs_approval is True


def test_load_agent_rejects_an_app_with_compile_errors(tmp_path: Path) -> None:
    from eve_py import CompileError

    tool_file = tmp_path / "agent" / "tools" / "bad.py"
    tool_file.parent.mkdir(parents=True)
    tool_file.write_text('tool = "not a tool"\n', encoding="utf-8")

    with pytest.raises(CompileError, match=r'Expected the tool export "tool" from "tools/bad.py"'):
        load_agent(tmp_path)


def test_load_agent_works_without_agent_py_and_without_a_model(tmp_path: Path) -> None:
    tool_file = tmp_path / "agent" / "tools" / "note.py"
    tool_file.parent.mkdir(parents=True)
    tool_file.write_text(
        textwrap.dedent(
            """
            from eve_py import define_tool


            def note(text: str) -> str:
                return text


            tool = define_tool(description="Note.", execute=note)
            """
        ),
        encoding="utf-8",
    )

    agent = load_agent(tmp_path)

    assert agent.model is None
    assert set(agent.tools) == {"note", "ask_question"}
