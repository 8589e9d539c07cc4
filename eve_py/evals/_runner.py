"""Run evals concurrently, each with its own backend and time limit, and collect their results.

An eval *passes* when its test returns; *fails* when a check fails (`EvalAssertionError` or a
plain `assert`) or it runs out of time; *errors* when anything else is raised (a bug in the
eval, an answer the session rejected, ...). `run_evals` never raises for an eval's outcome.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, TypeAlias

import anyio

from eve_py.errors import EvalAssertionError
from eve_py.evals._backend import EvalBackend
from eve_py.evals._definition import DEFAULT_MAX_CONCURRENCY, DEFAULT_TIMEOUT_S
from eve_py.evals._discovery import EvalCase
from eve_py.evals._driver import EvalDriver
from eve_py.protocol import AnyEvent, TurnFailed

__all__ = ("EvalFailure", "EvalResult", "EvalStatus", "FailureKind", "run_eval", "run_evals")

EvalStatus: TypeAlias = Literal["passed", "failed", "errored"]
FailureKind: TypeAlias = Literal["assertion", "timeout", "error"]


@dataclass(frozen=True, kw_only=True)
class EvalFailure:
    """Why an eval did not pass."""

    kind: FailureKind
    """`assertion` (a check failed), `timeout`, or `error` (something else was raised)."""
    reason: str
    """One paragraph: what went wrong."""
    message: str
    """The full report: eval, step, reason and the relevant events (and a traceback for errors)."""
    step: int
    """The step that was running, or had just run (0: before the first)."""
    label: str
    """That step's call, e.g. `respond_all('approve')`."""
    error_type: str
    """The exception's class name (`EvalAssertionError`, `TimeoutError`, ...)."""


@dataclass(frozen=True, kw_only=True)
class EvalResult:
    """The outcome of one eval."""

    case: EvalCase
    status: EvalStatus
    duration_s: float
    timeout_s: float
    steps: int
    """How many driver steps ran."""
    sessions: list[str]
    """The sessions it created, in order."""
    events: list[AnyEvent]
    """Every event of those sessions, session after session."""
    failure: EvalFailure | None = None

    @property
    def id(self) -> str:
        """The eval's id."""
        return self.case.id


def _model_failure(driver: EvalDriver, failure: EvalFailure) -> EvalFailure:
    """An assertion that failed because the model itself failed (outage, bad key) is an error of
    the run, not a regression of the app: report it as `errored`, naming the model's failure."""
    for event in driver.events:
        if isinstance(event, TurnFailed) and event.data.code == "MODEL_ERROR":
            reason = f"the model failed: {event.data.message}"
            return replace(failure, kind="error", reason=reason, message=f"{reason}\n{failure.message}")
    return failure


async def run_eval(case: EvalCase, backend: EvalBackend, *, timeout_s: float) -> EvalResult:
    """Run one eval against `backend` within `timeout_s` seconds and report how it went."""
    driver = EvalDriver(backend, eval_id=case.id)
    failure: EvalFailure | None = None
    started = time.perf_counter()
    try:
        with anyio.move_on_after(timeout_s) as scope:
            await case.definition.test(driver)
        if scope.cancelled_caught:
            reason = f"timed out after {timeout_s:g} s"
            failure = EvalFailure(
                kind="timeout",
                reason=reason,
                message=driver.failure_report(reason),
                step=driver.step,
                label=driver.label,
                error_type="TimeoutError",
            )
    except EvalAssertionError as exc:
        failure = EvalFailure(
            kind="assertion",
            reason=exc.reason,
            message=str(exc),
            step=exc.step,
            label=exc.label,
            error_type=type(exc).__name__,
        )
    except AssertionError as exc:
        reason = f"assert failed{_where(exc, case.path)}" + (f": {exc}" if str(exc) else "")
        failure = EvalFailure(
            kind="assertion",
            reason=reason,
            message=driver.failure_report(reason),
            step=driver.step,
            label=driver.label,
            error_type=type(exc).__name__,
        )
    except Exception as exc:
        reason = f"{type(exc).__name__}{_where(exc, case.path)}: {exc}"
        trace = "".join(traceback.format_exception(exc)).rstrip()
        failure = EvalFailure(
            kind="error",
            reason=reason,
            message=f"{driver.failure_report(reason)}\n  traceback:\n" + _indent(trace, "    "),
            step=driver.step,
            label=driver.label,
            error_type=type(exc).__name__,
        )
    if failure is not None and failure.kind == "assertion":
        failure = _model_failure(driver, failure)
    status: EvalStatus = "passed" if failure is None else ("errored" if failure.kind == "error" else "failed")
    return EvalResult(
        case=case,
        status=status,
        duration_s=time.perf_counter() - started,
        timeout_s=timeout_s,
        steps=driver.step,
        sessions=driver.sessions,
        events=driver.all_events,
        failure=failure,
    )


async def run_evals(
    cases: Sequence[EvalCase],
    make_backend: Callable[[], EvalBackend],
    *,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    on_start: Callable[[EvalCase], None] | None = None,
    on_finish: Callable[[EvalResult], None] | None = None,
) -> list[EvalResult]:
    """Run evals, at most `max_concurrency` at once, each on a backend of its own.

    Args:
        cases: The evals to run.
        make_backend: Called once per eval for the backend its sessions run on.
        max_concurrency: How many evals run at once.
        timeout_s: The time limit of an eval that sets none itself.
        on_start: Called when an eval starts.
        on_finish: Called with each result as soon as its eval ends.

    Returns:
        The results, in the order of `cases`.
    """
    limiter = anyio.CapacityLimiter(max_concurrency)
    results: dict[int, EvalResult] = {}

    async def run_one(index: int, case: EvalCase) -> None:
        async with limiter:
            if on_start is not None:
                on_start(case)
            result = await run_eval(case, make_backend(), timeout_s=case.definition.timeout_s or timeout_s)
            results[index] = result
            if on_finish is not None:
                on_finish(result)

    async with anyio.create_task_group() as group:
        for index, case in enumerate(cases):
            group.start_soon(run_one, index, case)
    return [results[index] for index in range(len(cases))]


def _where(exc: BaseException, path: Path) -> str:
    """` at <file>:<line>` for the innermost frame of `exc` in the eval file, if any."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == path]
    return f" at {path.name}:{frames[-1].lineno}" if frames else ""


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())
