"""How `chat` and `run` show events: streamed text as it arrives, once; tool results; failures."""

from __future__ import annotations

import pytest

from eve_py.cli.main import _Renderer
from eve_py.events import new_event


def test_streamed_text_is_shown_as_it_arrives_and_not_again_when_the_step_completes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    render = _Renderer()
    step = {"turnId": "t1", "stepIndex": 0}

    render(new_event("message.delta", {**step, "deltaIndex": 0, "kind": "text", "text": "Hel"}))
    render(new_event("message.delta", {**step, "deltaIndex": 1, "kind": "tool-call", "text": '{"a"', "callId": "c"}))
    render(new_event("message.delta", {**step, "deltaIndex": 2, "kind": "text", "text": "lo"}))
    render(new_event("message.completed", {**step, "text": "Hello"}))
    render(new_event("message.completed", {"turnId": "t1", "stepIndex": 1, "text": "Bye"}))

    assert capsys.readouterr().out == "agent > Hello\nagent > Bye\n"


def test_tool_results_and_failures_are_shown(capsys: pytest.CaptureFixture[str]) -> None:
    render = _Renderer()

    render(new_event("action.result", {"toolName": "note", "output": {"ok": True}, "isError": False}))
    render(new_event("action.result", {"toolName": "pay", "output": "denied", "isError": True}))
    render(new_event("turn.failed", {"turnId": "t1", "error": {"code": "MODEL_ERROR", "message": "boom"}}))

    captured = capsys.readouterr()
    assert captured.out == '  <- note: {"ok": true}\n  x pay: "denied"\n'
    assert captured.err == "turn failed: boom\n"
