"""Tool files that abort or never finish importing become diagnostics naming the file.

A file may raise a `BaseException` that is no `Exception` at its top level (`CancelledError`,
`KeyboardInterrupt`, `SystemExit`), or never finish importing (a busy loop, a long sleep). The
compiler reports each one and still reports every other problem of the app.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from eve_py import CompileError, Diagnostic, compile_app, load_agent
from eve_py.errors import UsageError
from tests.compiler.test_compiler_app import NOTE, write_app

ABORTING = {
    "tools/cancelled.py": "import asyncio\n\nraise asyncio.CancelledError()\n",
    "tools/interrupted.py": 'raise KeyboardInterrupt("from a tool file")\n',
    "tools/exits.py": "import sys\n\nsys.exit(3)\n",
    "tools/not_a_tool.py": 'tool = {"description": "a dict"}\n',
    "tools/note.py": NOTE,
}


@pytest.fixture
def release(tmp_path: Path) -> Iterator[Path]:
    """A flag file the hanging fixtures wait for; created after the test so their threads end."""
    flag = tmp_path / "release"
    yield flag
    flag.touch()


def busy_until(flag: Path) -> str:
    """A tool file that spins on the CPU (never sleeping) until `flag` exists."""
    return f"import os\n\nwhile not os.path.exists({str(flag)!r}):\n    pass\n"


def sleeps_until(flag: Path) -> str:
    """A tool file blocked in sleeps until `flag` exists."""
    return f"import os\nimport time\n\nwhile not os.path.exists({str(flag)!r}):\n    time.sleep(0.05)\n"


def by_path(error: CompileError) -> dict[str, Diagnostic]:
    return {d.path: d for d in error.diagnostics}


def test_base_exceptions_at_import_are_diagnostics_and_the_other_problems_are_still_reported(tmp_path: Path) -> None:
    app = write_app(tmp_path / "app", ABORTING)

    with pytest.raises(CompileError) as caught:
        compile_app(app)

    found = by_path(caught.value)
    assert sorted(found) == ["tools/cancelled.py", "tools/exits.py", "tools/interrupted.py", "tools/not_a_tool.py"]
    assert found["tools/cancelled.py"].code == "E101"
    assert 'Failed to import the tool file "tools/cancelled.py": CancelledError' in found["tools/cancelled.py"].message
    assert found["tools/interrupted.py"].message.endswith("KeyboardInterrupt: from a tool file")
    assert "SystemExit: 3" in found["tools/exits.py"].message
    assert found["tools/exits.py"].hint == "see exits.py:3"
    assert found["tools/not_a_tool.py"].code == "E103"
    assert "4 error(s)" in str(caught.value)


def test_an_agent_py_raising_a_base_exception_is_reported_as_e201(tmp_path: Path) -> None:
    agent = "import asyncio\n\nraise asyncio.CancelledError('agent')\n"
    app = write_app(tmp_path / "app", {"tools/not_a_tool.py": "tool = 1\n"}, agent=agent)

    with pytest.raises(CompileError) as caught:
        compile_app(app)

    found = by_path(caught.value)
    assert found["agent.py"].code == "E201"
    assert found["agent.py"].message == "agent.py failed to import: CancelledError: agent"
    assert found["tools/not_a_tool.py"].code == "E103"


@pytest.mark.timeout(20)
@pytest.mark.parametrize("hang", [busy_until, sleeps_until], ids=["busy-loop", "sleep"])
def test_a_tool_file_that_never_finishes_importing_is_reported_after_the_timeout(
    tmp_path: Path, release: Path, hang: Callable[[Path], str]
) -> None:
    files = {"tools/hangs.py": hang(release), "tools/not_a_tool.py": "tool = 1\n", "tools/note.py": NOTE}
    app = write_app(tmp_path / "app", files)

    started = time.monotonic()
    with pytest.raises(CompileError) as caught:
        compile_app(app, import_timeout_s=0.3)

    assert time.monotonic() - started < 10
    found = by_path(caught.value)
    assert sorted(found) == ["tools/hangs.py", "tools/not_a_tool.py"]
    assert found["tools/hangs.py"].code == "E111"
    assert found["tools/hangs.py"].message == (
        'The tool file "tools/hangs.py" did not finish importing within 0.3 s; eve-py stopped waiting for it.'
    )
    assert found["tools/hangs.py"].hint is not None
    assert "--import-timeout" in found["tools/hangs.py"].hint
    assert not (app / ".eve" / "build" / "manifest.json").exists()


@pytest.mark.timeout(20)
def test_an_agent_py_that_never_finishes_importing_is_reported_as_e202(tmp_path: Path, release: Path) -> None:
    app = write_app(tmp_path / "app", {"tools/note.py": NOTE}, agent=busy_until(release))

    with pytest.raises(CompileError) as caught:
        compile_app(app, import_timeout_s=0.3)

    [diagnostic] = caught.value.diagnostics
    assert (diagnostic.path, diagnostic.code) == ("agent.py", "E202")
    assert "did not finish importing within 0.3 s" in diagnostic.message


@pytest.mark.timeout(20)
def test_load_agent_reports_a_hanging_tool_file_the_same_way(tmp_path: Path, release: Path) -> None:
    app = write_app(tmp_path / "app", {"tools/hangs.py": sleeps_until(release), "tools/note.py": NOTE})

    with pytest.raises(CompileError) as caught:
        load_agent(app, import_timeout_s=0.3)

    assert [(d.path, d.code) for d in caught.value.diagnostics] == [("tools/hangs.py", "E111")]


def test_load_agent_reports_base_exceptions_at_import_as_compile_errors(tmp_path: Path) -> None:
    app = write_app(tmp_path / "app", ABORTING)

    with pytest.raises(CompileError) as caught:
        load_agent(app)

    assert {d.path for d in caught.value.diagnostics if d.code == "E101"} == {
        "tools/cancelled.py",
        "tools/exits.py",
        "tools/interrupted.py",
    }


@pytest.mark.timeout(20)
def test_the_timeout_comes_from_eve_import_timeout_when_not_passed(
    tmp_path: Path, release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVE_IMPORT_TIMEOUT", "0.25")
    app = write_app(tmp_path / "app", {"tools/hangs.py": busy_until(release)})

    with pytest.raises(CompileError) as caught:
        compile_app(app)

    assert "within 0.25 s" in caught.value.diagnostics[0].message


@pytest.mark.parametrize("value", ["soon", "0", "-1", "nan", "inf"])
def test_a_bad_eve_import_timeout_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("EVE_IMPORT_TIMEOUT", value)
    app = write_app(tmp_path / "app", {"tools/note.py": NOTE})

    with pytest.raises(UsageError, match="EVE_IMPORT_TIMEOUT"):
        compile_app(app)


@pytest.mark.parametrize("value", [0, -1.0, float("nan")])
def test_a_bad_import_timeout_argument_is_a_usage_error(tmp_path: Path, value: float) -> None:
    app = write_app(tmp_path / "app", {"tools/note.py": NOTE})

    with pytest.raises(UsageError, match="import_timeout_s"):
        compile_app(app, import_timeout_s=value)


def test_files_that_import_in_time_compile_as_before_with_a_small_timeout(tmp_path: Path) -> None:
    app = write_app(tmp_path / "app", {"tools/note.py": NOTE})

    manifest = compile_app(app, import_timeout_s=5)

    assert "note" in [tool.name for tool in manifest.tools]


def test_a_parameter_type_with_no_json_schema_names_the_parameter_and_what_to_use(tmp_path: Path) -> None:
    write_app(
        tmp_path,
        {
            "tools/sock.py": (
                "import socket\n\nfrom eve_py import define_tool\n\n\n"
                "def connect(host: str, conn: socket.socket) -> str:\n    return host\n\n\n"
                'tool = define_tool(description="Connect.", execute=connect)\n'
            )
        },
    )
    with pytest.raises(CompileError) as caught:
        compile_app(tmp_path)
    [found] = [d for d in caught.value.diagnostics if d.path == "tools/sock.py"]
    assert (
        "the executor connect() takes parameter 'conn' of type socket.socket, which has no JSON Schema" in found.message
    )
    assert "arbitrary_types_allowed" not in found.message and "errors.pydantic.dev" not in found.message
