"""A tool's `ctx.report_progress`, `ctx.log`, `ctx.sample` and `ctx.list_roots` as MCP messages to the calling client.

- Progress becomes `notifications/progress` on the call's own stream, only when the client
  asked for it (a `progressToken` in the call's `_meta`; otherwise the SDK sends nothing).
- A log entry becomes `notifications/message` when the client listens at that level: on the
  legacy era, at or above the level its `logging/setLevel` chose for the connection (every level
  until it does); on the 2026 era, at or above the level the call's own `_meta` asks for
  (`io.modelcontextprotocol/logLevel`; nothing without it), as the SDK's sessions decide.
- Sampling is a `sampling/createMessage` request to the client, related to the call, where the
  client declared the sampling capability and the connection can carry a request to it; roots
  are a `roots/list` request the same way. (On the 2026 era they wait a round instead:
  `_asking.RoundChannel`.)
- `ctx.notify_resource_updated(uri)` goes to every client subscribed to the URI (`_updates`).

Nothing is built until a tool reports: a call whose tool never does pays for one object.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.connection import allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp.shared.message import ServerMessageMetadata

from eve_py._context import LOG_LEVELS, ClientFeature, LogLevel, Root
from eve_py._json import JsonValue
from eve_py.errors import ToolError
from eve_py.mcp.serve._asking import offered, roots_of, sampled_text, sampling_request
from eve_py.mcp.serve._updates import ResourceUpdates, connection_of

__all__ = ("LEVEL_STATE_KEY", "ClientChannel", "on_set_level")

LEVEL_STATE_KEY = "eve:log_level"
"""Where a legacy-era connection keeps the level its client set (`Connection.state`)."""


_AT_OR_ABOVE: dict[object, frozenset[str]] = {level: frozenset(LOG_LEVELS[i:]) for i, level in enumerate(LOG_LEVELS)}
"""The levels a client hears once `logging/setLevel` chose each level."""


def _connection_state(ctx: ServerRequestContext[Any, Any]) -> dict[str, Any] | None:
    """The per-connection scratch state of the call's connection.

    Without the connection (`connection_of`) the level is not kept and every level is sent.
    """
    state = getattr(connection_of(ctx), "state", None)
    return state if isinstance(state, dict) else None


async def on_set_level(ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams) -> types.EmptyResult:
    """`logging/setLevel`: this connection's tools log at `params.level` and above from now on."""
    state = _connection_state(ctx)
    if state is not None:
        state[LEVEL_STATE_KEY] = params.level
    return types.EmptyResult()


class ClientChannel:
    """The `ToolChannel` of one `tools/call`: its progress, logs and sampling go to the calling client."""

    __slots__ = ("_ctx", "_levels", "_updates")

    def __init__(self, ctx: ServerRequestContext[Any, Any], updates: ResourceUpdates | None = None) -> None:
        self._ctx = ctx
        self._levels: frozenset[str] | None = None
        self._updates = updates

    def _listening(self, level: LogLevel) -> bool:
        if self._levels is None:
            levels: frozenset[str] = allowed_log_levels(self._ctx.protocol_version, self._ctx.meta)
            state = _connection_state(self._ctx)
            chosen = None if state is None else _AT_OR_ABOVE.get(state.get(LEVEL_STATE_KEY))
            self._levels = levels if chosen is None else levels & chosen
        return level in self._levels

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """See `ToolChannel.progress` (nothing is sent unless the call carried a progress token)."""
        await self._ctx.session.report_progress(progress, total, message)

    async def log(self, level: LogLevel, data: JsonValue, logger: str | None) -> None:
        """See `ToolChannel.log` (sent only at a level the client listens to)."""
        if not self._listening(level):
            return
        params = types.LoggingMessageNotificationParams(level=level, data=data, logger=logger)
        notification = types.LoggingMessageNotification(params=params)
        await self._ctx.session.send_notification(notification, related_request_id=self._ctx.request_id)

    def offers(self, feature: ClientFeature) -> bool:
        """See `ToolChannel.offers`: what the client declared."""
        return offered(self._ctx.session.client_capabilities, feature)

    async def resource_updated(self, uri: str) -> None:
        """See `ToolChannel.resource_updated`: every client of this server subscribed to `uri` hears it."""
        if self._updates is not None:
            await self._updates.updated(uri)

    def _can_ask(self, feature: ClientFeature, what: str) -> None:
        if not self.offers(feature):
            raise ToolError(f"{what} unavailable: the MCP client did not declare the {feature} capability")
        if not self._ctx.session.can_send_request:
            raise ToolError(f"{what} unavailable: this connection cannot carry a request to the MCP client")

    async def sample(self, prompt: str, *, system_prompt: str | None, max_tokens: int) -> str:
        """See `ToolChannel.sample`: the client's model answers `prompt`.

        Raises:
            ToolError: The client did not declare sampling, the connection cannot carry a
                request to the client, or the model answered with something other than text.
            MCPError: The client refused the request.
        """
        self._can_ask("sampling", "sampling is")
        request = sampling_request(prompt, system_prompt=system_prompt, max_tokens=max_tokens)
        metadata = ServerMessageMetadata(related_request_id=self._ctx.request_id)
        return sampled_text(await self._ctx.session.send_request(request, types.CreateMessageResult, metadata=metadata))

    async def list_roots(self) -> list[Root]:
        """See `ToolChannel.list_roots`: the client's `roots/list` answer.

        Raises:
            ToolError: The client did not declare roots, or the connection cannot carry a request to it.
            MCPError: The client refused the request.
        """
        self._can_ask("roots", "roots are")
        metadata = ServerMessageMetadata(related_request_id=self._ctx.request_id)
        return roots_of(
            await self._ctx.session.send_request(types.ListRootsRequest(), types.ListRootsResult, metadata=metadata)
        )
