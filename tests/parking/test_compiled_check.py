"""The compiled validator passes exactly what `jsonschema` passes: over every fixture tool's input
schema and generated schemas, for values generated from each schema (mostly valid) and arbitrary
JSON (mostly not), `first_schema_error` finds an error exactly when `jsonschema` alone does, the same one."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eve_py import load_agent
from eve_py.parking._answers import first_schema_error, schema_validator
from eve_py.parking._compiled import compiled_check
from tests.conftest import REPO

JSON: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def instances(schema: Any, root: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values shaped by `schema` (mostly valid: bounds, `not` and `additionalProperties` are not followed)."""
    if not isinstance(schema, dict) or not schema:
        return JSON
    if "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part] if part else target
        return st.deferred(lambda: instances(target, root))
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "const" in schema:
        return st.just(schema["const"])
    parts = schema.get("anyOf") or schema.get("oneOf")
    if parts:
        return st.one_of([instances(p, root) for p in parts])
    kinds = schema.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if not kinds:
        return JSON
    made = {
        "object": lambda: st.fixed_dictionaries(
            {k: instances(v, root) for k, v in schema.get("properties", {}).items() if k in schema.get("required", [])},
            optional={
                k: instances(v, root)
                for k, v in schema.get("properties", {}).items()
                if k not in schema.get("required", [])
            },
        ),
        "array": lambda: st.lists(instances(schema.get("items", {}), root), max_size=3),
        "string": lambda: st.text(max_size=6),
        "integer": lambda: st.integers(-3, 12),
        "number": lambda: st.floats(-3, 12),
        "boolean": st.booleans,
        "null": st.none,
    }
    return st.one_of([made[k]() for k in kinds if k in made] or [JSON])


def fixture_schemas() -> list[dict[str, Any]]:
    """Every fixture app's tools' input schemas (pydantic-written and hand-written alike)."""
    schemas: dict[str, dict[str, Any]] = {}
    for app in sorted((REPO / "fixtures").iterdir()):
        if (app / "agent").is_dir():
            try:
                agent = load_agent(app)
            except Exception:  # an app that needs a server or an env var to load: its tools are elsewhere too
                continue
            for tool in agent.tools.values():
                schemas[json.dumps(tool.input_schema, sort_keys=True)] = tool.input_schema
    return list(schemas.values())


SCHEMAS = fixture_schemas()

PLAIN: st.SearchStrategy[dict[str, Any]] = st.recursive(
    st.sampled_from(
        [
            {"type": "string", "minLength": 1, "maxLength": 3},
            {"type": "integer", "minimum": 0, "exclusiveMaximum": 10},
            {"type": "number", "maximum": 1.5},
            {"type": ["boolean", "null"]},
            {"enum": ["a", 1, True, None, 1.0]},
            {"const": 0},
            {},
        ]
    ),
    lambda inner: (
        st.builds(
            lambda props, required, extra: {
                "type": "object",
                "properties": props,
                "required": [k for k in props if k in required],
                "additionalProperties": extra,
            },
            st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
            st.sets(st.sampled_from(["a", "b"])),
            st.booleans() | inner,
        )
        | st.builds(lambda items, low: {"type": "array", "items": items, "minItems": low}, inner, st.integers(0, 2))
        | st.lists(inner, min_size=1, max_size=3).map(lambda parts: {"anyOf": parts})
        | st.lists(inner, min_size=1, max_size=3).map(lambda parts: {"oneOf": parts})
        | inner.map(lambda part: {"not": part})
    ),
    max_leaves=6,
)


def same_verdict(schema: dict[str, Any], value: Any) -> None:
    expected = sorted(schema_validator(schema).iter_errors(value), key=str)
    found = first_schema_error(schema, value)
    if not expected:
        assert found is None, (schema, value, found)
    else:
        assert found is not None, (schema, value, expected[0].message)
        assert found[1].message == expected[0].message


def test_the_fixture_tools_schemas_are_judged_by_the_compiled_validator() -> None:
    compiled = [s for s in SCHEMAS if compiled_check(json.dumps(s, sort_keys=True, separators=(",", ":")))]
    assert len(SCHEMAS) >= 5 and len(compiled) >= len(SCHEMAS) // 2, (len(SCHEMAS), len(compiled))


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_a_fixture_tool_input_gets_the_same_verdict(index: int, data: st.DataObject) -> None:
    schema = SCHEMAS[index]
    value = data.draw(instances(schema, schema) | JSON)
    same_verdict(schema, value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=PLAIN, data=st.data())
def test_a_generated_schema_gets_the_same_verdict(schema: dict[str, Any], data: st.DataObject) -> None:
    value = data.draw(JSON)
    same_verdict(schema, value)


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "string", "format": "email"}, "not-an-email"),  # jsonschema's email: anything with "@"
        ({"type": "string", "format": "email"}, "a@b"),
        ({"type": "string", "format": "date-time"}, "2026-11-28T03:00:00z"),
        ({"type": "string", "pattern": "^\\d+$"}, "١٢"),  # Arabic-Indic digits: \d in Python's re
        ({"type": "number", "multipleOf": 0.1}, 0.3),
        ({"type": "array", "uniqueItems": True}, [1, 1.0]),
        ({"type": "integer"}, 1.0),
        ({"type": "integer"}, 2**80),
        ({"type": "string", "minLength": 2}, "\ud800x"),
        # Infinity is a number to jsonschema, not to jsonschema-rs (found by the generated test)
        ({"not": {"type": "object", "additionalProperties": {"type": "number", "maximum": 1.5}}}, {"": -float("inf")}),
        ({"type": "number"}, float("inf")),
    ],
)
def test_what_the_two_validators_judge_differently_is_left_to_jsonschema(schema: dict[str, Any], value: Any) -> None:
    same_verdict(schema, value)


def test_a_schema_with_formats_is_not_compiled() -> None:
    canonical = json.dumps({"properties": {"at": {"format": "date-time"}}}, sort_keys=True, separators=(",", ":"))
    assert compiled_check(canonical) is None
