"""How eval checks compare what happened with what was expected (`input=`, `output=`, `event_order()` patterns).

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
from eve_py.errors import EvalConfigurationError
from eve_py.protocol import AnyEvent, payload
from eve_py.protocol.events import EVENT_TYPES

__all__ = ("Expected", "describe", "event_pattern", "matches", "pattern_types", "render_json")

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


def event_pattern(pattern: str | Mapping[str, object]) -> tuple[Callable[[AnyEvent], bool], str]:
    """An `event_order()` pattern (a type, or a type and fields) as a test of an event, and as text.

    Raises:
        EvalConfigurationError: The pattern names no event type, or one eve does not have.
    """
    if isinstance(pattern, str):
        kind, fields = pattern, {}
    else:
        fields = {key: value for key, value in pattern.items() if key != "type"}
        raw = pattern.get("type")
        if not isinstance(raw, str):
            raise EvalConfigurationError(f"event_order() pattern {pattern!r} needs a 'type'")
        kind = raw
    if kind not in EVENT_TYPES:
        raise EvalConfigurationError(
            f"event_order(): {kind!r} is not an event type; known types: {', '.join(sorted(EVENT_TYPES))}"
        )

    def check(event: AnyEvent) -> bool:
        return event.type == kind and matches(fields, payload(event))

    shown = kind if not fields else f"{kind} with {describe(fields)}"
    return check, shown


def pattern_types(pattern: str | Mapping[str, object]) -> Callable[[AnyEvent], bool]:
    """A test of whether an event has the pattern's type (whatever its fields)."""
    kind = pattern if isinstance(pattern, str) else pattern.get("type")
    return lambda event: event.type == kind
