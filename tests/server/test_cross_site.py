"""A server without an API token serves its own pages only: no turns from other sites' pages.

Each request below is one a browser sends for a page on another site (a `no-cors` fetch or a
form POST, which need no CORS preflight) or after DNS rebinding (a foreign `Host`), over real
HTTP to uvicorn on 127.0.0.1.
"""

from __future__ import annotations

import signal
from pathlib import Path

import anyio
import httpx
import pytest

from eve_py.agent import Agent
from eve_py.client import Client
from tests.server.helpers import ALICE, Served, eve_serve, hitl_runtime, serve

pytestmark = pytest.mark.anyio

EVIL = "http://evil.example"


async def session_count(served: Served) -> int:
    return len(served.runtime.store._records)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("headers", "body"),
    [
        ({"origin": EVIL, "content-type": "text/plain"}, b'{"message": "help me pick a template"}'),
        ({"origin": EVIL, "content-type": "application/x-www-form-urlencoded"}, b"message=hi"),
        ({"origin": EVIL}, b""),
        ({"origin": EVIL, "content-type": "application/json"}, b'{"message": "hi"}'),
        ({"origin": "null", "content-type": "text/plain"}, b'{"message": "hi"}'),
        ({"origin": "http://127.0.0.1.evil.example", "content-type": "application/json"}, b'{"message": "hi"}'),
    ],
)
async def test_a_request_from_another_site_is_refused_and_starts_nothing(
    hitl_agent: Agent, headers: dict[str, str], body: bytes
) -> None:
    async with serve(hitl_runtime(hitl_agent), tokens=()) as served, served.client(None) as client:
        response = await client.post("/session", content=body, headers=headers)
        assert await session_count(served) == 0

    assert response.status_code == 403, response.text
    assert response.json()["code"] == "forbidden_origin"
    assert "EVE_API_TOKEN" in response.json()["error"]


async def test_a_foreign_host_is_refused_even_from_its_own_origin(hitl_agent: Agent) -> None:
    """DNS rebinding: evil.example resolves to 127.0.0.1, so its page is 'same-origin' with its Host."""
    async with serve(hitl_runtime(hitl_agent), tokens=()) as served, served.client(None) as client:
        port = served.base.rsplit(":", 1)[1]
        rebound = {"host": f"evil.example:{port}", "origin": f"http://evil.example:{port}"}
        created = await client.post("/session", json={"message": "hi"}, headers=rebound)
        read = await client.get("/health", headers={"host": f"evil.example:{port}"})
        async with httpx.AsyncClient(base_url=served.base) as browser:
            page = await browser.get("/", headers={"host": "evil.example"})
        assert await session_count(served) == 0

    assert created.status_code == read.status_code == page.status_code == 400


async def test_the_server_s_own_pages_and_clients_without_origin_are_served(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent), tokens=()) as served, served.client(None) as client:
        port = served.base.rsplit(":", 1)[1]
        own = await client.post("/session", json={"message": "hi"}, headers={"origin": served.base})
        by_name = await client.post(
            "/session",
            json={"message": "hi"},
            headers={"host": f"localhost:{port}", "origin": f"http://localhost:{port}"},
        )
        plain = await client.post("/session", json={"message": "hi"})  # curl, eve's client: no Origin

    assert own.status_code == by_name.status_code == plain.status_code == 202


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "application/ld+json"]
)
async def test_a_json_body_sent_as_another_type_is_refused(hitl_agent: Agent, content_type: str) -> None:
    async with serve(hitl_runtime(hitl_agent), tokens=()) as served, served.client(None) as client:
        response = await client.post("/session", content=b'{"message": "hi"}', headers={"content-type": content_type})
        assert await session_count(served) == 0

    assert response.status_code == 415 and response.json()["code"] == "unsupported_media_type"


async def test_listed_hosts_are_served_and_others_refused(hitl_agent: Agent) -> None:
    hosts = ["chat.lan", "*.corp.example"]
    async with serve(hitl_runtime(hitl_agent), tokens=(), allowed_hosts=hosts) as served, served.client(None) as client:
        listed = await client.get("/health", headers={"host": "chat.lan"})
        wildcard = await client.get("/health", headers={"host": "eve.corp.example:8443"})
        other = await client.get("/health", headers={"host": "corp.example.evil"})

    assert listed.status_code == wildcard.status_code == 200
    assert other.status_code == 400


async def test_with_a_token_the_token_is_the_guard(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, served.client(ALICE) as client:
        headers = {"origin": EVIL, "host": "eve.example.com"}
        allowed = await client.post("/session", json={"message": "hi"}, headers=headers)
        async with served.client(None) as anonymous:
            refused = await anonymous.post("/session", json={"message": "hi"}, headers=headers)

    assert allowed.status_code == 202
    assert refused.status_code == 401


async def test_eve_py_serve_answers_to_allowed_hosts_only(tmp_path: Path) -> None:
    async with eve_serve(tmp_path / "s.db", None, "--allowed-host", "chat.lan") as (url, process, _):
        async with httpx.AsyncClient(base_url=url) as http:
            listed = await http.get("/eve/v1/health", headers={"host": "chat.lan"})
            rebound = await http.post("/eve/v1/session", json={"message": "hi"}, headers={"host": "evil.example"})
            cross = await http.post(
                "/eve/v1/session", content=b'{"message": "hi"}', headers={"origin": EVIL, "content-type": "text/plain"}
            )
        async with Client(url) as client:
            assert (await client.result(await client.create_session("hello"), timeout_s=20)).status == "completed"
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(15):
            assert await process.wait() == 0

    assert listed.status_code == 200
    assert rebound.status_code == 400
    assert cross.status_code == 403
