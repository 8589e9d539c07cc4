"""The agent itself as an MCP server: eve's MCP channel (`eve-py mcp APP_DIR --agent`).

`agent_channel(runtime)` serves the agent's sessions as MCP tools (send a message, answer an
input request, read an invocation), beside the app's own tools; serve it as `eve_py.mcp.serve`
serves a tools server.
"""

from eve_py.mcp.channel._server import CHANNEL_TOOLS, agent_channel

__all__ = ("CHANNEL_TOOLS", "agent_channel")
