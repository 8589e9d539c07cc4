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
