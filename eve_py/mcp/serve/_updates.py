"""Resource updates: a tool's `ctx.notify_resource_updated(uri)` reaches every client subscribed to the URI.

A resource's `read` runs on every `resources/read`, so what it returns may change while the
server runs (a tool refunded an order that `orders://{order_id}` shows). The tool that changed
it says so, and each client that asked to hear about that URI gets
`notifications/resources/updated` with it, then reads it again:

- **Legacy era**: the client subscribed with `resources/subscribe` on its connection (stdio, or
  a streamable-HTTP session's standalone stream), until `resources/unsubscribe` or the end of
  the connection.
- **2026 era**: the client holds a `subscriptions/listen` stream whose `resourceSubscriptions`
  name the URI (the SDK's `ListenHandler` over its `InMemorySubscriptionBus`, as `MCPServer`
  serves it).

URIs match as exact strings. Only clients of this process hear it: workers behind a load
balancer would share a bus (the SDK's `SubscriptionBus` seam), which eve-py does not provide.
Lists never change while the server runs (the app's files are read once), so no
`list_changed` notification is ever published.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated

__all__ = ("ResourceUpdates", "connection_of")

logger = logging.getLogger("eve_py.mcp")


def connection_of(ctx: ServerRequestContext[Any, Any]) -> Any:
    """The request's connection, or None: the SDK's request context reaches it only through its
    session's private attribute (another SDK version may not have it)."""
    return getattr(ctx.session, "_connection", None)


class ResourceUpdates:
    """Who listens to which resource URI, on both eras, for one server."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        """The `subscriptions/listen` handler (2026 era)."""
        # URI -> the legacy-era connections subscribed to it; a connection that has ended drops out.
        self._subscribed: dict[str, weakref.WeakSet[Any]] = {}

    def subscribe(self, ctx: ServerRequestContext[Any, Any], uri: str) -> None:
        """`resources/subscribe`: the request's connection hears about `uri` from now on."""
        connection = connection_of(ctx)
        if connection is not None:
            self._subscribed.setdefault(uri, weakref.WeakSet()).add(connection)

    def unsubscribe(self, ctx: ServerRequestContext[Any, Any], uri: str) -> None:
        """`resources/unsubscribe`: the request's connection no longer hears about `uri`."""
        connection = connection_of(ctx)
        if connection is not None and uri in self._subscribed:
            self._subscribed[uri].discard(connection)

    async def updated(self, uri: str) -> None:
        """Tell every client listening to `uri` that it changed (a connection that has gone is forgotten)."""
        await self.bus.publish(ResourceUpdated(uri=uri))
        for connection in list(self._subscribed.get(uri, ())):
            try:
                await connection.send_resource_updated(uri)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                self._subscribed[uri].discard(connection)
                logger.debug("forgot the subscription to %s of a connection that has closed", uri)
