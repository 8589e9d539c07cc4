"""Several `eve-py serve` processes on one PostgreSQL database cooperate: streams, answers, cancel, crashes.

Every test starts real server processes on 127.0.0.1 (`python -m eve_py serve --store URL`) and
drives them over HTTP; a worker "crashes" by SIGKILL to its PID.
"""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream

from tests.conftest import HITL_APP
from tests.server.helpers import eve_serve

pytestmark = pytest.mark.anyio

API = "/v26/eve/v1"  # eve 0.80.1's wire: these tests read its events
PICK = {"pickedIds": ["tpl_green"]}

LEDGER_AGENT = """
from eve_py import define_agent

agent = define_agent(model="anthropic/claude-sonnet-4.6", max_steps=12)
"""
LEDGER_TOOL = '''
import os

from eve_py import define_tool


def charge(cents: int) -> dict[str, int]:
    """Charge the card: one line in the ledger file per charge that ran."""
    with open(os.environ["EVE_TEST_LEDGER"], "a") as ledger:
        ledger.write(f"{cents} {os.getpid()}\\n")
    return {"charged": cents}


tool = define_tool(description="Charge the card.", execute=charge, needs_approval=True)
'''
LEDGER_MODEL = """
import os

import anyio

from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall


async def respond(request: MockModelRequest) -> str | MockResponse:
    text = (request.last_user_message or "").lower()
    if os.environ.get("EVE_TEST_STALL") and ("stall" in text or request.tool_results):
        await anyio.sleep_forever()  # this worker's step never ends: it must be cancelled or killed
    if "charge" in text and not request.tool_results_since_last_user_message:
        return MockResponse(tool_calls=[MockToolCall("charge", {"cents": 500})])
    if request.tool_results_since_last_user_message:
        return f"done: {request.tool_results_since_last_user_message[-1].output}"
    return "not stalled"


model = MockModel(respond)
"""


@pytest.fixture
def ledger_app(tmp_path: Path) -> Path:
    """An app whose approved `charge` writes a line per run to a ledger file, and whose model stalls
    in a worker started with `EVE_TEST_STALL=1`."""
    app = tmp_path / "ledger-app"
    (app / "agent" / "tools").mkdir(parents=True)
    (app / "agent" / "agent.py").write_text(LEDGER_AGENT)
    (app / "agent" / "tools" / "charge.py").write_text(LEDGER_TOOL)
    (app / "agent" / "mock_model.py").write_text(LEDGER_MODEL)
    return app


@asynccontextmanager
async def worker(
    app: Path, store: str, *extra: str, env: dict[str, str] | None = None
) -> AsyncIterator[tuple[str, Process]]:
    """One `eve-py serve` process on a free port; yields its API URL and the process."""
    async with eve_serve(store, None, *extra, app=app, env=env) as (url, process, _):
        yield url + API, process


