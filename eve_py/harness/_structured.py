"""A turn's structured result: the model's final answer read against the turn's `outputSchema`."""

from __future__ import annotations

from eve_py._json import JsonSchema, JsonValue, strict_loads
from eve_py.parking._answers import first_schema_error

__all__ = ("structured_result",)


def structured_result(text: str, schema: JsonSchema) -> tuple[JsonValue, str | None]:
    """A final answer read as the turn's structured result: (value, None), or (None, why it is not one)."""
    raw = text.strip()
    if raw.startswith("```"):
        raw = raw.strip("`").removeprefix("json").strip()
    try:
        value = strict_loads(raw)
    except ValueError as exc:
        # NaN, Infinity and lone surrogates too: the result is stored and sent as JSON, as answers are.
        return None, (
            f"The model's final answer is not JSON ({exc}), but the turn asked for a result matching its outputSchema."
        )
    found = first_schema_error(schema, value)
    if found is not None:
        where, error = found
        return None, f"The model's final answer fails the turn's outputSchema at {where}: {error.message}"
    return value, None
