"""MCP for eve-py (the `mcp` extra), both ways, with the official SDK.

- Serving: `mcp_server(agent)` builds the SDK server of an app's tools; `eve-py mcp APP_DIR`
  serves it over stdio or streamable HTTP. A resolver's `Elicit(...)`, an approval and a
  client-resolved tool's result reach the client as elicitations, the way the SDK's own
  resolvers do on each protocol era.
- Using: `define_mcp_server(...)` exported from `agent/connections/NAME.py` gives the agent
  that server's tools (as `NAME__tool`); their questions park as `elicitation` input requests.
"""

from eve_py.mcp.connections import McpServerDefinition, define_mcp_server
from eve_py.mcp.server import list_tools, mcp_server, mcp_tool

__all__ = ("McpServerDefinition", "define_mcp_server", "list_tools", "mcp_server", "mcp_tool")
