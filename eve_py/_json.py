"""JSON type aliases shared by the whole package, and small JSON helpers."""

from __future__ import annotations

import json
import math
import re
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias

import pydantic
from pydantic import GetCoreSchemaHandler, GetPydanticSchema
from pydantic_core import core_schema, to_jsonable_python

__all__ = ("JsonObject", "JsonSchema", "JsonValue", "canonical_dumps", "json_problem", "strict_loads", "to_json_value")


def _serialized_as_any(source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
    return {**handler(source), "serialization": core_schema.simple_ser_schema("any")}


if TYPE_CHECKING:
    JsonValue: TypeAlias = pydantic.JsonValue
else:
    # Validated as pydantic's `JsonValue`; written by pydantic-core's own type inference, which
    # gives the same JSON for JSON data without calling back into Python for every node (the
    # union's Python discriminator): an assistant message with a call's input is dumped in
    # about two thirds of the instructions, and a parked record's pending step likewise.
    JsonValue = Annotated[pydantic.JsonValue, GetPydanticSchema(_serialized_as_any)]

JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object with string keys."""

JsonSchema: TypeAlias = dict[str, Any]
"""A JSON Schema document (draft 2020-12), as a plain dict."""


def to_json_value(value: object) -> JsonValue:
    """Convert a Python value (pydantic models, dataclasses, tuples, ...) to plain JSON data.

    Raises:
        TypeError: The value has a part that cannot be represented as JSON: an object of no JSON
            shape, NaN or Infinity (which would be stored as null), or a string holding a lone
            UTF-16 surrogate (e.g. a file name decoded with `surrogateescape`; not storable).
    """
    try:
        result: JsonValue = to_jsonable_python(value, by_alias=True)
    except Exception as exc:  # pydantic_core raises PydanticSerializationError
        raise TypeError(f"value of type {type(value).__name__} is not JSON-serializable: {exc}") from exc
    problem = json_problem(result)
    if problem is not None:
        raise TypeError(f"value of type {type(value).__name__} is not JSON: {problem}")
    return result


def canonical_dumps(value: object) -> str:
    """Serialize JSON data with sorted keys and no whitespace, for digests and comparisons."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _no_default(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# json's C encoder itself, made once: `JSONEncoder.encode` makes one per call. No circularity
# markers: a value that contains itself fails with a RecursionError (not JSON either way).
_STRICT = c_make_encoder(None, _no_default, encode_basestring, None, ":", ",", False, False, False)
"""`json_problem`'s first check: `json.dumps(value, allow_nan=False, ensure_ascii=False)`'s encoder."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""In a decoded Python string a surrogate is always lone (a pair decodes to one code point)."""


def json_problem(value: object) -> str | None:
    """Why `value` cannot travel as standard JSON text, or None when it can.

    Catches what Python's `json` lets through but the wire and the stores cannot keep: NaN and
    Infinity (not JSON numbers) and lone UTF-16 surrogates (not encodable as UTF-8), in strings
    and keys at any depth, and a dict or list that contains itself. Walks without recursion, so
    any nesting depth is safe.

    Returns:
        E.g. `"NaN at pickedIds/0 is not a JSON number"`, or None.
    """
    try:  # the C encoder refuses NaN and Infinity; UTF-8 refuses a lone surrogate, in a key too
        "".join(_STRICT(value, 0)).encode("utf-8")
    except Exception:  # noqa: BLE001 - which problem, and where: the walk below says
        pass
    else:
        return None
    # Each entry carries the ids of the containers above it: a value that holds itself is named,
    # not walked forever (a container shared by two branches is not a cycle).
    stack: list[tuple[str, object, frozenset[int]]] = [("", value, frozenset())]
    while stack:
        path, item, above = stack.pop()
        where = path or "(root)"
        if isinstance(item, float) and not math.isfinite(item):
            shown = "NaN" if math.isnan(item) else ("Infinity" if item > 0 else "-Infinity")
            return f"{shown} at {where} is not a JSON number (JSON has no NaN or Infinity)"
        if isinstance(item, str) and _LONE_SURROGATE.search(item):
            return f"the text at {where} holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not text"
        if isinstance(item, dict | list | tuple):
            if id(item) in above:
                return f"the value at {where} contains itself (a circular reference), which JSON cannot hold"
            inner = above | {id(item)}
            if isinstance(item, dict):
                for key, child in item.items():
                    if isinstance(key, str) and _LONE_SURROGATE.search(key):
                        return f"a key at {where} holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not text"
                    stack.append((f"{path}/{key}" if path else str(key), child, inner))
            else:
                stack.extend((f"{path}/{i}" if path else str(i), child, inner) for i, child in enumerate(item))
    return None


def strict_loads(text: str | bytes) -> JsonValue:
    """Parse standard JSON only: no NaN or Infinity, no lone surrogates, any nesting refused cleanly.

    Raises:
        ValueError: The text is not standard JSON; the message says why.
    """
    try:
        value: JsonValue = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("it is nested too deeply") from None
    problem = json_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (JSON has no NaN or Infinity)")
