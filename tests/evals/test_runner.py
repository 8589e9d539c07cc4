"""`run_evals`: concurrency, time limits, and how passes, failed checks and errors are reported."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from eve_py.agent import Agent
from eve_py.evals import EvalCase, EvalDriver, EvalResult, InProcessBackend, define_eval, discover_evals, run_evals
from eve_py.models._base import Model
from tests.evals.conftest import WriteEval

pytestmark = pytest.mark.anyio


def _cases(app: Path, *ids: str) -> list[EvalCase]:
    by_id = {case.id: case for case in discover_evals(app).cases}
    return [by_id[eval_id] for eval_id in ids]


async def test_evals_run_at_most_max_concurrency_at_once_and_results_keep_case_order(
    hitl_agent: Agent, hitl_model: Model, tmp_path: Path
) -> None:
    running = 0
    peak = 0
    two_running = anyio.Event()

    async def test(t: EvalDriver) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        if running == 2:
            two_running.set()
        await two_running.wait()
        await t.send("hello")
        running -= 1

    cases = [
        EvalCase(
            id=f"c/{index}",
            file=f"evals/c/{index}_eval.py",
            path=tmp_path / f"{index}_eval.py",
            definition=define_eval(test=test),
        )
        for index in range(5)
    ]
    started: list[str] = []
    finished: list[str] = []

    def on_finish(result: EvalResult) -> None:
        finished.append(result.id)

    with anyio.fail_after(10):
        results = await run_evals(
            cases,
            lambda: InProcessBackend(hitl_agent, hitl_model),
            max_concurrency=2,
            on_start=lambda case: started.append(case.id),
            on_finish=on_finish,
        )

    assert peak == 2
    assert [result.id for result in results] == [case.id for case in cases]
    assert sorted(started) == sorted(finished) == sorted(case.id for case in cases)
    assert all(result.status == "passed" and result.failure is None for result in results)
    assert all(len(result.sessions) == 1 and result.steps == 1 for result in results)


async def test_an_eval_that_runs_out_of_time_fails_with_the_step_it_was_on(
    hitl_agent: Agent, hitl_model: Model, app_copy: Path, write_eval: WriteEval
) -> None:
    write_eval(
        "slow/stuck_eval.py",
        """
        import anyio

        from eve_py.evals import define_eval


        async def test(t):
            await t.send("help me pick a template")
            t.waiting()
            await anyio.Event().wait()  # never set


        evaluation = define_eval(test=test, timeout_s=0.05)
        """,
    )

    with anyio.fail_after(10):
        [result] = await run_evals(_cases(app_copy, "slow/stuck"), lambda: InProcessBackend(hitl_agent, hitl_model))

    assert result.status == "failed"
    assert result.timeout_s == 0.05
    failure = result.failure
    assert failure is not None
    assert (failure.kind, failure.error_type, failure.step, failure.label) == (
        "timeout",
        "TimeoutError",
        2,
        "waiting()",
    )
    assert failure.message.startswith("eval 'slow/stuck' failed at step 2 `waiting()`: timed out after 0.05 s")
    assert "turn.waiting" in failure.message
    assert [event.type for event in result.events][-1] == "turn.waiting"


async def test_a_plain_assert_fails_the_eval_and_names_its_line(
    hitl_agent: Agent, hitl_model: Model, app_copy: Path, write_eval: WriteEval
) -> None:
    write_eval(
        "plain/assert_eval.py",
        """
        from eve_py.evals import define_eval


        async def test(t):
            turn = await t.send("hello")
            assert turn.status == "waiting", f"status was {turn.status}"


        evaluation = define_eval(test=test)
        """,
    )

    [result] = await run_evals(_cases(app_copy, "plain/assert"), lambda: InProcessBackend(hitl_agent, hitl_model))

    assert result.status == "failed"
    assert result.failure is not None
    assert result.failure.kind == "assertion"
    assert result.failure.reason == "assert failed at assert_eval.py:7: status was completed"
    assert "failed at step 1 `send('hello')`" in result.failure.message


async def test_an_exception_errors_the_eval_with_its_traceback_and_the_running_step(
    hitl_agent: Agent, hitl_model: Model, app_copy: Path, write_eval: WriteEval
) -> None:
    write_eval(
        "broken/rejected_answer_eval.py",
        """
        from eve_py.evals import define_eval


        async def test(t):
            await t.send("help me pick a template")
            [request] = t.expect_input_requests()
            await t.respond(request, value={"pickedIds": ["tpl_purple"]})


        evaluation = define_eval(test=test)
        """,
    )

    [result] = await run_evals(
        _cases(app_copy, "broken/rejected_answer"), lambda: InProcessBackend(hitl_agent, hitl_model)
    )

    assert result.status == "errored"
    failure = result.failure
    assert failure is not None
    assert (failure.kind, failure.error_type, failure.step) == ("error", "InvalidAnswerError", 3)
    assert failure.label.startswith("respond('mock-call-0-0', value=")
    assert failure.reason.startswith("InvalidAnswerError at rejected_answer_eval.py:8: Answer to request")
    assert "names options that are not offered: ['tpl_purple']" in failure.reason
    assert "traceback:" in failure.message and "rejected_answer_eval.py" in failure.message


async def test_a_failed_check_reports_the_check_step(
    hitl_agent: Agent, hitl_model: Model, app_copy: Path, write_eval: WriteEval
) -> None:
    write_eval(
        "checks/no_note_eval.py",
        """
        from eve_py.evals import define_eval


        async def test(t):
            await t.send("run the guarded echo")
            await t.respond_all("approve")
            t.called_tool("note")


        evaluation = define_eval(test=test)
        """,
    )

    [result] = await run_evals(_cases(app_copy, "checks/no_note"), lambda: InProcessBackend(hitl_agent, hitl_model))

    assert result.status == "failed"
    assert result.failure is not None
    assert (result.failure.kind, result.failure.step, result.failure.label) == ("assertion", 3, "called_tool('note')")
    assert result.failure.reason.startswith("expected at least 1 call(s) of 'note', found 0")
    assert result.steps == 3


async def test_an_eval_that_fails_because_the_model_failed_is_errored_not_failed(
    hitl_agent: Agent, app_copy: Path, write_eval: WriteEval
) -> None:
    from eve_py.testing import MockModel

    def outage(request: object) -> str:
        raise ConnectionError("gateway unreachable")

    write_eval(
        "outage/question_eval.py",
        """
        from eve_py.evals import define_eval


        async def test(t):
            await t.send("help me pick a template")
            t.expect_input_requests(tool_name="ask_question")


        evaluation = define_eval(test=test)
        """,
    )

    [result] = await run_evals(
        _cases(app_copy, "outage/question"), lambda: InProcessBackend(hitl_agent, MockModel(outage))
    )

    assert result.status == "errored"
    assert result.failure is not None and result.failure.kind == "error"
    assert result.failure.reason == "the model failed: ConnectionError: gateway unreachable"
