"""`eve-py serve` as a real subprocess: loopback without a token, refusal elsewhere, the API and the chat page."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import httpx
import pytest
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream

from eve_py.cli._serve import is_loopback
from eve_py.client import Client
from tests.conftest import HITL_APP, REPO
from tests.server.helpers import eve_serve

pytestmark = pytest.mark.anyio


async def stderr_of(process: Process) -> str:
    assert process.stderr is not None
    return "".join([chunk async for chunk in TextReceiveStream(process.stderr)])


async def test_serve_without_token_listens_on_loopback_warns_and_serves_the_flow(tmp_path: Path) -> None:
    async with eve_serve(tmp_path / "s.db", None) as (url, process, lines):
        assert url.startswith("http://127.0.0.1:")
        assert "agent-tools-hitl with model mock" in lines[0]
        async with Client(url) as client:
            parked = await client.result(await client.create_session("help me pick a template"), timeout_s=20)
            [request] = parked.input_requests
            answer = [{"requestId": request.request_id, "value": {"pickedIds": ["tpl_green"]}}]
            done = await client.result(await client.respond(parked.session_id, answer), timeout_s=20)
        assert done.message == "Recorded your pick: tpl_green."
        async with httpx.AsyncClient(base_url=url) as http:
            page = await http.get("/")
            script = await http.get("/static/chat.js")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert '<script src="/static/chat.js"' in page.text
        assert script.status_code == 200 and "javascript" in script.headers["content-type"]
        async with httpx.AsyncClient(base_url=url) as http:
            icon = await http.get("/favicon.ico")
        assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(15):
            code = await process.wait()
        errors = await stderr_of(process)
    assert code == 0
    assert "EVE_API_TOKEN is not set" in errors and "loopback only" in errors
    assert errors.count("authenticated") == 1, errors  # said once, not again by the app's own log


async def test_serve_with_token_requires_it(tmp_path: Path) -> None:
    async with eve_serve(tmp_path / "s.db", "cli-token-1") as (url, process, _):
        async with httpx.AsyncClient(base_url=url) as http:
            assert (await http.post("/eve/v1/session")).status_code == 401
            assert (await http.get("/eve/v1/health")).status_code == 200
        async with Client(url, token="cli-token-1") as client:
            accepted = await client.create_session("hello")
            assert (await client.result(accepted, timeout_s=20)).status == "completed"
        process.send_signal(signal.SIGTERM)
        with anyio.fail_after(15):
            code = await process.wait()
        errors = await stderr_of(process)
    assert code == 0
    assert "EVE_API_TOKEN is not set" not in errors
    assert "stopped; parked sessions stay parked" in errors


async def test_access_log_never_keeps_an_answer_links_token(tmp_path: Path) -> None:
    token = "eyJ2IjoxfQ.c2VjcmV0LXNpZ25hdHVyZQ"
    async with eve_serve(tmp_path / "s.db", None, "--access-log", "--log-level", "info") as (url, process, _):
        async with httpx.AsyncClient(base_url=url) as http:
            shown = await http.get(f"/eve/v1/answer/{token}", headers={"accept": "application/json"})
            answered = await http.post(f"/eve/v1/answer/{token}?from=mail", json={"optionId": "approve"})
            health = await http.get("/eve/v1/health")
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(15):
            await process.wait()
        assert process.stdout is not None
        logged = "".join([chunk async for chunk in TextReceiveStream(process.stdout)])
        logged += await stderr_of(process)
    assert (shown.status_code, answered.status_code, health.status_code) == (403, 403, 200)
    assert token not in logged and "c2VjcmV0" not in logged
    assert '"GET /eve/v1/answer/[token] HTTP/1.1" 403' in logged, logged
    assert '"POST /eve/v1/answer/[token]?from=mail HTTP/1.1" 403' in logged, logged
    assert '"GET /eve/v1/health HTTP/1.1" 200' in logged, logged  # the rest of the log is as it was


async def _link_url(url: str, forwarded: dict[str, str]) -> str:
    """The URL of an answer link made by a request that says a proxy forwarded it from `https://chat.example`."""
    async with Client(url) as client:
        parked = await client.result(await client.create_session("help me pick a template"), timeout_s=20)
    [request] = parked.input_requests
    async with httpx.AsyncClient(base_url=f"{url}/eve/v1") as http:
        made = await http.post(
            f"/session/{parked.session_id}/links", json={"requestId": request.request_id}, headers=forwarded
        )
    assert made.status_code == 201, made.text
    link: str = made.json()["url"]
    return link


async def test_forwarded_headers_count_only_from_the_proxies_named(tmp_path: Path) -> None:
    forwarded = {"x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.7"}
    async with eve_serve(tmp_path / "a.db", None) as (url, _, _):  # a proxy on this machine, as uvicorn's default
        https = url.replace("http://", "https://", 1)
        assert (await _link_url(url, forwarded)).startswith(f"{https}/eve/v1/answer/")
    async with eve_serve(tmp_path / "b.db", None, "--forwarded-allow-ips", "192.0.2.1") as (url, _, _):
        assert (await _link_url(url, forwarded)).startswith(f"{url}/eve/v1/answer/")
    async with eve_serve(tmp_path / "c.db", None, env={"FORWARDED_ALLOW_IPS": "*"}) as (url, _, _):
        assert (await _link_url(url, forwarded)).startswith("https://")


async def test_serve_refuses_a_non_loopback_host_without_a_token(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "EVE_API_TOKEN"}
    command = [sys.executable, "-m", "eve_py", "serve", str(HITL_APP), "--model", "mock", "--host", "0.0.0.0"]
    result = await anyio.run_process([*command, "--store", str(tmp_path / "s.db")], cwd=REPO, env=env, check=False)
    assert result.returncode == 2
    assert b"refusing to listen on 0.0.0.0 without authentication" in result.stderr
    assert not (tmp_path / "s.db").exists()


def test_is_loopback() -> None:
    for host in ("127.0.0.1", "127.8.0.1", "localhost", "::1", "[::1]", "LOCALHOST"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "::", "192.168.1.10", "example.com", "10.0.0.1"):
        assert not is_loopback(host), host
