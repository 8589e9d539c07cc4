"""A light HTTP/1.1 client for `server_load.py`'s load generator: h11 on an anyio TCP stream.

`server_load.py` simulates N independent frontends with N clients in one process, on one CPU
when pinned. With httpx each request costs that process about 1-2 ms of CPU (httpx's and
httpcore's layers, its pool, its anyio backend), so 200 clients at once queue behind each other
in the load generator itself: in one measured round the requests reached the server about
0.3 s after they were sent and the `202`s were read about 0.5 s after the server wrote them
(docs/performance.md, issue 25 step 13). This client keeps what a frontend does on the wire
(one kept-alive connection per frontend, each request in one write, a stream's connection
closed by the client when it has read up to the turn boundary, a new connection for the next
request) and leaves out the rest. It offers the part of httpx's `AsyncClient` interface that
`server_load.py` uses; a failure of the connection itself is raised as httpx's
`TransportError`s, so resets are counted as they are with httpx.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlencode, urlsplit

import anyio
import anyio.abc
import h11
import httpx

__all__ = ("H11Client",)

_BROKEN = (OSError, anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, h11.ProtocolError)


class _Response:
    """A response read whole: httpx's `status_code`, `text`, `json()`, `raise_for_status()`."""

    def __init__(self, status_code: int, body: bytes) -> None:
        self.status_code = status_code
        self.content = body

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.content)

    def raise_for_status(self) -> None:
        if self.status_code >= 400:
            raise RuntimeError(f"HTTP {self.status_code}: {self.text[:300]}")


class _Connection:
    """One TCP connection, connected without `anyio.connect_tcp` (which resolves the address in a worker
    thread and races addresses in tasks of its own: more than the rest of a request costs here)."""

    def __init__(self, stream: anyio.abc.SocketStream) -> None:
        self._stream = stream
        self.h11 = h11.Connection(h11.CLIENT)

    @classmethod
    async def open(cls, host: str, port: int) -> _Connection:
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.connect_ex((host, port))
            await anyio.wait_writable(sock)
            error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if error:
                raise OSError(error, os.strerror(error))
            return cls(await anyio.abc.SocketStream.from_socket(sock))
        except BaseException:
            sock.close()
            raise

    async def send(self, data: bytes) -> None:
        await self._stream.send(data)

    async def close(self) -> None:
        await self._stream.aclose()

    async def next_event(self) -> Any:
        while True:
            event = self.h11.next_event()
            if event is not h11.NEED_DATA:
                return event
            try:
                data = await self._stream.receive(65536)
            except anyio.EndOfStream:
                data = b""
            self.h11.receive_data(data)


class _StreamResponse:
    """A response whose body is read as it comes: httpx's `status_code`, `aread()`, `text`, `aiter_lines()`."""

    def __init__(self, connection: _Connection, status_code: int) -> None:
        self._connection = connection
        self.status_code = status_code
        self.complete = False
        self._body = b""

    async def _chunks(self) -> AsyncIterator[bytes]:
        while not self.complete:
            event = await self._connection.next_event()
            if isinstance(event, h11.Data):
                yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                self.complete = True
            elif isinstance(event, h11.ConnectionClosed):
                raise httpx.RemoteProtocolError("the server closed the connection mid-response")

    async def aread(self) -> bytes:
        self._body = b"".join([chunk async for chunk in self._chunks()])
        return self._body

    @property
    def text(self) -> str:
        return self._body.decode("utf-8", "replace")

    async def aiter_lines(self) -> AsyncIterator[str]:
        pending = b""
        async for chunk in self._chunks():
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                yield line.decode("utf-8")
        if pending:
            yield pending.decode("utf-8")


class H11Client:
    """One frontend: requests to one origin over one kept-alive connection (a new one when it was closed).

    Args:
        url: The server's base URL (`http://host:port`).
        headers: Sent with every request (the bearer token).
    """

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        parts = urlsplit(url)
        self._address = (parts.hostname or "127.0.0.1", parts.port or 80)
        self._headers = [("host", parts.netloc), ("accept", "*/*"), *headers.items()]
        self._kept: _Connection | None = None
        self._kept_since = 0.0

    async def __aenter__(self) -> H11Client:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        kept, self._kept = self._kept, None
        if kept is not None:
            await kept.close()

    async def _start(self, method: str, path: str, body: bytes | None) -> tuple[_Connection, int]:
        """Send a request in one write on the kept connection (or a new one); its connection and status."""
        connection, self._kept = self._kept, None
        if connection is not None and anyio.current_time() - self._kept_since > _KEEP_ALIVE_S:
            await connection.close()  # the server may be closing it just now (uvicorn's 5 s)
            connection = None
        if connection is None:
            connection = await _Connection.open(*self._address)
        try:
            return await self._send(connection, method, path, body)
        except BaseException:
            await connection.close()
            raise

    async def _send(
        self, connection: _Connection, method: str, path: str, body: bytes | None
    ) -> tuple[_Connection, int]:
        headers = self._headers
        if body is not None:
            headers = [*headers, ("content-type", "application/json"), ("content-length", str(len(body)))]
        wire = connection.h11.send(h11.Request(method=method, target=path, headers=headers))
        if body is not None:
            wire += connection.h11.send(h11.Data(data=body))
        wire += connection.h11.send(h11.EndOfMessage())
        await connection.send(wire)
        event = await connection.next_event()
        while isinstance(event, h11.InformationalResponse):
            event = await connection.next_event()
        if not isinstance(event, h11.Response):
            raise httpx.RemoteProtocolError(f"the server closed the connection without a response ({event!r})")
        return connection, event.status_code

    async def _finish(self, connection: _Connection, response: _StreamResponse) -> None:
        """Keep the connection for the next request if the response was read whole and both ends keep it; else close."""
        h = connection.h11
        if response.complete and h.our_state is h11.DONE and h.their_state is h11.DONE:
            h.start_next_cycle()
            self._kept, self._kept_since = connection, anyio.current_time()
        else:
            await connection.close()

    async def _request(self, method: str, path: str, body: bytes | None) -> _Response:
        async with self.stream(method, path, body=body) as response:
            content = await response.aread()
        return _Response(response.status_code, content)

    async def post(self, path: str, *, json: Any) -> _Response:
        return await self._request("POST", path, _dumps(json))

    async def get(self, path: str) -> _Response:
        return await self._request("GET", path, None)

    @asynccontextmanager
    async def stream(
        self, method: str, path: str, *, params: dict[str, Any] | None = None, body: bytes | None = None
    ) -> AsyncIterator[_StreamResponse]:
        """A response to read as it comes; its connection is closed on exit unless it was read whole."""
        target = f"{path}?{urlencode(params)}" if params else path
        try:
            connection, status = await self._start(method, target, body)
        except _BROKEN as exc:
            raise httpx.ReadError(f"{type(exc).__name__}: {exc}") from exc
        response = _StreamResponse(connection, status)
        read = False
        try:
            yield response
            read = True
        except _BROKEN as exc:
            raise httpx.ReadError(f"{type(exc).__name__}: {exc}") from exc
        finally:
            if read:
                await self._finish(connection, response)
            else:
                await connection.close()


_KEEP_ALIVE_S = 4.0
"""A kept connection idle for longer is not used again (uvicorn closes idle ones after 5 s)."""


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode("utf-8")
