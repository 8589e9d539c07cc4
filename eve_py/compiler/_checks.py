"""The compile-time checks of one tool export: its shape, fields and schemas (`E103`-`E106`, `E109`, `E110`).

The runtime normalizer (`eve_py.tools.resolve_tool`) repeats them at load time, on its own.
"""

from __future__ import annotations

import jsonschema

from eve_py.authoring import ToolDefinition
from eve_py.errors import Diagnostic
from eve_py.tools._resolved import field_problems

__all__ = ("check_tool", "shape_message")


def shape_message(path: str) -> str:
    """The contract's message for an export that is not a tool of the public shape."""
    return f'Expected the tool export "tool" from "{path}" to match the public eve shape.'


def check_tool(path: str, value: object) -> list[Diagnostic]:
    """The compile-time shape rules for one export (the runtime normalizer repeats them)."""
    if not isinstance(value, ToolDefinition):
        return [
            Diagnostic(
                severity="error",
                code="E103",
                path=path,
                message=shape_message(path),
                hint=f'"tool" is a {type(value).__name__}; export the value returned by define_tool(...), '
                "define_client_tool(...) or disable_tool().",
            )
        ]
    found: list[Diagnostic] = []
    if value.client_resolved and value.execute is not None:
        found.append(
            Diagnostic(
                severity="error",
                code="E105",
                path=path,
                message='A client-resolved tool must not define an "execute" function — its result comes from the '
                f"client/HITL input channel, not a server executor. {shape_message(path)}",
                hint="Remove the executor, or use define_tool(...) for a tool the server runs.",
            )
        )
    elif not value.client_resolved and not callable(value.execute):
        found.append(
            Diagnostic(
                severity="error",
                code="E104",
                path=path,
                message=shape_message(path),
                hint="A tool that is not client-resolved needs an executor: define_tool(description=..., "
                "execute=fn). Use define_client_tool(...) when a person or client supplies the result.",
            )
        )
    if value.client_resolved and value.needs_approval is not False:
        found.append(
            Diagnostic(
                severity="error",
                code="E109",
                path=path,
                message=f"{shape_message(path)} A client-resolved tool cannot need approval.",
                hint="The person's answer is the result; drop needs_approval.",
            )
        )
    found += [
        Diagnostic(severity="error", code="E110", path=path, message=f"{shape_message(path)} {problem}")
        for problem in field_problems(value)
    ]
    for what, schema in (("input schema", value.input_schema), ("output schema", value.output_schema)):
        if schema is None:
            continue
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            found.append(Diagnostic(severity="error", code="E106", path=path, message=f"invalid {what}: {exc.message}"))
    if isinstance(value.input_schema, dict) and value.input_schema.get("type") != "object":
        found.append(
            Diagnostic(
                severity="error",
                code="E106",
                path=path,
                message='invalid input schema: it must describe a JSON object ("type": "object")',
            )
        )
    return found
