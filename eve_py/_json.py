"""JSON type aliases shared by the whole package, and small JSON helpers."""

from __future__ import annotations

import json
from typing import Any, TypeAlias

from pydantic import JsonValue
from pydantic_core import to_jsonable_python

__all__ = ("JsonObject", "JsonSchema", "JsonValue", "canonical_dumps", "to_json_value")

JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object with string keys."""

JsonSchema: TypeAlias = dict[str, Any]
"""A JSON Schema document (draft 2020-12), as a plain dict."""


def to_json_value(value: object) -> JsonValue:
    """Convert a Python value (pydantic models, dataclasses, tuples, ...) to plain JSON data.

    Raises:
        TypeError: The value has a part that cannot be represented as JSON.
    """
    try:
        result: JsonValue = to_jsonable_python(value, by_alias=True)
    except Exception as exc:  # pydantic_core raises PydanticSerializationError
        raise TypeError(f"value of type {type(value).__name__} is not JSON-serializable: {exc}") from exc
    return result


def canonical_dumps(value: object) -> str:
    """Serialize JSON data with sorted keys and no whitespace, for digests and comparisons."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
