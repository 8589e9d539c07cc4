"""An agent's tools as an MCP server, built on the SDK's lowlevel `Server`.

```python
from eve_py.agent import load_agent
from eve_py.mcp import mcp_server

server = mcp_server(load_agent("fixtures/refund-desk-mcp"))
async with mcp.Client(server) as client:   # or serve_stdio(server) / streamable_http_app(server)
    await client.call_tool("refund_order", {"order_id": "ORD-7001", "reason": "broken"})
```

Each tool is listed with the model-facing input schema the agent's model sees (resolver-filled
and `ToolContext` parameters left out) and its output schema. The SDK's `RequestStateBoundary`
seals every 2026-era `requestState` this server mints (AES-GCM under a process-local key by
default, expiring, bound to the tool, its arguments and the audience) and rejects a tampered,
expired or rebound one with `-32602 Invalid or expired requestState` before any tool code runs;
a state used once already is refused the same way (`_once`: its nonce is recorded in the store).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

from eve_py._version import version
from eve_py.agent import Agent
from eve_py.mcp.serve._calls import call_legacy, call_modern
from eve_py.mcp.serve._catalog import load_catalog, serve_catalog
from eve_py.mcp.serve._drive import call_site, uses_input_required
from eve_py.mcp.serve._notify import on_set_level
from eve_py.mcp.serve._once import Nonces
from eve_py.mcp.serve._pages import DEFAULT_PAGE_SIZE, Pages
from eve_py.mcp.serve._results import unknown_tool_result
from eve_py.mcp.serve._updates import ResourceUpdates
from eve_py.sessions import MemorySessionStore, SessionStore
from eve_py.tools import ResolvedTool

__all__ = ("CallToolHandler", "list_tools", "mcp_server", "mcp_tool", "tools_server")

CallToolHandler = Callable[
    [ServerRequestContext[Any, Any], types.CallToolRequestParams],
    Awaitable[types.CallToolResult | types.InputRequiredResult],
]
"""The SDK's `tools/call` handler signature."""


def mcp_tool(tool: ResolvedTool) -> types.Tool:
    """How one eve-py tool is listed to MCP clients."""
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_schema,
        output_schema=tool.output_schema if tool.output_schema and tool.output_schema.get("type") == "object" else None,
    )


def list_tools(agent: Agent) -> list[types.Tool]:
    """Every tool of `agent` as MCP lists it, in the agent's order."""
    return [mcp_tool(tool) for tool in agent.tools.values()]


class _FixedListsServer(Server[Any]):
    """The SDK's lowlevel server, declaring that its lists never change.

    eve-py reads an app's tools, resources and prompts once, so no `list_changed` is ever sent.
    On the 2026 era the SDK derives every `listChanged` flag from `subscriptions/listen` being
    served, which it is for resource updates (`_updates`); this server declares them false there
    too, as it does on the legacy era, so a client does not wait for list changes.
    """

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        """See `Server.get_capabilities`, with every `listChanged` false."""
        capabilities = super().get_capabilities(
            notification_options, experimental_capabilities, extensions, protocol_version=protocol_version
        )
        fixed = {
            kind: capability.model_copy(update={"list_changed": False})
            for kind, capability in (
                ("tools", capabilities.tools),
                ("prompts", capabilities.prompts),
                ("resources", capabilities.resources),
            )
            if capability is not None
        }
        return capabilities.model_copy(update=fixed)


def tools_server(
    name: str,
    *,
    instructions: str | None,
    tools: list[types.Tool],
    on_call_tool: CallToolHandler,
    page_size: int = DEFAULT_PAGE_SIZE,
) -> Server[Any]:
    """An SDK lowlevel server that lists `tools` (fixed for its lifetime) and calls them with `on_call_tool`.

    `tools/list` answers `page_size` tools at a time, with an opaque `nextCursor` to the next page;
    a cursor that is not one of this list's is `-32602 Invalid cursor`.
    """
    pages = Pages("tools", tools, lambda tool: tool.name, size=page_size)
    schemas = {tool.name: tool.input_schema for tool in tools}

    async def on_list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        page, next_cursor = pages.page(params.cursor if params is not None else None)
        return types.ListToolsResult(tools=page, next_cursor=next_cursor)

    return _FixedListsServer(
        name,
        version=version(),
        instructions=instructions,
        get_tool_input_schema=schemas.get,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def mcp_server(
    agent: Agent,
    *,
    name: str | None = None,
    request_state_security: RequestStateSecurity | None = None,
    store: SessionStore | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
) -> Server[Any]:
    """The SDK server that serves `agent`'s tools (both protocol eras, any SDK transport).

    Args:
        agent: The loaded agent (`load_agent(app_dir)`); its framework tools are served too.
        name: The server's name (and the sealed state's audience); the agent's name by default.
        request_state_security: How `requestState` is sealed; `RequestStateSecurity.ephemeral()`
            (a key of this process only) by default. Pass shared `keys=` for several workers
            (`await shared_request_state_security(store)` keeps one in the store).
        store: Where the nonce of each used `requestState` is recorded, so that a state answers
            at most once; a `MemorySessionStore` of this server by default. Several workers
            share one store (SQLite file or PostgreSQL) as they share the keys.
        page_size: How many items a page of `tools/list` holds (the rest follow `nextCursor`).
    """
    security = request_state_security or RequestStateSecurity.ephemeral()
    nonces = Nonces(store=store or MemorySessionStore(), ttl=security.ttl)
    updates = ResourceUpdates()

    async def on_call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        tool = agent.tools.get(params.name)
        if tool is None:
            return unknown_tool_result(params.name)
        site = call_site(ctx, updates)
        if uses_input_required(ctx.protocol_version):
            return await call_modern(tool, params, site, nonces)
        return await call_legacy(tool, params, site, session=ctx.session, request_id=ctx.request_id)

    server_name = name or agent.name
    server = tools_server(
        server_name,
        instructions=agent.instructions,
        tools=list_tools(agent),
        on_call_tool=on_call_tool,
        page_size=page_size,
    )
    # Registered, not passed to `Server(...)`: the constructor warns that logging is deprecated
    # on the 2026 era, where this method does not exist; legacy-era clients still use it.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, on_set_level)
    serve_catalog(server, load_catalog(agent.app_dir), nonces=nonces, updates=updates, page_size=page_size)
    server.middleware.append(RequestStateBoundary(security, default_audience=server_name))
    return server
