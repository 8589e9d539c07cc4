"""The client counts every streamed line as a log entry: a reconnect resumes after the last event it yielded."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest

from eve_py.client import Client
from eve_py.protocol import MessageAppended, is_turn_boundary

pytestmark = pytest.mark.anyio

STEP = {"sequence": 0, "turnId": "t1", "stepIndex": 0}


def line(type_: str, index: int, **data: object) -> bytes:
    event = {"type": type_, "data": data, "meta": {"id": f"evt_{index}", "at": "2026-11-21T00:00:00.000Z"}}
    return json.dumps(event).encode() + b"\n"


def delta(n: int) -> bytes:
    return line("message.appended", 1 + n, **STEP, messageDelta=f"w{n} ")


class CutAfterTwoDeltas(httpx.AsyncByteStream):
    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield line("step.started", 0, **STEP, modelId="m")
        yield delta(0)
        yield delta(1)
        raise httpx.ReadError("connection cut")


class Rest(httpx.AsyncByteStream):
    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield delta(2)
        yield delta(3)
        yield line("message.completed", 5, **STEP, finishReason="stop", message="w0 w1 w2 w3 ")
        yield line("turn.completed", 6, sequence=0, turnId="t1")
        yield line("session.waiting", 7, continuationToken="", wait="next-user-message")


async def test_a_reconnected_stream_yields_each_delta_once() -> None:
    starts: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        starts.append(request.url.params["startIndex"])
        first = len(starts) == 1
        return httpx.Response(
            200,
            headers={"x-eve-start-index": request.url.params["startIndex"], "x-eve-stream-version": "26"},
            stream=CutAfterTwoDeltas() if first else Rest(),
        )

    http = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    texts: list[str] = []
    async with Client("http://eve.test", http=http) as client:
        async for event in client.stream("ses_1"):
            if isinstance(event, MessageAppended):
                texts.append(event.data.message_delta)
            if is_turn_boundary(event):
                break
    await http.aclose()

    assert texts == ["w0 ", "w1 ", "w2 ", "w3 "]
    assert starts == ["0", "3"], "reconnects after the three events it yielded"
