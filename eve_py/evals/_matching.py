"""How eval checks compare what happened with what was expected (`input=`, `output=`, events).

The rules, applied recursively:

- a `dict` expectation matches a dict that has every expected key with a matching value (extra
  keys are fine: you name what matters);
- a `list` or `tuple` expectation matches a list of the same length, element by element;
- an `re.Pattern` matches a string it `search`es successfully;
- a callable is a predicate: it gets the actual value and returns whether it matches;
- anything else matches an equal value (`1` does not match `True`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TypeAlias

from eve_py._json import JsonValue

__all__ = ("Expected", "describe", "matches", "render_json")

Expected: TypeAlias = object
"""An expectation: JSON data, an `re.Pattern`, a predicate, or containers of these."""


def matches(expected: Expected, actual: JsonValue) -> bool:
    """Whether `actual` satisfies `expected` (see the module docstring for the rules)."""
    if isinstance(expected, re.Pattern):
        return isinstance(actual, str) and expected.search(actual) is not None
    if isinstance(expected, Mapping):
        return isinstance(actual, dict) and all(
            key in actual and matches(value, actual[key]) for key, value in expected.items()
        )
    if isinstance(expected, list | tuple):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(matches(e, a) for e, a in zip(expected, actual, strict=True))
        )
    if callable(expected):
        predicate: Callable[[JsonValue], object] = expected
        return bool(predicate(actual))
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    return expected == actual


def describe(expected: Expected) -> str:
    """A short readable form of an expectation for failure messages."""
    if isinstance(expected, re.Pattern):
        flags = "i" if expected.flags & re.IGNORECASE else ""
        return f"/{expected.pattern}/{flags}"
    if isinstance(expected, Mapping):
        return "{" + "".join(f"{key!r}: {describe(value)}, " for key, value in expected.items()) + "...}"
    if isinstance(expected, list | tuple):
        items: Sequence[object] = expected
        return "[" + ", ".join(describe(item) for item in items) + "]"
    if callable(expected):
        return f"<predicate {getattr(expected, '__name__', type(expected).__name__)}>"
    return render_json(expected)


def render_json(value: object, limit: int = 240) -> str:
    """Compact JSON (falling back to `repr`), cut to `limit` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=_unjson)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _unjson(value: object) -> str:
    return describe(value) if isinstance(value, re.Pattern) or callable(value) else repr(value)
