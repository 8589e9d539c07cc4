"""An agent whose every path is traced: a tool that runs, one that fails, one that needs approval, a client tool."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from eve_py import Agent, define_client_tool, define_tool
from eve_py.errors import ToolError
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

if TYPE_CHECKING:  # the agent also runs in a process without OpenTelemetry (tests/tracing/park_child.py)
    from opentelemetry.sdk.trace import ReadableSpan


def lookup(city: str) -> dict[str, str]:
    return {"city": city, "weather": "sunny"}


def explode() -> str:
    raise ToolError("the disk is full")


def delete_file(path: str) -> str:
    return f"deleted {path}"


def traced_agent() -> Agent:
    """The agent: `lookup`, `explode`, `delete_file` (needs approval) and `pick` (client-resolved)."""
    return Agent.from_definitions(
        {
            "lookup": define_tool(description="Look up the weather.", execute=lookup),
            "explode": define_tool(description="Always fails.", execute=explode),
            "delete_file": define_tool(description="Delete a file.", execute=delete_file, needs_approval=True),
            "pick": define_client_tool(
                description="Ask the user to pick a colour.",
                input_schema={"type": "object", "properties": {}},
                output_schema={"type": "object", "properties": {"colour": {"type": "string"}}},
            ),
        },
        name="helper",
    )


CALLS = {
    "weather": [MockToolCall("lookup", {"city": "Lyon"})],
    "fail": [MockToolCall("explode")],
    "delete": [MockToolCall("delete_file", {"path": "/tmp/x"}), MockToolCall("pick")],
}


def respond(request: MockModelRequest) -> str | MockResponse:
    """The first step calls the tools the message names; the next one sums up the results."""
    results = request.tool_results_since_last_user_message
    if not results:
        return MockResponse(tool_calls=CALLS[request.last_user_message or ""])
    return "; ".join(f"{r.name}: {r.output}" for r in results)


def traced_model() -> MockModel:
    return MockModel(respond, name="mock")


def named(finished: Sequence[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    """The finished spans whose name starts with `prefix`, in the order they ended."""
    return [span for span in finished if span.name.startswith(prefix)]


def attrs(item: Any) -> Mapping[str, Any]:
    """A span's, an event's or a link's attributes as a plain mapping."""
    return dict(item.attributes or {})
