"""Helper modules in `_`-prefixed files or folders under `agent/tools/` are not tools."""

from __future__ import annotations

from pathlib import Path

from eve_py import compile_app


def test_files_in_underscore_folders_are_helpers_not_tools(tmp_path: Path) -> None:
    tools = tmp_path / "agent" / "tools"
    (tools / "_lib").mkdir(parents=True)
    (tools / "_lib" / "util.py").write_text("VALUE = 1\n", encoding="utf-8")
    (tools / "_helpers.py").write_text("VALUE = 2\n", encoding="utf-8")
    (tools / "note.py").write_text(
        "from eve_py import define_tool\n\n\n"
        "def note(text: str) -> str:\n    return text\n\n\n"
        'tool = define_tool(description="Note.", execute=note)\n',
        encoding="utf-8",
    )

    manifest = compile_app(tmp_path)

    assert [tool.name for tool in manifest.tools] == ["ask_question", "note"]


def test_a_rebuilt_definition_with_fields_of_the_wrong_type_is_a_diagnostic_and_a_resolution_error(
    tmp_path: Path,
) -> None:
    import dataclasses

    import pytest

    from eve_py import CompileError, ToolResolutionError, define_tool, resolve_tool

    tools = tmp_path / "agent" / "tools"
    tools.mkdir(parents=True)
    (tools / "bad.py").write_text(
        "import dataclasses\nfrom eve_py import define_tool\n\n\n"
        "def act() -> str:\n    return 'x'\n\n\n"
        'tool = dataclasses.replace(define_tool(description="Act.", execute=act), description=None, '
        'needs_approval="yes")\n',
        encoding="utf-8",
    )

    with pytest.raises(CompileError) as caught:
        compile_app(tmp_path)

    messages = [d.message for d in caught.value.diagnostics if d.code == "E110"]
    assert any("Its description must be a non-empty string." in m for m in messages)
    assert any("Its approval must be never(), always(), once(), a bool, or a callable" in m for m in messages)
    bad = dataclasses.replace(define_tool(description="Act.", execute=lambda: "x"), needs_approval="yes")  # type: ignore[arg-type]
    with pytest.raises(ToolResolutionError, match="approval must be never"):
        resolve_tool(bad, path="tools/bad.py")
