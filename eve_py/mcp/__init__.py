"""MCP for eve-py (the `mcp` extra), both ways, with the official SDK; one subpackage per role.

- `eve_py.mcp.serve`: `mcp_server(agent)` builds the SDK server of an app's tools; `eve-py mcp
  APP_DIR` serves it over stdio or streamable HTTP. A resolver's `Elicit(...)`, an approval and
  a client-resolved tool's result reach the client as elicitations, the way the SDK's own
  resolvers do on each protocol era. `define_resource` and `define_prompt` (in `agent/resources/`
  and `agent/prompts/`) add resources, prompts and completions.
- `eve_py.mcp.channel`: the agent itself as eve's MCP channel (`eve-py mcp APP_DIR --agent`).
- `eve_py.mcp.connect`: `define_mcp_server(...)` exported from `agent/connections/NAME.py` gives
  the agent that server's tools (as `NAME__tool`); their questions park as `elicitation` input requests.
"""

from eve_py.mcp.connect import McpServerDefinition, define_mcp_server
from eve_py.mcp.serve import PromptMessage, define_prompt, define_resource, list_tools, mcp_server, mcp_tool

__all__ = (
    "McpServerDefinition",
    "PromptMessage",
    "define_mcp_server",
    "define_prompt",
    "define_resource",
    "list_tools",
    "mcp_server",
    "mcp_tool",
)
