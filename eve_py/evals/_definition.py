"""`define_eval` and `define_eval_config`: what an eval file and `evals/evals_config.py` export.

```python
# evals/hitl/client_resolved_question_eval.py
from eve_py.evals import EvalDriver, define_eval

async def test(t: EvalDriver) -> None:
    await t.send("Help me pick a template ...")
    [request] = t.expect_input_requests(tool_name="ask_question", display="select")
    await t.respond_all("tpl_blue")
    t.completed()

evaluation = define_eval(description="The picker parks and resumes", tags=("hitl",), test=test)
```
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from eve_py._json import JsonValue, to_json_value
from eve_py.errors import EvalConfigurationError

if TYPE_CHECKING:
    from eve_py.evals._driver import EvalDriver

__all__ = (
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_TIMEOUT_S",
    "EvalConfig",
    "EvalDefinition",
    "EvalTest",
    "define_eval",
    "define_eval_config",
)

EvalTest: TypeAlias = "Callable[[EvalDriver], Awaitable[None]]"
"""An eval's body: an `async def test(t)` that drives sessions through `t` and checks them."""

DEFAULT_TIMEOUT_S = 120.0
"""How long one eval may run when neither it nor `evals_config.py` says otherwise."""

DEFAULT_MAX_CONCURRENCY = 8
"""How many evals run at once when neither `--max-concurrency` nor `evals_config.py` says otherwise."""


@dataclass(frozen=True, kw_only=True)
class EvalDefinition:
    """One eval, as `define_eval` returns it. Export it from an eval file as `evaluation`."""

    test: EvalTest
    description: str | None = None
    tags: tuple[str, ...] = ()
    timeout_s: float | None = None
    """Overrides the config's timeout for this eval."""
    metadata: Mapping[str, JsonValue] = field(default_factory=dict)
    """Free-form JSON data, copied into `results.jsonl`."""


@dataclass(frozen=True, kw_only=True)
class EvalConfig:
    """Settings for every eval of an app, as `define_eval_config` returns them."""

    max_concurrency: int | None = None
    """How many evals run at once (`--max-concurrency` overrides it); default 8."""
    timeout_s: float | None = None
    """Each eval's time limit unless the eval sets its own; default 120 s."""


def _positive(name: str, value: float | None, *, integer: bool = False) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or (integer and not isinstance(value, int)):
        kind = "an int" if integer else "a number"
        raise EvalConfigurationError(f"{name} must be {kind}, got {type(value).__name__} {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise EvalConfigurationError(f"{name} must be greater than 0, got {value!r}")


def define_eval(
    *,
    test: EvalTest,
    description: str | None = None,
    tags: Sequence[str] = (),
    timeout_s: float | None = None,
    metadata: Mapping[str, object] | None = None,
) -> EvalDefinition:
    """Define an eval: an async test that drives real sessions of the app and checks them.

    Args:
        test: `async def test(t: EvalDriver) -> None`; see `EvalDriver` for what `t` offers.
        description: One line saying what the eval guards (shown by `--list` and in reports).
        tags: Labels that `eve-py eval --tag` selects by.
        timeout_s: This eval's time limit in seconds (overrides `evals_config.py`).
        metadata: JSON data copied into the eval's line of `results.jsonl`.

    Returns:
        The definition; export it from the eval file as `evaluation`.

    Raises:
        EvalConfigurationError: `test` is not an async function, a tag is not a non-empty
            string, `timeout_s` is not a positive number, or `metadata` is not JSON data.
    """
    if not inspect.iscoroutinefunction(test):
        raise EvalConfigurationError(
            f"define_eval(test=...) needs an async function `async def test(t): ...`, got {test!r}"
        )
    if isinstance(tags, str):
        raise EvalConfigurationError(f"define_eval(tags=...) takes a list of tags, not the string {tags!r}")
    bad = [tag for tag in tags if not isinstance(tag, str) or not tag.strip()]
    if bad:
        raise EvalConfigurationError(f"define_eval(tags=...) needs non-empty strings, got {bad!r}")
    if description is not None and not isinstance(description, str):
        raise EvalConfigurationError(f"define_eval(description=...) must be a string, got {description!r}")
    _positive("define_eval(timeout_s=...)", timeout_s)
    try:
        data = {str(key): to_json_value(value) for key, value in (metadata or {}).items()}
    except (TypeError, ValueError) as exc:
        raise EvalConfigurationError(f"define_eval(metadata=...) must be JSON data: {exc}") from exc
    return EvalDefinition(
        test=test,
        description=description,
        tags=tuple(tags),
        timeout_s=float(timeout_s) if timeout_s is not None else None,
        metadata=data,
    )


def define_eval_config(*, max_concurrency: int | None = None, timeout_s: float | None = None) -> EvalConfig:
    """Settings for all of an app's evals; export from `evals/evals_config.py` as `config`.

    Args:
        max_concurrency: How many evals run at once (default 8; `--max-concurrency` overrides).
        timeout_s: Each eval's time limit in seconds unless the eval sets one (default 120).

    Raises:
        EvalConfigurationError: A value is not a positive number (an int for `max_concurrency`).
    """
    _positive("define_eval_config(max_concurrency=...)", max_concurrency, integer=True)
    _positive("define_eval_config(timeout_s=...)", timeout_s)
    return EvalConfig(max_concurrency=max_concurrency, timeout_s=float(timeout_s) if timeout_s is not None else None)
