"""compile_app: discovering an app's agent/ folder, checking every tool and writing the manifest."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from eve_py import CompileError, Diagnostic, compile_app, load_agent
from eve_py.compiler import manifest_path

AGENT = 'from eve_py import define_agent\n\nagent = define_agent(model="anthropic/claude-sonnet-4.6")\n'

NOTE = """
from eve_py import ToolContext, define_tool


def note(text: str, ctx: ToolContext, urgent: bool = False) -> dict[str, bool]:
    return {"recorded": True}


tool = define_tool(description="Record a note.", execute=note)
"""

REFUND = """
from eve_py import define_tool


def refund(order_id: str, amount_cents: int) -> dict[str, str]:
    return {"refunded": order_id}


tool = define_tool(description="Refund an order.", execute=refund, needs_approval=True)
"""

CLIENT_ASK = """
from pydantic import BaseModel

from eve_py import define_client_tool


class Ask(BaseModel):
    prompt: str
    ui: dict[str, str] | None = None


class Picked(BaseModel):
    pickedIds: list[str]


tool = define_client_tool(description="Ask with a picker.", input_schema=Ask, output_schema=Picked)
"""

DISABLE = "from eve_py import disable_tool\n\ntool = disable_tool()\n"

CLIENT_WITH_EXECUTOR = """
import dataclasses

from eve_py import define_tool


def run(text: str) -> str:
    return text


tool = dataclasses.replace(define_tool(description="Mixed.", execute=run), client_resolved=True)
"""

SERVER_WITHOUT_EXECUTOR = """
import dataclasses

from eve_py import define_client_tool

