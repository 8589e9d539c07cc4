"""`compiled_check`: a compiled JSON Schema validator (`jsonschema-rs`) for the schemas it judges as `jsonschema` does.

Checking a tool call's input or an answer with the `jsonschema` package walks the schema in
Python: about a third of a millisecond for a typical tool's input, the largest part of a park +
resume cycle's own time. `jsonschema-rs` answers "valid?" in about a microsecond, but it is a
different implementation: formats (`email`, `date-time`, ...), regular expressions (ECMA-262
against Python's `re`), `multipleOf` on floats and `uniqueItems` (is `1` equal to `1.0`?) are
judged by rules of its own. So it answers only for schemas built from keywords both read the
same way (`_KEYWORDS`), and only "valid": a value it refuses, or any value of any other schema,
goes to `jsonschema`, which gives the error message and has the last word (with its format
checker). So does a value that is not standard JSON (NaN, Infinity), which `jsonschema-rs` does
not read as a number. Accepted inputs are therefore exactly `jsonschema`'s (tests/parking/test_compiled_check.py
compares both over generated schemas and values).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import jsonschema_rs

from eve_py._json import json_problem

__all__ = ("compiled_check",)

_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "$schema"}
)
_PLAIN = frozenset(
    {
        "type",
        "required",
        "enum",
        "const",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minProperties",
        "maxProperties",
    }
)
_ONE = frozenset({"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else"})
_MANY = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_NAMED = frozenset({"properties", "$defs", "definitions"})
_KEYWORDS = _ANNOTATIONS | _PLAIN | _ONE | _MANY | _NAMED | {"$ref"}
"""What a schema may use for the compiled validator to judge it: no `format`, `pattern`,
`patternProperties`, `multipleOf`, `uniqueItems`, `$id`/`$anchor`/`$dynamicRef`, remote `$ref`,
`unevaluated*`, `dependent*` or content keywords."""


@functools.lru_cache(maxsize=256)
def compiled_check(canonical: str) -> Callable[[Any], bool] | None:
    """A function telling whether a value is valid against a schema, when it may be trusted to.

    Args:
        canonical: The JSON Schema (2020-12) as canonical JSON (sorted keys, no spaces): the
            cache's key, as `eve_py.parking._answers` keys its `jsonschema` validators.

    Returns:
        `is_valid(value)`, whose True means `jsonschema` would find no error either (its False
        means nothing: ask `jsonschema`); None where only `jsonschema` may judge the schema.
    """
    schema = json.loads(canonical)
    if not _plain(schema):
        return None
    try:
        validator = jsonschema_rs.Draft202012Validator(schema)
    except (ValueError, jsonschema_rs.ValidationError):  # a schema it refuses: jsonschema judges
        return None

    def is_valid(value: Any) -> bool:
        if json_problem(value) is not None:  # NaN or Infinity, which it reads as no number: jsonschema judges
            return False
        try:
            return validator.is_valid(value)
        except (ValueError, TypeError, OverflowError):  # a value it cannot read (a huge int, a lone surrogate)
            return False

    return is_valid


def _plain(schema: Any) -> bool:
    """Whether `schema` (and every schema in it) uses only `_KEYWORDS`, and `$ref`s within itself."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict):
        return False
    for key, value in schema.items():
        if key not in _KEYWORDS:
            return False
        if key == "$ref" and not (isinstance(value, str) and value.startswith("#")):
            return False
        if key in _ONE and not _plain(value):
            return False
        if key in _MANY and not (isinstance(value, list) and all(_plain(s) for s in value)):
            return False
        if key in _NAMED and not (isinstance(value, dict) and all(_plain(s) for s in value.values())):
            return False
    return True
