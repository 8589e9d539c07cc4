"""The client skips the running step's deltas a reconnected stream sends again."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest

from eve_py.client import Client

pytestmark = pytest.mark.anyio


def line(type_: str, index: int, **data: object) -> bytes:
    event = {"type": type_, "data": data, "meta": {"id": f"evt_{type_}_{index}", "at": "2026-11-21T00:00:00.000Z"}}
    return json.dumps(event).encode() + b"\n"


def delta(n: int) -> bytes:
    return line("message.delta", n, turnId="t1", stepIndex=0, deltaIndex=n, kind="text", text=f"w{n} ")


class CutAfterTwoDeltas(httpx.AsyncByteStream):
    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield line("step.started", 0, turnId="t1", stepIndex=0)
        yield delta(0)
        yield delta(1)
        raise httpx.ReadError("connection cut")


class Replay(httpx.AsyncByteStream):
    async def __aiter__(self) -> AsyncIterator[bytes]:
        for n in range(4):  # the server sends the running step's deltas again
            yield delta(n)
        yield line("message.completed", 1, turnId="t1", stepIndex=0, text="w0 w1 w2 w3")
        yield line("turn.completed", 2, turnId="t1", status="completed")


async def test_a_reconnected_stream_yields_each_delta_once() -> None:
    starts: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        starts.append(request.url.params["startIndex"])
        first = len(starts) == 1
        return httpx.Response(
            200,
            headers={"x-eve-start-index": request.url.params["startIndex"]},
            stream=CutAfterTwoDeltas() if first else Replay(),
        )

    http = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    async with Client("http://eve.test", http=http) as client:
        texts = [e.data.get("text") async for e in client.stream("ses_1") if e.type == "message.delta"]
    await http.aclose()

    assert texts == ["w0 ", "w1 ", "w2 ", "w3 "]
    assert starts == ["0", "1"], "reconnects after the one stored event it yielded"
