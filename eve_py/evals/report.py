"""What an eval run leaves behind: the artifacts folder, the JSON summary and JUnit XML.

```
APP/.eve/evals/<timestamp>/
├── summary.json            counts, model, timing, exit code
├── results.jsonl           one line per eval: status, timing, failure, sessions
└── <eval id>/events.ndjson the eval's sessions' events, one JSON event per line
```

JSON keys are camelCase, like the rest of eve-py's wire formats. Each eval's line lists the
input requests its sessions parked and how each ended (`requests`: outcome and `answeredBy`).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from eve_py._json import JsonObject, JsonValue
from eve_py.evals._runner import EvalResult
from eve_py.protocol import AnyEvent, InputRequested, InputResolved, SessionStarted

__all__ = (
    "EvalRun",
    "junit_xml",
    "request_records",
    "result_record",
    "summary_record",
    "write_artifacts",
    "write_junit",
)


@dataclass(frozen=True, kw_only=True)
class EvalRun:
    """One `eve-py eval` run: what ran, against what, and how it went."""

    app_dir: Path
    model: str
    """The model's label (`mock`, `anthropic/claude-sonnet-4.6`, ...)."""
    backend: str
    """Where sessions ran (`in-process`, or a server URL)."""
    started_at: str
    """ISO 8601 UTC."""
    duration_s: float
    results: list[EvalResult]
    tags: tuple[str, ...] = ()

    def count(self, status: str) -> int:
        """How many evals ended with `status` (`passed`, `failed`, `errored`)."""
        return sum(1 for result in self.results if result.status == status)

    @property
    def ok(self) -> bool:
        """Whether every eval passed."""
        return all(result.status == "passed" for result in self.results)

    @property
    def exit_code(self) -> int:
        """0 when every eval passed, else 1."""
        return 0 if self.ok else 1


def summary_record(run: EvalRun) -> JsonObject:
    """The run's summary (the content of `summary.json`)."""
    return {
        "app": str(run.app_dir),
        "model": run.model,
        "backend": run.backend,
        "tags": list(run.tags),
        "startedAt": run.started_at,
        "durationS": round(run.duration_s, 3),
        "total": len(run.results),
        "passed": run.count("passed"),
        "failed": run.count("failed"),
        "errored": run.count("errored"),
        "status": "passed" if run.ok else "failed",
        "exitCode": run.exit_code,
        "evals": [result.id for result in run.results],
    }


def result_record(result: EvalResult) -> JsonObject:
    """One eval's line of `results.jsonl`."""
    definition = result.case.definition
    failure: JsonValue = None
    if result.failure is not None:
        failure = {
            "kind": result.failure.kind,
            "type": result.failure.error_type,
            "step": result.failure.step,
            "label": result.failure.label,
            "reason": result.failure.reason,
            "message": result.failure.message,
        }
    return {
        "id": result.id,
        "file": result.case.file,
        "description": definition.description,
        "tags": list(definition.tags),
        "metadata": dict(definition.metadata),
        "status": result.status,
        "durationS": round(result.duration_s, 3),
        "timeoutS": result.timeout_s,
        "steps": result.steps,
        "sessions": list(result.sessions),
        "eventCount": len(result.events),
        "events": f"{result.id}/events.ndjson",
        "requests": list[JsonValue](request_records(result.events, result.sessions)),
        "failure": failure,
    }