tool = dataclasses.replace(
    define_client_tool(description="Mixed.", input_schema={"type": "object"}), client_resolved=False
)
"""


def write_app(root: Path, files: dict[str, str], *, agent: str | None = AGENT) -> Path:
    """Write an app under `root`: `files` maps paths relative to `agent/` to their source."""
    sources = dict(files)
    if agent is not None:
        sources.setdefault("agent.py", agent)
    for relative, source in sources.items():
        path = root / "agent" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return root


def read_manifest(app: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((app / ".eve" / "build" / "manifest.json").read_text(encoding="utf-8"))
    return data


def tools_by_name(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in manifest["tools"]}


def compile_errors(app: Path) -> list[Diagnostic]:
    with pytest.raises(CompileError) as caught:
        compile_app(app)
    return [d for d in caught.value.diagnostics if d.severity == "error"]


def by_path(diagnostics: list[Diagnostic]) -> dict[str, list[Diagnostic]]:
    grouped: dict[str, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        grouped.setdefault(diagnostic.path, []).append(diagnostic)
    return grouped


# --- the manifest ---------------------------------------------------------------------------------


def test_compile_app_writes_the_manifest_with_camel_case_tool_entries(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/note.py": NOTE})

    compile_app(app)

    assert manifest_path(app) == app / ".eve" / "build" / "manifest.json"
    note = tools_by_name(read_manifest(app))["note"]
    assert {"name", "description", "inputSchema", "outputSchema", "clientResolved", "needsApproval", "source"} <= set(
        note
    )
    assert note["name"] == "note"
    assert note["description"] == "Record a note."
    assert note["inputSchema"]["required"] == ["text"]
    assert set(note["inputSchema"]["properties"]) == {"text", "urgent"}
    assert note["outputSchema"] is None
    assert note["clientResolved"] is False
    assert note["needsApproval"] is False
    assert note["source"] == "tools/note.py"


def test_compile_app_returns_the_manifest_it_writes(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/note.py": NOTE})

    manifest = compile_app(app)

    assert json.loads(manifest.model_dump_json(by_alias=True)) == read_manifest(app)


def test_manifest_marks_approval_and_client_resolved_tools(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/refund.py": REFUND, "tools/picker.py": CLIENT_ASK})

    compile_app(app)

    tools = tools_by_name(read_manifest(app))
    assert tools["refund"]["needsApproval"] is True
    assert tools["refund"]["clientResolved"] is False
    assert tools["picker"]["clientResolved"] is True
    assert tools["picker"]["needsApproval"] is False
    assert tools["picker"]["outputSchema"]["required"] == ["pickedIds"]


def test_tool_names_come_from_the_path_under_tools(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/billing/refund.py": REFUND, "tools/note.py": NOTE})

    compile_app(app)

    tools = tools_by_name(read_manifest(app))
    assert tools["billing-refund"]["source"] == "tools/billing/refund.py"
    assert tools["note"]["source"] == "tools/note.py"


def test_files_starting_with_an_underscore_are_not_tools(tmp_path: Path) -> None:
    app = write_app(
        tmp_path / "shop", {"tools/note.py": NOTE, "tools/_helpers.py": "VALUE = 1\n", "tools/__init__.py": ""}
    )

    compile_app(app)

    assert set(tools_by_name(read_manifest(app))) == {"note", "ask_question"}


def test_the_built_in_ask_question_is_offered_when_the_app_does_not_override_it(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/note.py": NOTE})

    compile_app(app)

    ask = tools_by_name(read_manifest(app))["ask_question"]
    assert ask["clientResolved"] is True
    assert ask["source"].startswith("eve:")
    assert set(ask["inputSchema"]["properties"]) == {"prompt", "options", "allowFreeform"}
    assert ask["inputSchema"]["additionalProperties"] is False


def test_an_ask_question_tool_file_replaces_the_built_in(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/ask_question.py": CLIENT_ASK})

    compile_app(app)

    tools = [tool for tool in read_manifest(app)["tools"] if tool["name"] == "ask_question"]
    assert len(tools) == 1
    assert tools[0]["source"] == "tools/ask_question.py"
    assert tools[0]["description"] == "Ask with a picker."
    assert "ui" in tools[0]["inputSchema"]["properties"]


def test_disable_tool_removes_the_built_in_ask_question(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/ask_question.py": DISABLE, "tools/note.py": NOTE})

    compile_app(app)

    manifest = read_manifest(app)
    assert set(tools_by_name(manifest)) == {"note"}
    assert manifest["disabled"] == ["ask_question"]
    assert "ask_question" not in load_agent(app).tools


def test_disabling_a_tool_that_is_no_framework_tool_is_only_a_warning(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/web_search.py": DISABLE, "tools/note.py": NOTE})

    compile_app(app)

    assert "web_search" not in tools_by_name(read_manifest(app))


def test_compiling_the_fixture_app_lists_its_four_tools(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "agent-tools-hitl"

    manifest = compile_app(fixture, write_manifest=False)

    tools = {tool.name: tool for tool in manifest.tools}
    assert set(tools) == {"ask_question", "note", "guarded_echo", "send_newsletter"}
    assert tools["ask_question"].source == "tools/ask_question.py"
    assert tools["guarded_echo"].needs_approval is True and tools["guarded_echo"].editable is False
    assert tools["send_newsletter"].needs_approval is True and tools["send_newsletter"].editable is True


# --- instructions -----------------------------------------------------------------------------------


def test_instructions_md_is_used_when_define_agent_has_no_instructions(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/note.py": NOTE, "instructions.md": "You help with notes.\n"})

    manifest = compile_app(app)

    assert manifest.agent.has_instructions is True
    assert load_agent(app).instructions == "You help with notes."


def test_define_agent_instructions_win_over_instructions_md(tmp_path: Path) -> None:
    agent = 'from eve_py import define_agent\n\nagent = define_agent(instructions="From agent.py.")\n'
    app = write_app(tmp_path / "shop", {"instructions.md": "From the file."}, agent=agent)

    assert load_agent(app).instructions == "From agent.py."


def test_an_app_without_instructions_has_none(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/note.py": NOTE})

    manifest = compile_app(app)

    assert manifest.agent.has_instructions is False
    assert load_agent(app).instructions is None


# --- diagnostics --------------------------------------------------------------------------------------


def test_a_non_tool_definition_export_is_rejected_with_the_public_shape_message(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/x.py": 'tool = {"description": "a dict", "execute": print}\n'})

    [error] = compile_errors(app)

    assert error.path == "tools/x.py"
    assert 'Expected the tool export "tool" from "tools/x.py" to match the public eve shape.' in error.message


def test_a_hand_made_class_exported_as_tool_is_rejected(tmp_path: Path) -> None:
    source = """
    class Tool:
        description = "Looks like a tool."
        client_resolved = False

        def execute(self) -> None:
            return None


    tool = Tool()
    """
    app = write_app(tmp_path / "shop", {"tools/fake.py": source})

    [error] = compile_errors(app)

    assert 'Expected the tool export "tool" from "tools/fake.py" to match the public eve shape.' in error.message


def test_a_tool_file_without_a_tool_attribute_is_rejected(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/empty.py": "helper = 1\n"})

    [error] = compile_errors(app)

    assert error.path == "tools/empty.py"
    assert 'Expected the tool export "tool" from "tools/empty.py" to match the public eve shape.' in error.message


def test_a_client_resolved_tool_with_an_executor_is_rejected(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/mixed.py": CLIENT_WITH_EXECUTOR})

    [error] = compile_errors(app)

    assert error.path == "tools/mixed.py"
    assert 'A client-resolved tool must not define an "execute" function' in error.message


def test_a_tool_that_is_not_client_resolved_and_has_no_executor_is_rejected(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/mixed.py": SERVER_WITHOUT_EXECUTOR})

    [error] = compile_errors(app)

    assert error.path == "tools/mixed.py"
    assert 'Expected the tool export "tool" from "tools/mixed.py" to match the public eve shape.' in error.message


def test_a_tool_file_that_raises_at_import_is_reported_with_the_error(tmp_path: Path) -> None:
    source = 'raise RuntimeError("database not configured")\n'
    app = write_app(tmp_path / "shop", {"tools/broken.py": source})

    [error] = compile_errors(app)

    assert error.path == "tools/broken.py"
    assert "tools/broken.py" in error.message
    assert "RuntimeError: database not configured" in error.message


def test_a_tool_file_with_a_syntax_error_is_reported(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/typo.py": "def broken(:\n    pass\n"})

    [error] = compile_errors(app)

    assert error.path == "tools/typo.py"
    assert "SyntaxError" in error.message


def test_a_define_tool_mistake_in_a_tool_file_is_reported_with_the_parameter_name(tmp_path: Path) -> None:
    source = """
    from eve_py import define_tool


    def refund(order_id: str, amount):
        return order_id


    tool = define_tool(description="Refund.", execute=refund)
    """
    app = write_app(tmp_path / "shop", {"tools/refund.py": source})

    [error] = compile_errors(app)

    assert error.path == "tools/refund.py"
    assert "ToolDefinitionError" in error.message
    assert "'amount'" in error.message


def test_two_files_giving_the_same_tool_name_are_rejected(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/billing/refund.py": REFUND, "tools/billing-refund.py": REFUND})

    [error] = compile_errors(app)

    assert "'billing-refund'" in error.message
    paths = {"tools/billing/refund.py", "tools/billing-refund.py"}
    assert error.path in paths
    [other] = paths - {error.path}
    assert other in error.message


@pytest.mark.parametrize("filename", ["bad name.py", "v1.2.py", "x" * 65 + ".py"])
def test_a_file_whose_path_is_no_valid_tool_name_is_rejected(tmp_path: Path, filename: str) -> None:
    app = write_app(tmp_path / "shop", {f"tools/{filename}": NOTE})

    [error] = compile_errors(app)

    assert error.path == f"tools/{filename}"
    assert "is not valid" in error.message


def test_an_agent_py_without_a_define_agent_export_is_rejected(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/note.py": NOTE}, agent='agent = {"model": "mock"}\n')

    [error] = compile_errors(app)

    assert error.path == "agent.py"
    assert 'Expected the export "agent" from "agent.py" to be the value returned by define_agent(...).' in error.message


def test_an_agent_py_that_fails_to_import_is_rejected(tmp_path: Path) -> None:
    agent = "from eve_py import define_agent\n\nagent = define_agent(max_steps=0)\n"
    app = write_app(tmp_path / "shop", {"tools/note.py": NOTE}, agent=agent)

    [error] = compile_errors(app)

    assert error.path == "agent.py"
    assert "max_steps must be at least 1" in error.message


def test_an_invalid_schema_on_a_rebuilt_definition_is_rejected(tmp_path: Path) -> None:
    source = """
    import dataclasses

    from eve_py import define_client_tool

    tool = dataclasses.replace(
        define_client_tool(description="Ask.", input_schema={"type": "object"}),
        output_schema={"type": "no-such-type"},
    )
    """
    app = write_app(tmp_path / "shop", {"tools/ask.py": source})

    [error] = compile_errors(app)

    assert error.path == "tools/ask.py"
    assert "invalid output schema" in error.message


def test_every_problem_in_every_file_is_reported_at_once(tmp_path: Path) -> None:
    app = write_app(
        tmp_path / "shop",
        {
            "tools/note.py": NOTE,
            "tools/a_dict.py": 'tool = {"description": "x"}\n',
            "tools/no_export.py": "x = 1\n",
            "tools/raises.py": 'raise ValueError("boom")\n',
            "tools/syntax.py": "tool = (\n",
            "tools/client_exec.py": CLIENT_WITH_EXECUTOR,
            "tools/no_exec.py": SERVER_WITHOUT_EXECUTOR,
            "tools/billing/refund.py": REFUND,
            "tools/billing-refund.py": REFUND,
            "tools/bad name.py": NOTE,
        },
        agent="agent = 42\n",
    )

    errors = by_path(compile_errors(app))

    assert set(errors) == {
        "agent.py",
        "tools/a_dict.py",
        "tools/no_export.py",
        "tools/raises.py",
        "tools/syntax.py",
        "tools/client_exec.py",
        "tools/no_exec.py",
        "tools/billing-refund.py",
        "tools/bad name.py",
    }
    assert "'billing-refund'" in errors["tools/billing-refund.py"][0].message
    shape = 'Expected the tool export "tool" from "{}" to match the public eve shape.'
    assert shape.format("tools/a_dict.py") in errors["tools/a_dict.py"][0].message
    assert shape.format("tools/no_export.py") in errors["tools/no_export.py"][0].message
    assert shape.format("tools/no_exec.py") in errors["tools/no_exec.py"][0].message
    assert 'A client-resolved tool must not define an "execute" function' in errors["tools/client_exec.py"][0].message
    assert "ValueError: boom" in errors["tools/raises.py"][0].message
    assert "SyntaxError" in errors["tools/syntax.py"][0].message


def test_compile_error_message_lists_every_error(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/one.py": "x = 1\n", "tools/two.py": "tool = 2\n"})

    with pytest.raises(CompileError) as caught:
        compile_app(app)

    text = str(caught.value)
    assert "2 error(s)" in text
    assert "tools/one.py" in text
    assert "tools/two.py" in text


def test_no_manifest_is_written_when_compiling_fails(tmp_path: Path) -> None:
    app = write_app(tmp_path / "shop", {"tools/note.py": NOTE, "tools/bad.py": "tool = None\n"})

    with pytest.raises(CompileError):
        compile_app(app)

    assert not manifest_path(app).exists()


def test_a_folder_without_agent_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(CompileError, match="no agent/ folder"):
        compile_app(tmp_path)
