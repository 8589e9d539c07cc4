"""How `chat` and `run` show events: streamed text as it arrives, once; tool results; failures."""

from __future__ import annotations

import pytest

from eve_py.cli._render import Renderer as _Renderer
from eve_py.protocol import new_event
from eve_py.protocol.payloads import (
    ActionInputAppendedData,
    ActionLogData,
    ActionProgressData,
    ActionResultData,
    MessageAppendedData,
    MessageCompletedData,
    ToolResultAction,
    TurnFailedData,
)

STEP = {"sequence": 0, "turn_id": "t1", "step_index": 0}


def test_streamed_text_is_shown_as_it_arrives_and_not_again_when_the_step_completes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    render = _Renderer()

    render(new_event(MessageAppendedData(**STEP, message_delta="Hel")))
    render(new_event(ActionInputAppendedData(**STEP, call_id="c", tool_name="note", input_text_delta='{"a"')))
    render(new_event(MessageAppendedData(**STEP, message_delta="lo")))
    render(new_event(MessageCompletedData(**STEP, finish_reason="stop", message="Hello")))
    render(new_event(MessageCompletedData(**{**STEP, "step_index": 1}, finish_reason="stop", message="Bye")))

    assert capsys.readouterr().out == "agent > Hello\nagent > Bye\n"


def test_tool_results_and_failures_are_shown(capsys: pytest.CaptureFixture[str]) -> None:
    render = _Renderer()

    ok = ToolResultAction(call_id="c1", tool_name="note", output={"ok": True})
    denied = ToolResultAction(call_id="c2", tool_name="pay", output="denied", is_error=True)
    render(new_event(ActionResultData(**STEP, result=ok, status="completed")))
    render(new_event(ActionResultData(**STEP, result=denied, status="rejected")))
    render(new_event(TurnFailedData(sequence=0, turn_id="t1", code="MODEL_ERROR", message="boom")))

    captured = capsys.readouterr()
    assert captured.out == '  <- note: {"ok": true}\n  x pay: "denied"\n'
    assert captured.err == "turn failed: boom\n"


def test_a_tools_progress_and_log_entries_are_side_lines(capsys: pytest.CaptureFixture[str]) -> None:
    render = _Renderer()
    call = {**STEP, "tool_call_id": "c1", "tool_name": "index"}

    render(new_event(ActionProgressData(**call, progress=1, total=4, message="listing")))
    render(new_event(ActionProgressData(**call, progress=0.5)))
    render(new_event(ActionLogData(**call, level="info", data={"folder": "docs"}, logger="indexer")))
    render(new_event(ActionLogData(**call, level="warning", data="one file skipped")))

    assert capsys.readouterr().out == (
        "  .. index 1/4: listing\n"
        "  .. index 0.5\n"
        '  .. index info indexer: {"folder": "docs"}\n'
        "  .. index warning: one file skipped\n"
    )