def request_records(events: Sequence[AnyEvent], sessions: Sequence[str] = ()) -> list[JsonObject]:
    """Each input request the events park, in the order asked, and how it ended.

    A record: `session` (its id, from `sessions`, when known), `requestId`, `toolName`, `kind`
    (eve-py's: `question`, `client-tool`, `tool-approval`, `elicitation`), `prompt`, `expiresAt`
    (None: no deadline), `outcome` (`answered`, `approved`, `denied`, `expired`, ...; None while
    still open) and `answeredBy` (who answered: `local` for `respond()`'s default, a token's name
    over HTTP, `link`; None when nobody did, as for an expired request).

    Args:
        events: The sessions' events, session after session (each opens with `session.started`).
        sessions: The sessions' ids, in the same order.
    """
    records: dict[tuple[int, str], JsonObject] = {}
    session = -1
    for event in events:
        if isinstance(event, SessionStarted):
            session += 1
        elif isinstance(event, InputRequested):
            for request in event.data.input_requests():
                records[(session, request.request_id)] = {
                    "session": sessions[session] if 0 <= session < len(sessions) else None,
                    "requestId": request.request_id,
                    "toolName": request.action.tool_name,
                    "kind": request.kind,
                    "prompt": request.prompt,
                    "expiresAt": request.expires_at,
                    "outcome": None,
                    "answeredBy": None,
                }
        elif isinstance(event, InputResolved):
            for resolution in event.data.resolutions:
                record = records.get((session, resolution.request_id))
                if record is not None:
                    record["outcome"] = resolution.outcome
                    record["answeredBy"] = resolution.answered_by
    return list(records.values())


def write_artifacts(run: EvalRun, root: Path | None = None) -> Path:
    """Write the run's artifacts into a new folder `<root>/<timestamp>/` and return it.

    Args:
        run: The finished run.
        root: Where run folders go; defaults to `APP/.eve/evals`.
    """
    root = root if root is not None else run.app_dir / ".eve" / "evals"
    root.mkdir(parents=True, exist_ok=True)
    stamp = datetime.fromisoformat(run.started_at.replace("Z", "+00:00")).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    folder = root / stamp
    attempt = 1
    while True:
        try:
            folder.mkdir()
            break
        except FileExistsError:
            attempt += 1
            folder = root / f"{stamp}-{attempt}"
    _write_json(folder / "summary.json", {**summary_record(run), "artifacts": str(folder)})
    with (folder / "results.jsonl").open("w", encoding="utf-8") as lines:
        for result in run.results:
            lines.write(json.dumps(result_record(result), ensure_ascii=False) + "\n")
    for result in run.results:
        events_file = folder / result.id / "events.ndjson"
        events_file.parent.mkdir(parents=True, exist_ok=True)
        with events_file.open("w", encoding="utf-8") as lines:
            for event in result.events:
                lines.write(event.line().decode("utf-8"))
    return folder


def junit_xml(run: EvalRun) -> str:
    """The run as JUnit XML: one `<testsuite>` for the app, one `<testcase>` per eval.

    A failed check or a timeout is a `<failure>`, anything else raised an `<error>`; the full
    report (step, reason, events) is the element's text.
    """
    suite_name = run.app_dir.resolve().name
    suites = ET.Element(
        "testsuites",
        name="eve-py eval",
        tests=str(len(run.results)),
        failures=str(run.count("failed")),
        errors=str(run.count("errored")),
        time=f"{run.duration_s:.3f}",
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=suite_name,
        tests=str(len(run.results)),
        failures=str(run.count("failed")),
        errors=str(run.count("errored")),
        skipped="0",
        time=f"{run.duration_s:.3f}",
        timestamp=run.started_at,
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (("model", run.model), ("backend", run.backend), ("tags", ",".join(run.tags))):
        ET.SubElement(properties, "property", name=name, value=value)
    for result in run.results:
        group, _, name = result.id.rpartition("/")
        case = ET.SubElement(
            suite,
            "testcase",
            classname=".".join(part for part in (suite_name, group.replace("/", ".")) if part),
            name=name,
            file=result.case.file,
            time=f"{result.duration_s:.3f}",
        )
        failure = result.failure
        if failure is not None:
            element = ET.SubElement(
                case,
                "error" if failure.kind == "error" else "failure",
                message=_xml_safe(failure.reason.splitlines()[0] if failure.reason else failure.error_type),
                type=failure.error_type,
            )
            element.text = _xml_safe(failure.message)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(run: EvalRun, path: Path) -> None:
    """Write `junit_xml(run)` to `path` (its folder is created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(junit_xml(run), encoding="utf-8")


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_safe(text: str) -> str:
    """`text` without the characters XML 1.0 cannot hold (control characters)."""
    return _NOT_XML.sub("\ufffd", text)


def _write_json(path: Path, data: JsonObject) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
