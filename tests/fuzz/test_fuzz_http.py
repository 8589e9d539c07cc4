"""Random bodies, content types and origins POSTed at a parked batch over real HTTP (no token).

Derandomized and bounded. After each request: a 202 whose turn then settles, or a 4xx with
eve's JSON error body and the session exactly as before; never a 5xx; a 403 whenever the
request names another site as its `Origin`; the conversation paired.
One uvicorn on 127.0.0.1 serves every example (its event loop runs in a portal thread); each
example parks a session of its own.
"""

from __future__ import annotations

import json
import socket
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from eve_py import Runtime, check_pairing
from eve_py.server import create_app
from eve_py.sessions import MemorySessionStore
from tests.fuzz.batch import PARKED, TOOLS, build_agent, json_values, model, responses, texts, with_ids
from tests.server.helpers import BOUNDARIES

EVIL = "http://evil.example"

bodies = st.one_of(
    st.fixed_dictionaries({"inputResponses": st.lists(responses(), max_size=3)}),
    st.fixed_dictionaries({"message": st.one_of(texts, json_values)}),
    st.fixed_dictionaries({}, optional={"message": texts, "inputResponses": json_values, "clientContext": json_values}),
    json_values,
)
"""Bodies as Python data; `encode` turns them into bytes in one of several ways."""


def encode(body: Any, how: str, ids: list[str]) -> bytes:
    if isinstance(body, dict) and isinstance(body.get("inputResponses"), list):
        body = {
            **body,
            "inputResponses": [with_ids(r, ids) if isinstance(r, dict) else r for r in body["inputResponses"]],
        }
    if how == "ascii":  # NaN and Infinity as tokens, surrogates as \\ud800 escapes
        return json.dumps(body).encode()
    return json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")  # raw surrogates: not UTF-8


requests = st.fixed_dictionaries(
    {
        "body": st.one_of(bodies.map(lambda b: ("json", b)), st.binary(max_size=40).map(lambda b: ("raw", b))),
        "encoding": st.sampled_from(["ascii", "utf-8"]),
        "contentType": st.sampled_from(
            ["application/json", "application/json", "application/json; charset=utf-8", "text/plain", None]
        ),
        "origin": st.sampled_from([None, None, "own", EVIL, "null"]),
    }
)

STATUSES = {202, 400, 403, 409, 413, 415, 422}


@dataclass
class Server:
    portal: BlockingPortal
    runtime: Runtime
    runs: Counter[str]
    base: str
    client: httpx.Client
    """On the API root; one for all examples (a client costs its TLS set-up)."""


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    runs: Counter[str] = Counter()
    with start_blocking_portal("asyncio") as portal:
        runtime = Runtime(build_agent(runs), model=model(), store=MemorySessionStore())
        app = create_app(runtime, tokens=[], stream_lease_s=0.5)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        config = uvicorn.Config(app, log_config=None, lifespan="on", timeout_graceful_shutdown=1)
        uvicorn_server = uvicorn.Server(config)
        serving = portal.start_task_soon(uvicorn_server.serve, [sock])
        base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        try:
            # TCP_NODELAY: without it every POST waits ~40 ms on a delayed ACK (Nagle's algorithm).
            transport = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
            with httpx.Client(base_url=base + "/v26/eve/v1", timeout=10, transport=transport) as client:
                yield Server(portal, runtime, runs, base, client)
        finally:
            uvicorn_server.should_exit = True
            serving.result(timeout=10)
            sock.close()


def settle(client: httpx.Client, session_id: str, start: int, delivery_id: str | None = None) -> None:
    """Read the stream from `start` until the turn (of `delivery_id`'s message, if given) waits or ends."""
    with client.stream("GET", f"/session/{session_id}/stream", params={"startIndex": start}) as stream:
        for line in stream.iter_lines():
            if not line.strip():
                continue
            event = json.loads(line)
            if delivery_id is not None and delivery_id in event["meta"].get("deliveryIds", []):
                delivery_id = None
            if delivery_id is None and event["type"] in BOUNDARIES:
                return


@settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(request=requests)
@example(
    request={
        "body": ("json", {"inputResponses": [{"requestId": "@2", "value": {"cm": float("nan")}}]}),
        "encoding": "ascii",
        "contentType": "application/json",
        "origin": None,
    }
)
@example(
    request={"body": ("raw", b"[" * 100_000), "encoding": "ascii", "contentType": "application/json", "origin": None}
)
@example(
    request={"body": ("json", {"message": "go"}), "encoding": "ascii", "contentType": "text/plain", "origin": EVIL}
)
def test_random_http_requests_at_a_parked_batch_are_4xx_with_nothing_changed_or_accepted(
    server: Server, request: dict[str, Any]
) -> None:
    store, client = server.runtime.store, server.client
    created = client.post("/session", json={"message": "go"}).json()
    session_id = created["sessionId"]
    settle(client, session_id, created["startIndex"])
    state = client.get(f"/session/{session_id}").json()
    ids = [r["requestId"] for r in state["inputRequests"]]
    assert [r["action"]["toolName"] for r in state["inputRequests"]] == list(TOOLS) and len(ids) == len(PARKED)
    kind, body = request["body"]
    content = body if kind == "raw" else encode(body, request["encoding"], ids)
    headers = {"content-type": request["contentType"]} if request["contentType"] else {}
    if request["origin"] is not None:
        headers["origin"] = server.base if request["origin"] == "own" else request["origin"]
    before = (server.portal.call(store.load, session_id), server.portal.call(store.read_events, session_id))

    response = client.post(f"/session/{session_id}", content=content, headers=headers)

    assert response.status_code in STATUSES, (response.status_code, response.text)
    if request["origin"] in (EVIL, "null"):
        assert response.status_code == 403, "another site's page reached a server without a token"
    payload = response.json()
    if response.status_code == 202:
        settle(client, session_id, payload["startIndex"], payload.get("deliveryId"))
    else:
        assert payload["ok"] is False and isinstance(payload["code"], str) and payload["error"]
        after = (server.portal.call(store.load, session_id), server.portal.call(store.read_events, session_id))
        assert after == before, "a refused request changed the session"
    check_pairing(server.portal.call(store.read_messages, session_id))
    assert all(count == 1 for count in server.runs.values()), server.runs
