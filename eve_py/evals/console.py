"""The terminal output of `eve-py eval`: a live progress bar, a line per finished eval (with a line
per input request it parked: how it ended and who answered), a summary table and each failure's
full report. Uses `rich` (the `evals` extra: `pip install 'eve-py[evals]'`).
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from eve_py._json import JsonObject
from eve_py.evals._discovery import EvalCase
from eve_py.evals._runner import EvalResult
from eve_py.evals.report import EvalRun, request_records

__all__ = ("ConsoleReporter", "print_listing", "request_line")

_STYLE = {"passed": "green", "failed": "red", "errored": "yellow"}
_MARK = {"passed": "PASS", "failed": "FAIL", "errored": "ERROR"}


class ConsoleReporter:
    """Shows a run's progress live, then its summary. Use as a context manager around the run.

    Args:
        console: Where to write (a terminal gets an animated bar; a file or pipe plain lines).
        total: How many evals will run.
    """

    def __init__(self, console: Console, total: int) -> None:
        self.console = console
        self._running: list[str] = []
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]evals"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}", markup=False),
            console=console,
            transient=True,
        )
        self._task: TaskID = self._progress.add_task("", total=total)

    def __enter__(self) -> ConsoleReporter:
        self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()

    def started(self, case: EvalCase) -> None:
        """An eval started."""
        self._running.append(case.id)
        self._progress.update(self._task, description=self._describe())

    def finished(self, result: EvalResult) -> None:
        """An eval ended: print its line and advance the bar."""
        if result.id in self._running:
            self._running.remove(result.id)
        line = Text()
        line.append(f"{_MARK[result.status]:<5}", style=f"bold {_STYLE[result.status]}")
        line.append(f" {result.id}")
        line.append(f"  {result.duration_s:.2f} s", style="dim")
        if result.failure is not None:
            line.append(f"  step {result.failure.step} {result.failure.label}", style=_STYLE[result.status])
        self._progress.console.print(line, soft_wrap=True)
        for record in request_records(result.events, result.sessions):
            self._progress.console.print(request_line(record), soft_wrap=True)
        self._progress.update(self._task, advance=1, description=self._describe())

    def summary(self, run: EvalRun, *, artifacts: Path | None = None, junit: Path | None = None) -> None:
        """Print the summary table, every failure's report and the closing counts."""
        table = Table(title=f"eve-py eval {run.app_dir} (model {run.model}, {run.backend})", title_justify="left")
        table.add_column("eval")
        table.add_column("status")
        table.add_column("steps", justify="right")
        table.add_column("time", justify="right")
        table.add_column("detail", overflow="fold")
        for result in run.results:
            detail = ""
            if result.failure is not None:
                detail = f"step {result.failure.step} {result.failure.label}: {result.failure.reason.splitlines()[0]}"
            table.add_row(
                Text(result.id),
                Text(result.status, style=_STYLE[result.status]),
                str(result.steps),
                f"{result.duration_s:.2f} s",
                Text(detail[:300]),
            )
        self.console.print(table)
        for result in run.results:
            if result.failure is not None:
                self.console.rule(Text(f"{result.id}: {result.status}", style=_STYLE[result.status]))
                self.console.print(Text(result.failure.message), soft_wrap=True)
        counts = f"{run.count('passed')} passed, {run.count('failed')} failed, {run.count('errored')} errored"
        self.console.print(
            Text(f"{counts} in {run.duration_s:.2f} s", style="green" if run.ok else "bold red"), soft_wrap=True
        )
        if artifacts is not None:
            self.console.print(Text(f"artifacts: {artifacts}", style="dim"), soft_wrap=True)
        if junit is not None:
            self.console.print(Text(f"junit: {junit}", style="dim"), soft_wrap=True)

    def _describe(self) -> str:
        if not self._running:
            return ""
        shown = ", ".join(self._running[:3])
        return shown + (f" +{len(self._running) - 3}" if len(self._running) > 3 else "")


def request_line(record: JsonObject) -> Text:
    """One parked request of an eval (a record of `report.request_records`) as an indented line.

    `      publish mock-call-0-0 [tool-approval]: approved by alice`; an expired request says
    `expired: nobody answered by <expiresAt>`, one the eval left unanswered `still open`.
    """
    outcome, who = record.get("outcome"), record.get("answeredBy")
    if outcome is None:
        ending, style = "still open", "dim"
    elif outcome == "expired":
        ending, style = f"expired: nobody answered by {record.get('expiresAt') or 'its deadline'}", "yellow"
    else:
        ending, style = str(outcome) + (f" by {who}" if who else ""), "dim"
    line = Text(f"      {record.get('toolName')} {record.get('requestId')} [{record.get('kind')}]: ", style="dim")
    line.append(ending, style=style)
    return line


def print_listing(console: Console, cases: list[EvalCase]) -> None:
    """Print the evals `--list` selects: id, tags, timeout and description."""
    table = Table(title=f"{len(cases)} eval(s)", title_justify="left")
    table.add_column("eval")
    table.add_column("tags")
    table.add_column("file")
    table.add_column("description", overflow="fold")
    for case in cases:
        table.add_row(
            Text(case.id),
            Text(", ".join(case.definition.tags)),
            Text(case.file),
            Text(case.definition.description or ""),
        )
    console.print(table)
