"""One MCP session per connected server per process (per event loop), shared by every call.

The first call to a server opens its session (starts the stdio command, or opens the HTTP
session) in a task of its own that keeps it open; later calls, from any session of the agent,
reuse it. A session that fails (the process died, the connection dropped, a call timed out) is
closed and dropped, and the next call opens a new one. `aclose()` closes the session
(`Runtime.aclose()` calls it for the agent's connections).

A server's own requests are answered for the call they belong to (`CallHandlers`: its
elicitations from the call's recorded answers, sampling by the agent's model, roots from the
connection's configuration). On the 2026 era those requests come back as `input_required`
rounds inside the call's own task, so calls run side by side; on the legacy era they arrive on
the session and name no call, so calls to a legacy-era server take turns on its session.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import mcp_types as types
from mcp.client import Client, ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import is_version_at_least

from eve_py.mcp.connect._definition import McpServerDefinition, open_client

__all__ = ("CallHandlers", "ServerSession")

_MODERN = "2026-07-28"


@dataclass(frozen=True, kw_only=True, slots=True)
class CallHandlers:
    """How one call answers its server's requests."""

    elicit: Callable[[types.ElicitRequestParams], Awaitable[types.ElicitResult | types.ErrorData]]
    sample: Callable[[types.CreateMessageRequestParams], Awaitable[types.CreateMessageResult | types.ErrorData]]
    roots: Callable[[], Awaitable[types.ListRootsResult | types.ErrorData]] | None


_CALL: contextvars.ContextVar[CallHandlers | None] = contextvars.ContextVar("eve_py_mcp_call", default=None)
"""The handlers of the call running in this task (2026-era rounds are answered in the call's task)."""


def in_call_task() -> bool:
    """Whether a server request is being answered in its call's own task (2026 era), not the session's."""
    return _CALL.get() is not None


@dataclass(kw_only=True)
class _Live:
    """An open session: its client, the event that closes it, and (legacy era) whose turn it is."""

    client: Client
    closed: anyio.Event
    done: anyio.Event
    modern: bool
    turn: anyio.Lock = field(default_factory=anyio.Lock)
    current: CallHandlers | None = None


