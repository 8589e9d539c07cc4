"""`eve_py.client.Client` against a real server: flows, result(), errors as exceptions, stream reconnects."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import anyio
import pytest
from anyio.abc import SocketAttribute, SocketStream

from eve_py import (
    InputResponse,
    InvalidAnswerError,
    RequestAlreadyAnsweredError,
    SessionNotFoundError,
    SessionNotWaitingError,
    SessionStateError,
    UnknownRequestError,
)
from eve_py.agent import Agent
from eve_py.client import Client
from eve_py.errors import ApiError, AuthenticationError, SessionConflictError
from eve_py.protocol import AnyEvent, UnknownEvent, is_turn_boundary, parse_event
from tests.server.helpers import ALICE, GatedModel, hitl_runtime, serve

pytestmark = pytest.mark.anyio


async def test_client_runs_the_picker_flow_to_completion(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, Client(served.base, token=ALICE) as client:
        assert (await client.health())["workflowId"] == "eve-py:agent-tools-hitl"
        info = await client.info()
        tools = info["tools"]
        assert isinstance(tools, dict) and isinstance(tools["static"], list)
        assert {tool["name"] for tool in tools["static"] if isinstance(tool, dict)} >= {"ask_question", "note"}
        accepted = await client.create_session("help me pick a template")
        assert accepted.start_index == 1 and accepted.turn_id is not None
        assert accepted.delivery_id is not None

        parked = await client.result(accepted, timeout_s=10)
        assert parked.status == "waiting"
        assert parked.session_id == accepted.session_id and parked.turn_id == accepted.turn_id
        [request] = parked.input_requests
        assert request.action.tool_name == "ask_question"
        assert request.option_ids() == ["tpl_blue", "tpl_red", "tpl_green"]
        assert [e.type for e in parked.events][-2:] == ["input.requested", "turn.waiting"]
        assert request.response_schema is not None and "pickedIds" in request.response_schema["properties"]

        answer = InputResponse(request_id=request.request_id, option_id="tpl_blue")  # a bare pick
        done = await client.result(await client.respond(accepted.session_id, [answer]), timeout_s=10)
        assert done.status == "completed"
        assert done.message == "Recorded your pick: tpl_blue."
        assert done.input_requests == []
        assert done.error is None

        remote = await client.get_session(accepted.session_id)
        assert remote.status == "idle" and remote.input_requests == []
        assert remote.turn is not None and remote.turn.status == "completed"

        again = await client.result(await client.send(accepted.session_id, "thanks"), timeout_s=10)
        assert again.status == "completed" and again.turn_id != accepted.turn_id


async def test_result_follows_two_parks_in_one_turn_and_a_partial_answer(hitl_agent: Agent) -> None:
    async with serve(hitl_runtime(hitl_agent)) as served, Client(served.base, token=ALICE) as client:
        first = await client.result(await client.create_session("set up a palette"), timeout_s=10)
        session_id = first.session_id
        [template] = first.input_requests
        second = await client.result(
            await client.respond(session_id, [{"requestId": template.request_id, "optionId": "tpl_red"}]), timeout_s=10
        )
        assert second.status == "waiting" and second.turn_id == first.turn_id
        assert second.message == "Good choice. One more thing:"
        [colour] = second.input_requests
        assert colour.prompt == "Which accent colour?"
        done = await client.result(
            await client.respond(session_id, [{"requestId": colour.request_id, "value": {"pickedIds": ["blue"]}}]),
            timeout_s=10,
        )
        assert done.status == "completed"
        assert done.message is not None and "template tpl_red, accent blue" in done.message

        review = await client.result(await client.send(session_id, "review my page"), timeout_s=10)
        by_kind = {r.kind: r for r in review.input_requests}
        assert set(by_kind) == {"tool-approval", "question"}
        partial = await client.result(
            await client.respond(session_id, [{"requestId": by_kind["question"].request_id, "optionId": "red"}]),
            timeout_s=10,
        )
        assert partial.status == "waiting"  # the approval is required: the batch waits for it
        assert [r.request_id for r in partial.input_requests] == [by_kind["tool-approval"].request_id]
        approved = await client.result(
            await client.respond(
                session_id, [{"requestId": by_kind["tool-approval"].request_id, "optionId": "approve"}]
            ),
            timeout_s=10,
        )
        assert approved.status == "completed"
        assert approved.message is not None and "guarded-echo-ok-T4Q9" in approved.message


async def test_errors_come_back_as_the_session_exceptions(hitl_agent: Agent) -> None:
    model = GatedModel()
    async with serve(hitl_runtime(hitl_agent, model=model)) as served, Client(served.base, token=ALICE) as client:
        parked = await client.result(await client.create_session("help me pick a template"), timeout_s=10)
        session_id = parked.session_id
        request_id = parked.input_requests[0].request_id

        with pytest.raises(InvalidAnswerError, match="tpl_purple") as invalid:
            await client.respond(session_id, [{"requestId": request_id, "optionId": "tpl_purple"}])
        assert invalid.value.request_id == request_id
        with pytest.raises(UnknownRequestError):
            await client.respond(session_id, [{"requestId": "nope", "optionId": "tpl_blue"}])
        with pytest.raises(SessionNotFoundError) as missing:
            await client.get_session("ses_missing")
        assert missing.value.session_id == "ses_missing"
        with pytest.raises(ApiError) as bad:
            await client.respond(session_id, [])
        assert bad.value.status == 400 and bad.value.code == "bad_request"

        done = await client.result(
            await client.respond(session_id, [{"requestId": request_id, "optionId": "tpl_green"}]), timeout_s=10
        )
        assert done.status == "completed"
        with pytest.raises(RequestAlreadyAnsweredError) as twice:
            await client.respond(session_id, [{"requestId": request_id, "optionId": "tpl_red"}])
        assert isinstance(twice.value, SessionConflictError)
        with pytest.raises(SessionNotWaitingError):
            await client.respond(session_id, [{"requestId": "other", "optionId": "tpl_red"}])

        slow = await client.send(session_id, "be slow")
        with anyio.fail_after(5):
            await model.entered.wait()
        with pytest.raises(SessionStateError) as busy:
            await client.send(session_id, "hurry up")
        assert busy.value.status == "running"
        assert await client.cancel(session_id) is True
        cancelled = await client.result(slow, timeout_s=10)
        assert cancelled.status == "failed" and cancelled.error == "The turn was cancelled."
        assert await client.cancel(session_id) is False, "nothing runs and nothing is parked"

    async with serve(hitl_runtime(hitl_agent)) as served, Client(served.base, token="not-a-token") as stranger:
        with pytest.raises(AuthenticationError) as denied:
            await stranger.create_session()
        assert denied.value.status == 401


async def test_client_token_defaults_to_the_environment(hitl_agent: Agent, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVE_API_TOKEN", f"{ALICE},other")
    async with serve(hitl_runtime(hitl_agent)) as served, Client(served.base) as client:
        accepted = await client.create_session()
        assert accepted.turn_id is None and accepted.start_index is None
        assert [e.type async for e in client.stream(accepted.session_id, follow=False)] == ["session.started"]


class CuttingProxy:
    """A TCP proxy on 127.0.0.1 that cuts the first `/stream` connection when `cut` is set."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.cut = anyio.Event()
        self.stream_connections = 0

    async def handle(self, downstream: SocketStream) -> None:
        async with downstream, await anyio.connect_tcp("127.0.0.1", self.target_port) as upstream:
            async with anyio.create_task_group() as group:

                async def cutter() -> None:
                    await self.cut.wait()
                    group.cancel_scope.cancel()  # closes both sockets mid-response

                async def requests() -> None:
                    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                        async for chunk in downstream:
                            if chunk.startswith(b"GET ") and b"/stream?" in chunk.split(b"\r\n", 1)[0]:
                                self.stream_connections += 1
                                if self.stream_connections == 1:
                                    group.start_soon(cutter)
                            await upstream.send(chunk)
                    group.cancel_scope.cancel()

                async def responses() -> None:
                    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                        async for chunk in upstream:
                            await downstream.send(chunk)
                    group.cancel_scope.cancel()

                group.start_soon(requests)
                group.start_soon(responses)


