"""The agent itself as an MCP server: eve's MCP channel (`eve-py mcp APP_DIR --agent`).

An MCP host talks to the agent through eve's four invocation tools, with eve's names and result
shape (an invocation object, see `eve_py.mcp.channel._invocations`):

| tool | arguments | what it does |
|---|---|---|
| `agent_start` | `message`, `idempotencyKey?`, `outputSchema?` | a new session runs a turn on `message` |
| `agent_get` | `invocationId`, `afterRevision?`, `waitMs?` | reads the invocation |
| `agent_update` | `invocationId`, `responses` | answers open input requests (eve's `InputResponse`s) |
| `agent_cancel` | `invocationId` | cancels the parked or running turn |

Unlike eve, `agent_start` and `agent_update` return once the turn completes, fails or parks
(eve-py runs turns in the caller), so `afterRevision`/`waitMs` are accepted and need no wait.
Sessions are the runtime's: the same store as `eve-py serve` when both use it. An answer is
accepted once: answering a request again returns the invocation as it stands and changes nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eve_py._camel import describe_validation_error
from eve_py._json import JsonObject
from eve_py.errors import RequestAlreadyAnsweredError, SessionError, SessionNotFoundError, SessionNotWaitingError
from eve_py.harness import Runtime, Session
from eve_py.mcp.channel._invocations import invocation
from eve_py.mcp.serve._server import tools_server

__all__ = ("CHANNEL_TOOLS", "agent_channel")

NOT_FOUND = "Invocation not found."


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class _Start(_Args):
    message: str = Field(min_length=1)
    idempotency_key: str | None = Field(default=None, alias="idempotencyKey", min_length=1)
    output_schema: dict[str, Any] | None = Field(default=None, alias="outputSchema")


class _Get(_Args):
    invocation_id: str = Field(alias="invocationId", min_length=1)
    after_revision: int | None = Field(default=None, alias="afterRevision", ge=0)
    wait_ms: int | None = Field(default=None, alias="waitMs", ge=0)


class _Update(_Args):
    invocation_id: str = Field(alias="invocationId", min_length=1)
    responses: list[dict[str, Any]]


class _Cancel(_Args):
    invocation_id: str = Field(alias="invocationId", min_length=1)


def _schema(properties: JsonObject, required: list[str]) -> JsonObject:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


_ID: JsonObject = {"type": "string"}
CHANNEL_TOOLS = [
    types.Tool(
        name="agent_start",
        description="Sends a message to the agent in a new session; returns the invocation once the turn "
        "completes or waits for input.",
        input_schema=_schema(
            {"message": {"type": "string"}, "idempotencyKey": {"type": "string"}, "outputSchema": {"type": "object"}},
            ["message"],
        ),
    ),
    types.Tool(
        name="agent_get",
        description="Reads complete durable invocation state.",
        input_schema=_schema(
            {
                "invocationId": _ID,
                "afterRevision": {"type": "integer", "minimum": 0},
                "waitMs": {"type": "integer", "minimum": 0},
            },
            ["invocationId"],
        ),
    ),
    types.Tool(
        name="agent_update",
        description="Answers pending input requests on a durable invocation.",
        input_schema=_schema(
            {"invocationId": _ID, "responses": {"type": "array", "items": {"type": "object"}}},
            ["invocationId", "responses"],
        ),
    ),
    types.Tool(
        name="agent_cancel",
        description="Requests cancellation of a durable invocation. Read it again to observe acknowledgement.",
        input_schema=_schema({"invocationId": _ID}, ["invocationId"]),
    ),
]
"""eve's MCP channel tools, as listed."""


def _result(shown: JsonObject) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(shown, ensure_ascii=False))], structured_content=shown
    )


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def _session_id(key: str) -> str:
    """The session an idempotency key names: the same key always starts (or finds) the same session."""
    return "ses_mcp_" + hashlib.sha256(key.encode()).hexdigest()[:26]


class _Channel:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def _open(self, invocation_id: str) -> Session:
        return await self.runtime.get_session(invocation_id)

    async def start(self, args: _Start) -> JsonObject:
        if args.idempotency_key is not None:
            try:
                return await invocation(await self._open(_session_id(args.idempotency_key)))
            except SessionNotFoundError:
                pass
        session_id = None if args.idempotency_key is None else _session_id(args.idempotency_key)
        session = await self.runtime.create_session(session_id)
        await session.send(args.message, output_schema=args.output_schema)
        return await invocation(session)

    async def get(self, args: _Get) -> JsonObject:
        return await invocation(await self._open(args.invocation_id))

    async def update(self, args: _Update) -> JsonObject:
        session = await self._open(args.invocation_id)
        try:
            await session.respond(args.responses)
        except (SessionNotWaitingError, RequestAlreadyAnsweredError):
            pass  # answered before (a retry): accepted once, the invocation as it stands
        return await invocation(session)

    async def cancel(self, args: _Cancel) -> JsonObject:
        session = await self._open(args.invocation_id)
        await session.cancel()
        return await invocation(session)


def agent_channel(runtime: Runtime, *, name: str | None = None) -> Server[Any]:
    """The SDK server publishing `runtime`'s agent as eve's MCP channel tools.

    Args:
        runtime: The runtime whose agent, model and session store serve the invocations.
        name: The server's name; the agent's name by default.
    """
    channel = _Channel(runtime)
    handlers: dict[str, tuple[type[_Args], Callable[[Any], Awaitable[JsonObject]]]] = {
        "agent_start": (_Start, channel.start),
        "agent_get": (_Get, channel.get),
        "agent_update": (_Update, channel.update),
        "agent_cancel": (_Cancel, channel.cancel),
    }

    async def on_call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        entry = handlers.get(params.name)
        if entry is None:
            return _error(f"Unknown tool: {params.name}")
        model, handler = entry
        try:
            return _result(await handler(model.model_validate(params.arguments or {})))
        except ValidationError as exc:
            return _error(f"Invalid arguments for {params.name}: {describe_validation_error(exc)}")
        except SessionNotFoundError:
            return _error(NOT_FOUND)
        except SessionError as exc:  # an unknown request, an answer that does not fit, a session ended
            return _error(str(exc))

    agent = runtime.agent
    return tools_server(
        name or agent.name, instructions=agent.instructions, tools=CHANNEL_TOOLS, on_call_tool=on_call_tool
    )