@dataclass(kw_only=True)
class ServerSession:
    """The session of one connection (`agent/connections/NAME.py`), opened on first use."""

    server: McpServerDefinition
    app_dir: Path
    _live: dict[int, _Live] = field(default_factory=dict)
    _opening: dict[int, anyio.Lock] = field(default_factory=dict)

    def _handlers(self, key: int) -> CallHandlers | None:
        live = self._live.get(key)
        return _CALL.get() or (live.current if live is not None else None)

    def _callbacks(self, key: int) -> dict[str, Any]:
        async def on_elicit(
            context: ClientRequestContext, params: types.ElicitRequestParams
        ) -> types.ElicitResult | types.ErrorData:
            handlers = self._handlers(key)
            return await handlers.elicit(params) if handlers else _no_call()

        async def on_sample(
            context: ClientRequestContext, params: types.CreateMessageRequestParams
        ) -> types.CreateMessageResult | types.ErrorData:
            handlers = self._handlers(key)
            return await handlers.sample(params) if handlers else _no_call()

        async def on_roots(context: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
            handlers = self._handlers(key)
            return await handlers.roots() if handlers and handlers.roots else _no_call()

        roots = {"list_roots_callback": on_roots} if self.server.roots else {}
        return {"elicitation_callback": on_elicit, "sampling_callback": on_sample, **roots}

    async def _open(self, key: int) -> _Live:
        opened: list[_Live] = []
        ready = anyio.Event()
        failure: list[BaseException] = []
        scope = anyio.CancelScope()
        closed, done = anyio.Event(), anyio.Event()

        async def own() -> None:
            try:
                with scope:
                    async with AsyncExitStack() as stack:
                        client = await stack.enter_async_context(
                            open_client(self.server, cwd=self.app_dir, **self._callbacks(key))
                        )
                        modern = is_version_at_least(client.protocol_version, _MODERN)
                        opened.append(_Live(client=client, closed=closed, done=done, modern=modern))
                        ready.set()
                        await closed.wait()
            except BaseException as exc:  # reported to the caller that opened it
                failure.append(exc)
                if isinstance(exc, anyio.get_cancelled_exc_class()):
                    raise
            finally:
                ready.set()
                done.set()

        spawn = _spawner()
        assert spawn is not None
        task = spawn(own())
        _TASKS.add(task)
        task.add_done_callback(_TASKS.discard)
        try:
            await ready.wait()
        except BaseException:
            scope.cancel()  # the caller gave up (a timeout): stop opening, stop the command
            with anyio.move_on_after(5, shield=True):
                await done.wait()
            raise
        if not opened:
            raise failure[0] if failure else RuntimeError("the MCP session closed while it opened")
        return opened[0]

    async def _session(self) -> _Live:
        key = id(_loop())
        live = self._live.get(key)
        if live is not None:
            return live
        async with self._opening.setdefault(key, anyio.Lock()):
            live = self._live.get(key)
            if live is None:
                live = self._live[key] = await self._open(key)
        return live

    async def _drop(self, live: _Live) -> None:
        for key, found in list(self._live.items()):
            if found is live:
                del self._live[key]
        live.closed.set()
        with anyio.move_on_after(5, shield=True):
            await live.done.wait()

    async def call(self, name: str, arguments: Mapping[str, Any], handlers: CallHandlers) -> types.CallToolResult:
        """Call tool `name` on the shared session, `handlers` answering the server's requests.

        A failed session (anything but the server's own JSON-RPC error, or a cancellation) is
        dropped before the error propagates, so the next call reconnects.

        Raises:
            MCPError: The server refused the call.
            Exception: Whatever the SDK raises when the server cannot be started, reached or
                read (the session is dropped).
        """
        if _spawner() is None:
            return await self._call_alone(name, arguments, handlers)
        live = await self._session()
        token = _CALL.set(handlers)
        try:
            if live.modern:
                return await live.client.call_tool(name, dict(arguments))
            async with live.turn:
                live.current = handlers
                try:
                    return await live.client.call_tool(name, dict(arguments))
                finally:
                    live.current = None
        except anyio.get_cancelled_exc_class():
            raise  # the call was abandoned (it parks) or timed out (`RemoteToolPlan` drops the session then)
        except MCPError as exc:
            if exc.error.code == types.CONNECTION_CLOSED:
                await self._drop(live)
            raise
        except BaseException:
            await self._drop(live)
            raise
        finally:
            _CALL.reset(token)

    async def _call_alone(
        self, name: str, arguments: Mapping[str, Any], handlers: CallHandlers
    ) -> types.CallToolResult:
        token = _CALL.set(handlers)
        try:
            async with open_client(self.server, cwd=self.app_dir, **self._callbacks(-1)) as client:
                return await client.call_tool(name, dict(arguments))
        finally:
            _CALL.reset(token)

    async def aclose(self) -> None:
        """Close this event loop's session, if open (a later call opens a new one)."""
        live = self._live.get(id(_loop()))
        if live is not None:
            await self._drop(live)


def _no_call() -> types.ErrorData:
    return types.ErrorData(code=types.INVALID_REQUEST, message="no call of this client is waiting for an answer")


def _loop() -> object:
    """This event loop (asyncio's loop, trio's token): sessions are kept per loop."""
    return anyio.lowlevel.current_token().native_token


def _spawner() -> Callable[[Coroutine[Any, Any, None]], Any] | None:
    """How to start a task that outlives the call starting it, or None where the loop cannot.

    anyio starts tasks only in task groups, which end with the block that opened them; a shared
    session must outlive the call that opens it, so it is started as a task of the loop itself
    (asyncio's `create_task`; the returned task is kept in `_TASKS`). On trio, each call opens
    its own session instead.
    """
    return getattr(_loop(), "create_task", None)


_TASKS: set[Any] = set()
"""The session owners running (an asyncio loop keeps only weak references to its tasks)."""
