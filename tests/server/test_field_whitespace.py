"""Header values are read as HTTP defines them: the spaces and tabs around a value are not part of it.

RFC 9110 section 5.5. uvicorn's h11 parser strips them, its httptools parser (the one
`eve-py[server]` installs) keeps the ones after a value; both servers read the same either way.
httpx refuses to send such values, so each request here is written byte for byte on a socket.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import anyio
import pytest

from eve_py.agent import Agent
from tests.mcp.conftest import REFUND_MCP_APP, serving_http
from tests.server.helpers import ALICE, hitl_runtime, serve

pytestmark = pytest.mark.anyio

PARSERS = ["h11", "httptools"]


async def exchange(url: str, request: str, fields: dict[str, str], body: bytes = b"") -> tuple[int, bytes]:
    """Send `request` (`METHOD /path`) with `fields` written exactly as given; the status and the body."""
    address = urlsplit(url)
    assert address.hostname is not None and address.port is not None
    lines = [f"{request} HTTP/1.1", *(f"{name}:{value}" for name, value in fields.items())]
    lines += [f"Content-Length: {len(body)}", "Connection: close", "", ""]
    received = b""
    with anyio.fail_after(20):
        async with await anyio.connect_tcp(address.hostname, address.port) as stream:
            await stream.send("\r\n".join(lines).encode() + body)
            try:
                while True:
                    received += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                pass
    head, _, content = received.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), content


@pytest.mark.parametrize("http", PARSERS)
async def test_a_bearer_token_and_content_type_with_whitespace_around_them_are_accepted(
    hitl_agent: Agent, http: str
) -> None:
    async with serve(hitl_runtime(hitl_agent), http=http) as served:
        host = f"127.0.0.1:{served.base.rsplit(':', 1)[1]}"
        fields = {"Host": host, "Authorization": f" \tBearer {ALICE} \t ", "Content-Type": "application/json\t "}
        status, body = await exchange(served.base, "POST /eve/v1/session", fields, b'{"message": "hi"}')
        wrong, _ = await exchange(served.base, "POST /eve/v1/session", fields | {"Authorization": "Bearer no \t"})

    assert status == 202, body
    assert json.loads(body)["ok"] is True
    assert wrong == 401


@pytest.mark.parametrize("http", PARSERS)
async def test_host_and_origin_with_whitespace_around_them_name_the_server_s_own_site(
    hitl_agent: Agent, http: str
) -> None:
    async with serve(hitl_runtime(hitl_agent), tokens=(), http=http) as served:
        host = f"127.0.0.1:{served.base.rsplit(':', 1)[1]}"
        own = {"Host": f"{host} \t", "Origin": f"  http://{host}\t ", "Content-Type": "application/json"}
        created, body = await exchange(served.base, "POST /eve/v1/session", own, b'{"message": "hi"}')
        by_name, _ = await exchange(served.base, "GET /eve/v1/health", {"Host": "\tlocalhost \t"})
        foreign, _ = await exchange(served.base, "GET /eve/v1/health", {"Host": "evil.example \t"})
        other_site, _ = await exchange(served.base, "POST /eve/v1/session", own | {"Origin": "http://evil.example "})

    assert created == 202, body
    assert by_name == 200
    assert (foreign, other_site) == (400, 403)


async def test_the_mcp_server_matches_mcp_name_and_host_without_the_whitespace_around_them() -> None:
    """`eve-py mcp --http`: the SDK compares `Mcp-Name` with the body's tool name, and `Host` with loopback names."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"name": "refund_order", "arguments": {}, "_meta": meta}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    with serving_http(REFUND_MCP_APP) as url:
        request, host = f"POST {urlsplit(url).path}", urlsplit(url).netloc
        fields = {
            "Host": f"{host} \t",
            "Content-Type": "application/json \t",
            "Accept": "application/json, text/event-stream\t",
            "MCP-Protocol-Version": "2026-07-28 ",
            "Mcp-Method": "\ttools/call ",
            "Mcp-Name": "  refund_order \t ",
        }
        body = json.dumps(call).encode()
        status, answer = await exchange(url, request, fields, body)
        other, mismatch = await exchange(url, request, fields | {"Mcp-Name": "ask_question \t"}, body)

    assert status == 200, answer
    assert json.loads(answer)["result"]["isError"] is True  # the call reached the tool: its arguments are missing
    assert other == 400, mismatch