@asynccontextmanager
async def cutting_proxy(target_port: int) -> AsyncIterator[tuple[CuttingProxy, int]]:
    proxy = CuttingProxy(target_port)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, proxy.handle)
        yield proxy, listener.extra(SocketAttribute.local_port)
        group.cancel_scope.cancel()


async def test_stream_reconnects_from_the_last_index_after_the_connection_breaks(hitl_agent: Agent) -> None:
    model = GatedModel()
    async with serve(hitl_runtime(hitl_agent, model=model)) as served:
        server_port = int(served.base.rsplit(":", 1)[1])
        async with (
            cutting_proxy(server_port) as (proxy, port),
            Client(f"http://127.0.0.1:{port}", token=ALICE) as client,
        ):
            accepted = await client.create_session("be slow")
            got: list[AnyEvent] = []
            with anyio.fail_after(10):
                async for event in client.stream(accepted.session_id):
                    got.append(event)
                    if event.type == "message.received":
                        proxy.cut.set()  # the connection dies while the model step still runs
                        model.release.set()
                    if is_turn_boundary(event):
                        break
            whole = [e async for e in client.stream(accepted.session_id, follow=False)]
            tail = [e async for e in client.stream(accepted.session_id, -2, follow=False)]
    assert proxy.stream_connections >= 2
    assert [e.meta.id for e in got if e.meta] == [e.meta.id for e in whole if e.meta]  # nothing lost or repeated
    assert [e.type for e in got][-3:] == ["step.completed", "turn.completed", "session.waiting"]
    assert [e.meta.id for e in tail if e.meta] == [e.meta.id for e in whole[-2:] if e.meta]


async def test_client_reads_an_unknown_event_type_as_passed_through(hitl_agent: Agent) -> None:
    data = {"callId": "c", "kind": "tool", "name": "n", "taskId": "t", "turnId": "x"}
    raw = json.dumps({"type": "task.started", "data": data, "meta": {"id": "evt_1", "at": "2026-01-01T00:00:00.000Z"}})
    event = parse_event(raw)
    assert isinstance(event, UnknownEvent)
    assert event.type == "task.started" and event.data == {
        "callId": "c",
        "kind": "tool",
        "name": "n",
        "taskId": "t",
        "turnId": "x",
    }
    assert json.loads(event.line()) == json.loads(raw), "passed on as it came"
