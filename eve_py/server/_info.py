"""What `GET /eve/v1/health` and `GET /eve/v1/info` answer, in the shapes eve 0.80.1's client checks.

`health` is eve's `{ok: true, status: "ready", workflowId}`. `info` is eve's agent-info
document (`kind: "eve-agent-info"`, the version eve 0.80.1's `Client.info()` validates): the
agent, its tools (with their input and output schemas, `hasExecute: false` for client-resolved
ones, `requiresApproval`), its instructions and the eve channel's routes. What eve-py does not
have (skills, schedules, connections, hooks, memories, subagents, a sandbox) is reported empty.
"""

from __future__ import annotations

from typing import Any

from eve_py.agent import Agent
from eve_py.authoring._approval import asks_never
from eve_py.tools import ResolvedTool

__all__ = ("AGENT_INFO_VERSION", "ROUTES", "agent_info", "health")

AGENT_INFO_VERSION = 5
"""The agent-info version eve 0.80.1's client accepts."""

ROUTES: tuple[tuple[str, str], ...] = (
    ("GET", "/eve/v1/health"),
    ("HEAD", "/eve/v1/health"),
    ("GET", "/eve/v1/info"),
    ("POST", "/eve/v1/session"),
    ("GET", "/eve/v1/session/:sessionId"),
    ("POST", "/eve/v1/session/:sessionId"),
    ("GET", "/eve/v1/session/:sessionId/stream"),
    ("POST", "/eve/v1/session/:sessionId/cancel"),
    ("POST", "/eve/v1/session/:sessionId/clear"),
    ("POST", "/eve/v1/session/:sessionId/compact"),
    ("POST", "/eve/v1/session/:sessionId/end"),
    ("POST", "/eve/v1/session/:sessionId/reset"),
)
"""The eve channel's routes as eve-py serves them (method, eve's path pattern)."""

_APP = {"kind": "application"}


def health(agent: Agent) -> dict[str, Any]:
    """The health body: `{ok: true, status: "ready", workflowId: "eve-py:<agent name>"}`."""
    return {"ok": True, "status": "ready", "workflowId": f"eve-py:{agent.name}"}


def _module(logical_path: str, source_id: str, owner: dict[str, Any], backing: dict[str, Any]) -> dict[str, Any]:
    """A module source with its binding (eve requires one, with the same path and owner)."""
    return {
        "binding": {"backing": backing, "logicalPath": logical_path, "owner": owner},
        "logicalPath": logical_path,
        "owner": owner,
        "sourceId": source_id,
        "sourceKind": "module",
    }


def _file(path: str) -> dict[str, Any]:
    return {"externalDependencies": [], "kind": "filesystem", "sourcePath": path}


def _framework(module_id: str) -> dict[str, Any]:
    return {"kind": "programmatic", "moduleId": module_id, "registryId": "eve-py", "revision": "1"}


def _tool(tool: ResolvedTool) -> dict[str, Any]:
    if tool.path.startswith("eve:"):
        owner: dict[str, Any] = {"feature": tool.name, "kind": "framework"}
        source = _module(tool.path, tool.path, owner, _framework(tool.path))
    else:
        source = _module(f"tools/{tool.path}", f"tool:{tool.name}", _APP, _file(f"agent/{tool.path}"))
    entry: dict[str, Any] = {
        **source,
        "name": tool.name,
        "description": tool.description,
        "hasAuth": False,
        "hasExecute": tool.plan is not None,
        "hasModelOutputProjection": tool.to_model_output is not None,
        "hasOutputSchema": tool.output_schema is not None,
        "inputSchema": tool.input_schema,
        "requiresApproval": not asks_never(tool.needs_approval),
    }
    if tool.output_schema is not None:
        entry["outputSchema"] = tool.output_schema
    return entry


def agent_info(agent: Agent, *, model_id: str | None) -> dict[str, Any]:
    """The agent-info document for `agent`, served by a model named `model_id` (None: not configured)."""
    root = str(agent.app_dir) if agent.app_dir is not None else "."
    config = _module("agent.py", "agent:config", _APP, _file("agent/agent.py"))
    channel_owner = {"feature": "eve-channel", "kind": "framework"}
    routes = [
        {
            **_module("channels/eve", f"eve-channel:{method} {path}", channel_owner, _framework("eve-py:channel")),
            "method": method,
            "name": "eve",
            "urlPath": path,
        }
        for method, path in ROUTES
    ]
    instructions = []
    if agent.instructions:
        instructions.append(
            {
                "content": agent.instructions,
                "logicalPath": "instructions.md",
                "name": "instructions",
                "owner": _APP,
                "role": "system",
                "sourceId": "instructions:static",
                "sourceKind": "markdown",
            }
        )
    return {
        "agent": {
            "agentRoot": f"{root}/agent",
            "appRoot": root,
            "config": config,
            "model": {"id": model_id or "unconfigured", "routing": {"kind": "external", "provider": "eve-py"}},
            "name": agent.name,
            "nodeId": "root",
        },
        "capabilities": {"devRoutes": False},
        "channels": {"routes": routes, "shadowed": []},
        "composition": {"disabled": [], "shadowed": []},
        "connections": [],
        "diagnostics": {"discoveryErrors": 0, "discoveryWarnings": 0},
        "hooks": [],
        "instructions": {"dynamic": [], "static": instructions},
        "kernelEffects": [],
        "kind": "eve-agent-info",
        "memories": [],
        "mode": "production",
        "remoteAgents": {"entries": [], "total": 0},
        "sandbox": {
            **_module(
                "eve-py:no-sandbox",
                "eve-py:no-sandbox",
                {"feature": "sandbox", "kind": "framework"},
                _framework("eve-py:no-sandbox"),
            ),
            "revisionHash": "none",
        },
        "schedules": [],
        "skills": {"dynamic": [], "static": []},
        "subagents": {"local": [], "total": 0},
        "tools": {"dynamic": [], "static": [_tool(tool) for tool in agent.tools.values()]},
        "version": AGENT_INFO_VERSION,
        "workspace": {"resourceRoot": None, "rootEntries": []},
    }
