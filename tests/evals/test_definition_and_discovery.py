"""`define_eval`, `define_eval_config` and `discover_evals`: what an app's eval files may look like."""

from __future__ import annotations

from pathlib import Path

import pytest

from eve_py.errors import EvalConfigurationError, UsageError
from eve_py.evals import EvalConfig, EvalDriver, define_eval, define_eval_config, discover_evals
from tests.conftest import HITL_APP
from tests.evals.conftest import WriteEval


async def _test(t: EvalDriver) -> None:
    await t.send("hello")


def _sync_test(t: EvalDriver) -> None:
    return None


def test_define_eval_keeps_what_it_is_given() -> None:
    definition = define_eval(
        test=_test, description="says hello", tags=["smoke", "hitl"], timeout_s=5, metadata={"owner": "qa", "n": 1}
    )

    assert definition.test is _test
    assert definition.description == "says hello"
    assert definition.tags == ("smoke", "hitl")
    assert definition.timeout_s == 5.0
    assert definition.metadata == {"owner": "qa", "n": 1}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"test": _sync_test}, "needs an async function"),
        ({"test": _test, "tags": "smoke"}, "takes a list of tags, not the string 'smoke'"),
        ({"test": _test, "tags": ["ok", ""]}, "needs non-empty strings"),
        ({"test": _test, "timeout_s": 0}, "timeout_s=...) must be greater than 0"),
        ({"test": _test, "timeout_s": "5"}, "must be a number"),
        ({"test": _test, "metadata": {"x": object()}}, "metadata=...) must be JSON data"),
        ({"test": _test, "description": 3}, "description=...) must be a string"),
    ],
)
def test_define_eval_rejects_bad_arguments_with_a_usage_error(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(EvalConfigurationError, match=message.replace("(", r"\(").replace(")", r"\)")) as failure:
        define_eval(**kwargs)  # type: ignore[arg-type]
    assert isinstance(failure.value, UsageError)


def test_define_eval_config_validates_its_numbers() -> None:
    assert define_eval_config() == EvalConfig()
    assert define_eval_config(max_concurrency=2, timeout_s=30) == EvalConfig(max_concurrency=2, timeout_s=30.0)
    with pytest.raises(EvalConfigurationError, match="must be an int"):
        define_eval_config(max_concurrency=1.5)  # type: ignore[arg-type]
    with pytest.raises(EvalConfigurationError, match="greater than 0"):
        define_eval_config(max_concurrency=0)
    with pytest.raises(EvalConfigurationError, match="greater than 0"):
        define_eval_config(timeout_s=float("inf"))


def test_the_fixture_app_has_the_two_hitl_regression_evals_and_a_config() -> None:
    suite = discover_evals(HITL_APP)

    assert [case.id for case in suite.cases] == [
        "hitl/approval_vs_client_resolved",
        "hitl/client_resolved_question",
    ]
    assert [case.file for case in suite.cases] == [
        "evals/hitl/approval_vs_client_resolved_eval.py",
        "evals/hitl/client_resolved_question_eval.py",
    ]
    assert all(case.definition.tags == ("hitl", "regression") for case in suite.cases)
    assert suite.config == EvalConfig(max_concurrency=4, timeout_s=120.0)


def test_discovery_skips_private_files_and_lets_evals_share_helpers(app_copy: Path, write_eval: WriteEval) -> None:
    write_eval("_drafts/draft_eval.py", "raise RuntimeError('never imported')\n")
    write_eval("smoke/_helpers.py", "GREETING = 'hello'\n")
    write_eval(
        "smoke/hello_eval.py",
        """
        from eve_py.evals import define_eval

        from ._helpers import GREETING


        async def test(t):
            await t.send(GREETING)


        evaluation = define_eval(test=test, tags=["smoke"])
        """,
    )

    suite = discover_evals(app_copy)

    assert [case.id for case in suite.cases] == [
        "hitl/approval_vs_client_resolved",
        "hitl/client_resolved_question",
        "smoke/hello",
    ]
    assert [case.id for case in suite.select(["smoke"])] == ["smoke/hello"]
    assert [case.id for case in suite.select(["smoke", "hitl"])] == [case.id for case in suite.cases]
    assert suite.select(["nothing"]) == []


def test_discovery_reimports_changed_eval_files(app_copy: Path, write_eval: WriteEval) -> None:
    source = "from eve_py.evals import define_eval\n\nasync def test(t):\n    pass\n\n"
    write_eval("x_eval.py", source + "evaluation = define_eval(test=test, description='one')\n")
    assert discover_evals(app_copy).cases[-1].definition.description == "one"

    write_eval("x_eval.py", source + "evaluation = define_eval(test=test, description='two')\n")
    assert discover_evals(app_copy).cases[-1].definition.description == "two"


def test_every_bad_eval_file_is_reported_at_once(app_copy: Path, write_eval: WriteEval) -> None:
    write_eval("bad/syntax_eval.py", "def test(:\n")
    write_eval("bad/no_export_eval.py", "async def test(t):\n    pass\n")
    write_eval("bad/wrong_type_eval.py", "evaluation = 42\n")
    write_eval("bad/raises_eval.py", "x = 1\nraise ValueError('boom')\n")
    write_eval(
        "bad/sync_test_eval.py",
        "from eve_py.evals import define_eval\n\ndef test(t):\n    pass\n\nevaluation = define_eval(test=test)\n",
    )

    with pytest.raises(EvalConfigurationError) as failure:
        discover_evals(app_copy)

    problems = failure.value.problems
    assert len(problems) == 5
    assert problems[0].startswith("evals/bad/no_export_eval.py: expected the export `evaluation = define_eval(...)`")
    assert problems[1] == "evals/bad/raises_eval.py:2: ValueError: boom"
    assert problems[2].startswith("evals/bad/sync_test_eval.py:6: EvalConfigurationError: define_eval(test=...)")
    assert problems[3].startswith("evals/bad/syntax_eval.py:1: SyntaxError")
    assert problems[4] == "evals/bad/wrong_type_eval.py: expected the export `evaluation = define_eval(...)`, found int"
    assert str(failure.value).startswith("5 problem(s) in ")


def test_a_bad_config_file_is_a_configuration_error(app_copy: Path, write_eval: WriteEval) -> None:
    write_eval("evals_config.py", "config = {'max_concurrency': 2}\n")

    with pytest.raises(EvalConfigurationError, match=r"evals_config.py: expected the export `config = define_eval"):
        discover_evals(app_copy)


def test_an_app_without_evals_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(EvalConfigurationError, match="is not a folder"):
        discover_evals(tmp_path / "missing")
    with pytest.raises(EvalConfigurationError, match=r"has no evals/ folder; eval files are evals/\*\*/\*_eval.py"):
        discover_evals(tmp_path)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "helpers.py").write_text("X = 1\n")
    with pytest.raises(EvalConfigurationError, match=r"no eval files in .* \(eval files are named \*_eval.py\)"):
        discover_evals(tmp_path)
