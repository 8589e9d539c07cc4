"""Connecting an agent to MCP servers: `define_mcp_server(...)` in `agent/connections/NAME.py`.

The agent gets that server's tools (as `NAME__tool`), listed once when the app loads
(`connection_tools`); a call's elicitations park as `elicitation` input requests like any other.
"""

from eve_py.mcp.connect._definition import McpServerDefinition, define_mcp_server
from eve_py.mcp.connect._loading import connection_tools

__all__ = ("McpServerDefinition", "connection_tools", "define_mcp_server")