async def post(url: str, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        return await http.post(path, json=body or {})


async def read_until(
    url: str, session_id: str, start: int, done: Callable[[dict[str, Any]], bool]
) -> list[dict[str, Any]]:
    """Follow the session's stream on `url` from `start` until an event satisfies `done` (at most 30 s)."""
    lines: list[dict[str, Any]] = []
    with anyio.fail_after(30):
        return await _follow(url, session_id, start, done, lines)


async def _follow(
    url: str, session_id: str, start: int, done: Callable[[dict[str, Any]], bool], lines: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=url, timeout=None) as http:
        while True:  # a quiet stream ends after its lease; reconnect from the cursor as eve's client does
            params = {"startIndex": start + len(lines)}
            async with http.stream("GET", f"/session/{session_id}/stream", params=params) as response:
                assert response.status_code == 200
                async for line in response.aiter_lines():
                    if line.strip():
                        lines.append(json.loads(line))
                        if done(lines[-1]):
                            return lines


async def start_session(url: str, message: str) -> tuple[str, list[dict[str, Any]]]:
    """Create a session with `message` on `url`; wait until it parks. Returns its id and the requests."""
    accepted = (await post(url, "/session", {"message": message})).json()
    session_id = accepted["sessionId"]
    events = await read_until(url, session_id, 0, lambda e: e["type"] == "turn.waiting")
    [requested] = [e for e in events if e["type"] == "input.requested"]
    return session_id, requested["data"]["requests"]


async def test_a_stream_on_one_worker_follows_a_turn_another_worker_runs_live(postgres_url: str) -> None:
    async with worker(HITL_APP, postgres_url) as (a, _), worker(HITL_APP, postgres_url, "--recheck-s", "30") as (b, _):
        session_id, [request] = await start_session(a, "help me pick a template")
        count = len(await read_until(b, session_id, 0, lambda e: e["type"] == "turn.waiting"))
        seen: list[dict[str, Any]] = []

        async def follow_on_b() -> None:
            seen.extend(await read_until(b, session_id, count, lambda e: e["type"] == "turn.completed"))

        # B re-reads the store on its own only every 30 s: only a push can bring A's events this soon.
        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(follow_on_b)
                answer = {"inputResponses": [{"requestId": request["requestId"], "value": PICK}]}
                assert (await post(a, f"/session/{session_id}", answer)).status_code == 202

    types = [e["type"] for e in seen]
    assert types[0] == "input.resolved" and types[-1] == "turn.completed"
    assert "Recorded your pick: tpl_green." in [e["data"].get("message") for e in seen]


async def test_concurrent_answers_through_different_workers_get_exactly_one_202(postgres_url: str) -> None:
    async with worker(HITL_APP, postgres_url) as (a, _), worker(HITL_APP, postgres_url) as (b, _):
        for pick in ("tpl_red", "tpl_blue"):  # twice: A first, then B first, roughly
            session_id, [request] = await start_session(a, "help me pick a template")
            statuses: list[int] = []

            async def answer(
                url: str, value: str, session_id: str = session_id, request_id: str = request["requestId"]
            ) -> None:
                body = {"inputResponses": [{"requestId": request_id, "value": {"pickedIds": [value]}}]}
                statuses.append((await post(url, f"/session/{session_id}", body)).status_code)  # noqa: B023

            async with anyio.create_task_group() as group:
                group.start_soon(answer, a, pick)
                group.start_soon(answer, b, "tpl_green")
            assert sorted(statuses) == [202, 409]
            events = await read_until(b, session_id, 0, lambda e: e["type"] == "turn.completed")
            assert [e["type"] for e in events].count("input.resolved") == 1


async def test_cancel_sent_to_any_worker_stops_the_turn_where_it_runs(ledger_app: Path, postgres_url: str) -> None:
    stalling = {"EVE_TEST_STALL": "1"}
    async with worker(ledger_app, postgres_url, env=stalling) as (a, _), worker(ledger_app, postgres_url) as (b, _):
        accepted = (await post(a, "/session", {"message": "stall here"})).json()
        session_id = accepted["sessionId"]
        await read_until(b, session_id, 0, lambda e: e["type"] == "message.received")

        with anyio.fail_after(10):
            cancelled = await post(b, f"/session/{session_id}/cancel")
            assert cancelled.status_code == 202
            events = await read_until(b, session_id, 0, lambda e: e["type"] == "session.waiting")
        assert [e["type"] for e in events][-2:] == ["turn.cancelled", "session.waiting"]


async def test_a_killed_worker_s_turn_is_finished_by_another_without_running_the_approved_charge_twice(
    ledger_app: Path, postgres_url: str, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger.txt"
    env = {"EVE_TEST_LEDGER": str(ledger)}
    lease = ("--lease-s", "1.5")
    async with AsyncExitStack() as stack:
        a, process_a = await stack.enter_async_context(
            worker(ledger_app, postgres_url, *lease, env=env | {"EVE_TEST_STALL": "1"})
        )
        b, _ = await stack.enter_async_context(worker(ledger_app, postgres_url, *lease, "--recheck-s", "0.3", env=env))
        session_id, [request] = await start_session(a, "charge me")
        approve = {"inputResponses": [{"requestId": request["requestId"], "optionId": "approve"}]}
        assert (await post(a, f"/session/{session_id}", approve)).status_code == 202
        with anyio.fail_after(20):
            await read_until(b, session_id, 0, lambda e: e["type"] == "action.result")
            assert ledger.read_text().split() == ["500", str(process_a.pid)]  # the charge ran, on A

            os.kill(process_a.pid, signal.SIGKILL)  # A dies inside the next model step
            events = await read_until(b, session_id, 0, lambda e: e["type"] == "turn.completed")

    assert "done: {'charged': 500}" in [e["data"].get("message") for e in events]
    assert len(ledger.read_text().splitlines()) == 1, "the approved charge ran once, on A only"


async def test_an_approval_sent_with_one_key_through_two_workers_at_once_charges_once(
    ledger_app: Path, postgres_url: str, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger.txt"
    env = {"EVE_TEST_LEDGER": str(ledger)}
    async with worker(ledger_app, postgres_url, env=env) as (a, _), worker(ledger_app, postgres_url, env=env) as (b, _):
        session_id, [request] = await start_session(a, "charge me")
        approve = {
            "inputResponses": [{"requestId": request["requestId"], "optionId": "approve"}],
            "idempotencyKey": "retry-me",
        }
        responses: list[httpx.Response] = []

        async def send(url: str) -> None:
            responses.append(await post(url, f"/session/{session_id}", approve))

        async with anyio.create_task_group() as group:
            group.start_soon(send, a)
            group.start_soon(send, b)
        ran = [r for r in responses if r.status_code == 202 and "x-eve-idempotent-replay" not in r.headers]
        assert len(ran) == 1, [(r.status_code, r.text) for r in responses]
        (other,) = [r for r in responses if r is not ran[0]]
        assert other.status_code in (202, 409), other.text
        assert other.json().get("code", "delivery_in_progress") == "delivery_in_progress"
        events = await read_until(b, session_id, 0, lambda e: e["type"] == "turn.completed")
        later = await post(b, f"/session/{session_id}", approve)  # after the turn: still the first receipt

    assert (later.status_code, later.json()["deliveryId"]) == (202, ran[0].json()["deliveryId"])
    assert [e["type"] for e in events].count("input.resolved") == 1
    assert len(ledger.read_text().splitlines()) == 1, "the approved charge ran once"


def children_of(pid: int) -> list[int]:
    """The PIDs of a process's children (Linux's /proc)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


async def test_serve_workers_runs_that_many_processes_replaces_a_killed_one_and_stops_them_all(
    postgres_url: str,
) -> None:
    async with eve_serve(postgres_url, None, "--workers", "2") as (base, parent, _):
        url = base + API
        await start_session(url, "help me pick a template")  # once the workers serve
        first = children_of(parent.pid)
        assert len(first) == 2

        os.kill(first[0], signal.SIGKILL)
        assert parent.stdout is not None
        with anyio.fail_after(30):
            seen = ""
            async for chunk in TextReceiveStream(parent.stdout):  # the replacement says it is ready
                seen += chunk
                if any(int(pid) not in first for pid in re.findall(r"worker (\d+) ready\n", seen)):
                    break
        workers = children_of(parent.pid)
        assert len(workers) == 2 and first[1] in workers and first[0] not in workers

        session_id, [request] = await start_session(url, "help me pick a template")
        answer = {"inputResponses": [{"requestId": request["requestId"], "value": PICK}]}
        assert (await post(url, f"/session/{session_id}", answer)).status_code == 202
        events = await read_until(url, session_id, 0, lambda e: e["type"] == "turn.completed")
        assert "Recorded your pick: tpl_green." in [e["data"].get("message") for e in events]

        parent.send_signal(signal.SIGTERM)
        with anyio.fail_after(20):
            assert await parent.wait() == 0
    for pid in workers:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # gone
