"""What eve-py writes of JSON data is pydantic's JSON, byte for byte, however the models are built.

eve-py's `JsonValue` fields are written by pydantic-core's type inference (not the `JsonValue`
union's Python discriminator), and models of data eve-py checked already are built with
`CamelModel.trusted` (not validated again): neither may change a stored or streamed byte.
"""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from eve_py._camel import CamelModel
from eve_py._json import JsonObject, JsonValue
from eve_py.protocol.messages import ToolResultPart
from eve_py.protocol.payloads import ToolResultAction
from eve_py.protocol.requests import ToolCallAction

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


class _Ours(CamelModel):
    tool_input: JsonObject
    output: JsonValue = None


class _Pydantics(CamelModel):
    tool_input: dict[str, pydantic.JsonValue]
    output: pydantic.JsonValue = None


def _json(model: CamelModel, **options: Any) -> bytes:
    return model.__pydantic_serializer__.to_json(model, **options)


@given(st.dictionaries(st.text(max_size=8), json_values, max_size=4), json_values)
def test_json_values_are_written_as_pydantic_writes_them(tool_input: dict[str, JsonValue], output: JsonValue) -> None:
    ours, theirs = _Ours(tool_input=tool_input, output=output), _Pydantics(tool_input=tool_input, output=output)
    for camel in (True, False):
        assert _json(ours, by_alias=camel, exclude_none=camel) == _json(theirs, by_alias=camel, exclude_none=camel)
        assert ours.model_dump(mode="json", by_alias=camel) == theirs.model_dump(mode="json", by_alias=camel)


@given(st.dictionaries(st.text(max_size=8), json_values, max_size=4), json_values, st.booleans())
def test_trusted_models_equal_validated_ones(tool_input: dict[str, JsonValue], output: JsonValue, failed: bool) -> None:
    built = [
        (
            ToolCallAction(call_id="c1", tool_name="note", input=tool_input),
            ToolCallAction.trusted(call_id="c1", tool_name="note", input=tool_input),
        ),
        (
            ToolResultAction(call_id="c1", tool_name="note", output=output, is_error=failed or None),
            ToolResultAction.trusted(call_id="c1", tool_name="note", output=output, is_error=failed or None),
        ),
        (
            ToolResultPart(tool_call_id="c1", tool_name="note", output=output),
            ToolResultPart.trusted(tool_call_id="c1", tool_name="note", output=output),
        ),
    ]
    for validated, trusted in built:
        assert trusted == validated
        assert _json(trusted, by_alias=True, exclude_none=True) == _json(validated, by_alias=True, exclude_none=True)
        assert trusted.model_fields_set == validated.model_fields_set


def test_trusted_refuses_a_missing_or_unknown_field() -> None:
    missing, unknown = {"call_id": "c1", "tool_name": "n"}, {"call_id": "c1", "tool_name": "n", "input": {}, "x": 1}
    for wrong in (missing, unknown):
        with pytest.raises(TypeError, match=r"ToolCallAction\.trusted"):
            ToolCallAction.trusted(**wrong)
