"""Evals: drive real sessions of an app and check what happened (`eve-py eval`).

```python
from eve_py.evals import EvalDriver, define_eval

async def test(t: EvalDriver) -> None:
    await t.send("Run the guarded echo")
    t.expect_input_requests(tool_name="guarded_echo", display="confirmation", times=1)
    (await t.respond_all("approve")).expect_ok()
    t.called_tool("guarded_echo", output={"token": "guarded-echo-ok-T4Q9"}, times=1)
    t.completed()

evaluation = define_eval(description="Approval runs the executor", tags=("hitl",), test=test)
```

Authoring: `define_eval`, `define_eval_config` and the driver `EvalDriver`. Running:
`discover_evals`, `run_evals` and `InProcessBackend` (what the CLI uses), and `eve_py.evals.report`
for the artifacts and JUnit XML. The terminal output (`eve_py.evals.console`) needs `rich`,
installed by the `evals` extra.
"""

from eve_py.errors import EvalAssertionError, EvalConfigurationError, EvalError
from eve_py.evals._backend import EvalBackend, EvalSession, InProcessBackend
from eve_py.evals._calls import ToolCall
from eve_py.evals._definition import EvalConfig, EvalDefinition, define_eval, define_eval_config
from eve_py.evals._discovery import EvalCase, EvalSuite, discover_evals
from eve_py.evals._driver import EvalDriver, Turn, option_answer
from eve_py.evals._runner import EvalFailure, EvalResult, run_eval, run_evals

__all__ = (
    "EvalAssertionError",
    "EvalBackend",
    "EvalCase",
    "EvalConfig",
    "EvalConfigurationError",
    "EvalDefinition",
    "EvalDriver",
    "EvalError",
    "EvalFailure",
    "EvalResult",
    "EvalSession",
    "EvalSuite",
    "InProcessBackend",
    "ToolCall",
    "Turn",
    "define_eval",
    "define_eval_config",
    "discover_evals",
    "option_answer",
    "run_eval",
    "run_evals",
)
