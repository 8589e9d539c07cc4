"""Tools a client offers for one turn (AG-UI's frontend tools): checked, then run as client-resolved tools.

```python
offered = [ClientTool(name="change_background", description="...", input_schema={"type": "object", ...})]
check_client_tools(offered, agent.tools)        # ToolDefinitionError: a bad name, schema or clash
tools = with_client_tools(agent.tools, offered)  # the turn's tools: the app's and the client's
```

A client tool parks every call as a `client-tool` input request whose answer (any JSON value)
is the call's result, exactly like an app's `define_client_tool` with no output schema.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import jsonschema
import jsonschema.exceptions

from eve_py.errors import ToolDefinitionError
from eve_py.protocol.turns import ClientTool
from eve_py.tools._resolved import ResolvedTool

__all__ = ("CLIENT_TOOL_PATH", "check_client_tools", "client_tool", "with_client_tools")

CLIENT_TOOL_PATH = "client:"
"""The `path` prefix of a client tool's `ResolvedTool` (it has no source file)."""

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""What every provider accepts as a tool name (Anthropic's and OpenAI's rule)."""

_ANY_VALUE: dict[str, object] = {}
"""The answer's schema: any JSON value (the client's own tool decides what it returns)."""


def check_client_tools(tools: Sequence[ClientTool], app_tools: Mapping[str, ResolvedTool]) -> None:
    """Refuse client tools a model could not be offered, or that would shadow an app tool.

    Raises:
        ToolDefinitionError: A name is not 1 to 64 letters, digits, `_` or `-`; a name repeats or
            is an app tool's; an input schema is not a valid JSON Schema (2020-12) of an object.
    """
    seen: set[str] = set()
    for tool in tools:
        name = tool.name
        if not _NAME.match(name):
            raise ToolDefinitionError(f"Client tool name {name!r} must be 1 to 64 letters, digits, '_' or '-'.")
        if name in app_tools:
            raise ToolDefinitionError(
                f"Client tool {name!r} has the name of one of the app's tools; rename the client's tool."
            )
        if name in seen:
            raise ToolDefinitionError(f"Client tool {name!r} is offered twice.")
        seen.add(name)
        schema = tool.input_schema
        if schema.get("type") != "object":
            raise ToolDefinitionError(
                f'Client tool {name!r}: its parameters must be a JSON Schema with "type": "object".'
            )
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.exceptions.SchemaError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
            raise ToolDefinitionError(
                f"Client tool {name!r}: its parameters are not a valid JSON Schema at {where}: {exc.message}"
            ) from exc


def client_tool(tool: ClientTool) -> ResolvedTool:
    """A checked client tool as the runtime runs it: client-resolved, no executor, any JSON as its answer."""
    return ResolvedTool(
        name=tool.name,
        description=tool.description or f"The client's {tool.name} tool.",
        input_schema=tool.input_schema,
        output_schema=dict(_ANY_VALUE),
        client_resolved=True,
        needs_approval=False,
        to_model_output=None,
        path=f"{CLIENT_TOOL_PATH}{tool.name}",
        plan=None,
    )


def with_client_tools(
    app_tools: Mapping[str, ResolvedTool], tools: Sequence[ClientTool] | None
) -> Mapping[str, ResolvedTool]:
    """The tools of a turn: the app's, then the client's (`tools`, checked when the turn started)."""
    if not tools:
        return app_tools
    return {**app_tools, **{tool.name: client_tool(tool) for tool in tools}}
