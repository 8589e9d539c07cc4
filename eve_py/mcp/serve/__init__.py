"""Serving an app's tools to MCP clients (`eve-py mcp APP_DIR`), on the SDK's lowlevel `Server`.

`mcp_server(agent)` builds the server; `serve_stdio` and `serve_http` (or `http_app`, a Starlette
app to mount) serve it. A resolver's `Elicit(...)`, an approval and a client-resolved tool's
result reach the client as elicitations, the way the SDK's own resolvers do on each protocol
era (`_calls`: one `tools/call`; `_rounds`: what a 2026-era call carries between rounds;
`_once`: a sealed state answers once, on every worker sharing a store). An app's resources and
prompts (`agent/resources/`, `agent/prompts/`: `define_resource`, `define_prompt`) are served
beside its tools, with completions (`_catalog`).
"""

from eve_py.mcp.serve._features import PromptMessage, define_prompt, define_resource
from eve_py.mcp.serve._once import request_state_security
from eve_py.mcp.serve._server import list_tools, mcp_server, mcp_tool
from eve_py.mcp.serve._transports import MCP_PATH, http_app, serve_http, serve_stdio

__all__ = (
    "MCP_PATH",
    "PromptMessage",
    "define_prompt",
    "define_resource",
    "http_app",
    "list_tools",
    "mcp_server",
    "mcp_tool",
    "request_state_security",
    "serve_http",
    "serve_stdio",
)
