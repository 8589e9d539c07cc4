"""docs/tracing.md's console example runs and prints the spans the page lists, linked as it says."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import REPO

PAGE = REPO / "docs" / "tracing.md"


def printed_spans(text: str) -> list[dict[str, Any]]:
    """The JSON spans `ConsoleSpanExporter` printed, one after another, in `text`."""
    decoder, found, at = json.JSONDecoder(), [], text.find("{")
    while at != -1:
        span, end = decoder.raw_decode(text, at)
        found.append(span)
        at = text.find("{", end)
    return found


def test_the_console_example_prints_the_turns_spans_and_the_link_from_resume_to_park(tmp_path: Path) -> None:
    example = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)[0]
    script = tmp_path / "example.py"
    script.write_text(example, encoding="utf-8")

    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False)

    assert done.returncode == 0, done.stderr
    *spans_text, last = done.stdout.rstrip().rsplit("\n", 1)
    assert last == "Sunny in Lyon."
    spans = printed_spans("".join(spans_text))
    assert [s["name"] for s in spans] == [
        "chat mock",
        "invoke_agent travel",
        "chat mock",
        "execute_tool weather",
        "chat mock",
        "invoke_agent travel",
    ]
    parking, resumed = spans[1], spans[5]
    assert [e["name"] for e in parking["events"]] == ["eve.park"]
    assert [e["name"] for e in resumed["events"]] == ["eve.resume"]
    assert resumed["events"][0]["attributes"]["eve.request.answered_by"] == ["alice"]
    [link] = resumed["links"]
    assert link["context"]["span_id"] == parking["context"]["span_id"]
    assert resumed["context"]["trace_id"] != parking["context"]["trace_id"]
    assert resumed["resource"]["attributes"]["service.name"] == "travel-agent"
