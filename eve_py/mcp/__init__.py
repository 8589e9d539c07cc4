"""MCP for eve-py (the `mcp` extra): an app's tools served to MCP clients with the official SDK.

`mcp_server(agent)` builds the SDK server; `eve-py mcp APP_DIR` serves it over stdio or
streamable HTTP. A resolver's `Elicit(...)`, an approval and a client-resolved tool's result
reach the client as elicitations, the way the SDK's own resolvers do on each protocol era.
"""

from eve_py.mcp.server import list_tools, mcp_server, mcp_tool

__all__ = ("list_tools", "mcp_server", "mcp_tool")
