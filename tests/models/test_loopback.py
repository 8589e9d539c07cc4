"""End-to-end runs of fixtures/agent-tools-hitl through the real adapters and a loopback HTTP server.

The server (`fake_provider`) speaks OpenAI Chat Completions and Anthropic Messages, JSON and
SSE, checks every body with the provider's pairing rule, and answers with the app's own mock
model script. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import anyio
import httpx
import pytest

from eve_py import InputResponse, Runtime, load_agent
from eve_py.agent import load_mock_model
from eve_py.harness import Committed
from eve_py.models import AnthropicModel, ChatCompletionsModel, Model, ModelRequest, RetryPolicy, ToolMessage
from eve_py.protocol import ActionInputAppended, Event, MessageAppended, MessageCompleted, TurnFailed
from eve_py.testing import MockModel
from tests.conftest import HITL_APP
from tests.models.fake_provider import Brain, FakeProvider, Reply, ReplyCall, mock_brain, running_fake_provider

pytestmark = pytest.mark.anyio

KEY = "sk-test-SECRET-0123456789"
WIRES = ["openai", "anthropic"]


@dataclass
class FakeSleep:
    """Records the waits a retry policy asks for; never sleeps."""

    waits: list[float] = field(default_factory=list)
    now: float = 0.0

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def app_brain() -> Brain:
    model = load_mock_model(HITL_APP)
    assert isinstance(model, MockModel)
    return mock_brain(model)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        yield http


def make_model(
    wire: str,
    server: FakeProvider,
    client: httpx.AsyncClient,
    *,
    stream: bool | None = None,
    retry: RetryPolicy | None = None,
) -> Model:
    if wire == "openai":
        return ChatCompletionsModel(
            "anthropic/claude-sonnet-4.6",
            base_url=server.openai_base_url,
            api_key=KEY,
            client=client,
            stream=stream,
            retry=retry,
        )
    return AnthropicModel(
        "claude-sonnet-4-6", base_url=server.anthropic_base_url, api_key=KEY, client=client, stream=stream, retry=retry
    )


class Recorder:
    """An `on_event` listener keeping every event handed to it, deltas included."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, committed: Committed) -> None:
        self.events += committed.events

    def of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.type == kind]


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
@pytest.mark.parametrize("wire", WIRES)
async def test_the_template_picker_parks_resumes_and_completes_over_the_wire(
    wire: str, stream: bool, client: httpx.AsyncClient
) -> None:
    async with running_fake_provider(app_brain()) as server:
        runtime = Runtime(load_agent(HITL_APP), model=make_model(wire, server, client, stream=stream))
        session = await runtime.create_session()

        with anyio.fail_after(5):
            parked = await session.send("help me pick a template")
            [request] = parked.input_requests
            done = await session.respond(
                [InputResponse(request_id=request.request_id, value={"pickedIds": ["tpl_blue"]})]
            )

    assert parked.status == "waiting"
    assert request.action.tool_name == "ask_question"
    assert request.action.input["ui"] == {"kind": "template"}
    assert done.status == "completed"
    assert done.message == "Recorded your pick: tpl_blue."
    assert server.rejections == []
    assert len(server.received) == 3
    first = server.received[0]
    assert [bool(r.body.get("stream")) for r in server.received] == [stream] * 3
    if wire == "openai":
        assert first.headers["authorization"] == f"Bearer {KEY}"
        assert first.body["messages"][0] == {"role": "system", "content": runtime.agent.instructions}
        assert {t["function"]["name"] for t in first.body["tools"]} >= {"ask_question", "note", "guarded_echo"}
    else:
        assert first.headers["x-api-key"] == KEY
        assert first.headers["anthropic-version"] == "2023-06-01"
        assert first.body["system"] == runtime.agent.instructions
        assert first.body["max_tokens"] > 0
        assert {t["name"] for t in first.body["tools"]} >= {"ask_question", "note", "guarded_echo"}


@pytest.mark.parametrize("wire", WIRES)
async def test_streamed_text_and_tool_call_pieces_are_stored_as_appended_events(
    wire: str, client: httpx.AsyncClient
) -> None:
    recorder = Recorder()
    async with running_fake_provider(app_brain(), fragment=5) as server:
        runtime = Runtime(load_agent(HITL_APP), model=make_model(wire, server, client), on_event=recorder)
        session = await runtime.create_session()
        with anyio.fail_after(5):
            parked = await session.send("set up a palette")
            [first] = parked.input_requests
            second = await session.respond([InputResponse(request_id=first.request_id, option_id="tpl_green")])

    assert second.status == "waiting", "the second park of the same turn"
    assert server.received[0].body["stream"] is True, "a listener makes the model stream"
    calls = [e for e in recorder.events if isinstance(e, ActionInputAppended)]
    call_id = first.action.call_id
    assert calls[0].data.tool_name == "ask_question"
    assert calls[0].data.call_id == call_id
    assert (
        json.loads("".join(d.data.input_text_delta for d in calls if d.data.call_id == call_id)) == first.action.input
    )
    text = "".join(e.data.message_delta for e in recorder.events if isinstance(e, MessageAppended))
    [completed] = [e for e in recorder.events if isinstance(e, MessageCompleted)]
    assert text == completed.data.message == "Good choice. One more thing:"
    stored = await session.events()
    assert [e.meta.id for e in stored] == [e.meta.id for e in recorder.events], "every delta is stored, in order"


@pytest.mark.parametrize("wire", WIRES)
async def test_an_approval_denial_reaches_the_model_as_an_error_result(wire: str, client: httpx.AsyncClient) -> None:
    async with running_fake_provider(app_brain()) as server:
        runtime = Runtime(load_agent(HITL_APP), model=make_model(wire, server, client))
        session = await runtime.create_session()
        with anyio.fail_after(5):
            [request] = (await session.send("run the guarded echo")).input_requests
            done = await session.respond([InputResponse(request_id=request.request_id, option_id="deny", text="no")])

    assert done.message is not None and done.message.startswith("The guarded echo did not run")
    last = server.received[-1].body
    if wire == "anthropic":
        [result] = [b for m in last["messages"] for b in m["content"] if b["type"] == "tool_result"]
        assert result["is_error"] is True
    else:
        [result] = [m for m in last["messages"] if m["role"] == "tool"]
        assert "denied" in result["content"].lower()
    assert server.rejections == []


@pytest.mark.parametrize("wire", WIRES)
async def test_parallel_calls_in_one_step_round_trip_with_one_result_each(wire: str, client: httpx.AsyncClient) -> None:
    async with running_fake_provider(app_brain()) as server:
        runtime = Runtime(load_agent(HITL_APP), model=make_model(wire, server, client))
        session = await runtime.create_session()
        with anyio.fail_after(5):
            requests = (await session.send("review my page")).input_requests
            answers = [
                InputResponse(request_id=r.request_id, option_id="approve" if r.kind == "tool-approval" else "red")
                for r in requests
            ]
            done = await session.respond(answers)

    assert done.status == "completed"
    assert done.message == "The guarded echo ran and returned the token guarded-echo-ok-T4Q9. Colour: red."
    assert server.rejections == []
    [tool_message] = [m for m in (await session.messages()) if isinstance(m, ToolMessage)]
    assert [p.tool_name for p in tool_message.content] == ["guarded_echo", "ask_question", "note"]


@pytest.mark.parametrize("wire", WIRES)
async def test_a_provider_400_fails_the_turn_without_leaking_the_key_and_the_session_can_send_again(
    wire: str, client: httpx.AsyncClient
) -> None:
    recorder = Recorder()
    body = json.dumps({"error": {"type": "invalid_request_error", "message": f"bad request for key {KEY}"}})
    async with running_fake_provider(app_brain()) as server:
        runtime = Runtime(load_agent(HITL_APP), model=make_model(wire, server, client), on_event=recorder)
        session = await runtime.create_session()
        server.fail_next(400, body=body)
        with anyio.fail_after(5):
            failed = await session.send("hello")
            again = await session.send("hello again")

    assert failed.status == "failed"
    [event] = [e for e in recorder.events if isinstance(e, TurnFailed)]
    assert event.data.code == "MODEL_ERROR"
    message = event.data.message
    assert message.startswith("ModelHTTPError: ")
    assert "HTTP 400" in message and "invalid_request_error: bad request for key [redacted]" in message
    assert KEY not in message and KEY not in json.dumps([e.model_dump(mode="json") for e in recorder.events])
    assert len(server.received) == 2, "a 400 is not retried"
    assert again.status == "completed"
    assert again.message is not None and again.message.startswith("Try ")


@pytest.mark.parametrize("wire", WIRES)
async def test_429_and_503_are_retried_honouring_retry_after_then_succeed(wire: str, client: httpx.AsyncClient) -> None:
    sleep = FakeSleep()
    retry = RetryPolicy(sleep=sleep, clock=sleep.clock, random=lambda: 0.5)
    async with running_fake_provider(app_brain()) as server:
        runtime = Runtime(load_agent(HITL_APP), model=make_model(wire, server, client, retry=retry))
        session = await runtime.create_session()
        server.fail_next(429, body='{"error": {"message": "slow down"}}', headers={"retry-after": "7"})
        server.fail_next(503, body="upstream unavailable")
        with anyio.fail_after(5):
            done = await session.send("hello")

    assert done.status == "completed"
    assert len(server.received) == 3
    assert sleep.waits == [7.0, 0.75], "Retry-After exactly, then equal-jitter backoff of the 2nd retry (1 s * 0.75)"


@pytest.mark.parametrize("wire", WIRES)
async def test_a_dropped_connection_is_retried(wire: str, client: httpx.AsyncClient) -> None:
    sleep = FakeSleep()
    async with running_fake_provider(app_brain()) as server:
        model = make_model(wire, server, client, retry=RetryPolicy(sleep=sleep, clock=sleep.clock))
        session = await Runtime(load_agent(HITL_APP), model=model).create_session()
        server.drop_next()
        with anyio.fail_after(5):
            done = await session.send("hello")

    assert done.status == "completed"
    assert len(sleep.waits) == 1


def broken_then_fixed() -> Brain:
    """Calls `note` with broken JSON arguments, then (seeing the error) with valid ones, then answers."""

    async def think(request: ModelRequest, wire: str) -> Reply:
        results = [p for m in request.messages if isinstance(m, ToolMessage) for p in m.content]
        prefix = "toolu_" if wire == "anthropic" else "call_"
        if not results:
            return Reply(calls=[ReplyCall(id=f"{prefix}bad", name="note", arguments='{"text": "unterminated')])
        if len(results) == 1:
            assert results[0].is_error
            return Reply(calls=[ReplyCall(id=f"{prefix}good", name="note", arguments='{"text": "fixed"}')])
        return Reply(text=f"noted: {results[-1].output}")

    return think


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
async def test_invalid_json_arguments_get_an_error_result_and_the_model_corrects_itself(
    stream: bool, client: httpx.AsyncClient
) -> None:
    async with running_fake_provider(broken_then_fixed()) as server:
        # JSON mode only exists on the Chat Completions wire: Anthropic's JSON `input` is always an object.
        runtime = Runtime(load_agent(HITL_APP), model=make_model("openai", server, client, stream=stream))
        session = await runtime.create_session()
        with anyio.fail_after(5):
            done = await session.send("take a note")

    assert done.status == "completed"
    [bad, good] = [p for m in (await session.messages()) if isinstance(m, ToolMessage) for p in m.content]
    assert bad.is_error
    assert isinstance(bad.output, str)
    assert bad.output.startswith("The arguments for tool 'note' are not a valid JSON object (invalid JSON:")
    assert not good.is_error and isinstance(good.output, dict) and good.output["text"] == "fixed"


async def test_invalid_streamed_anthropic_tool_input_gets_an_error_result(client: httpx.AsyncClient) -> None:
    async with running_fake_provider(broken_then_fixed()) as server:
        runtime = Runtime(load_agent(HITL_APP), model=make_model("anthropic", server, client, stream=True))
        session = await runtime.create_session()
        with anyio.fail_after(5):
            done = await session.send("take a note")

    assert done.status == "completed"
    [bad, good] = [p for m in (await session.messages()) if isinstance(m, ToolMessage) for p in m.content]
    assert bad.is_error and "not a valid JSON object" in str(bad.output)
    assert not good.is_error


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
@pytest.mark.parametrize("wire", WIRES)
async def test_nan_or_infinity_in_arguments_gets_one_error_result_and_the_turn_goes_on(
    wire: str, stream: bool, client: httpx.AsyncClient
) -> None:
    async def think(request: ModelRequest, wire: str) -> Reply:
        results = [p for m in request.messages if isinstance(m, ToolMessage) for p in m.content]
        prefix = "toolu_" if wire == "anthropic" else "call_"
        if not results:
            return Reply(
                calls=[
                    ReplyCall(id=f"{prefix}nan", name="note", arguments='{"text": NaN}'),
                    ReplyCall(id=f"{prefix}inf", name="note", arguments='{"text": Infinity}'),
                    ReplyCall(id=f"{prefix}ok", name="note", arguments='{"text": "kept"}'),
                ]
            )
        return Reply(text=f"{len(results)} results")

    async with running_fake_provider(think) as server:
        runtime = Runtime(load_agent(HITL_APP), model=make_model(wire, server, client, stream=stream))
        session = await runtime.create_session()
        with anyio.fail_after(5):
            done = await session.send("take a note")

    assert done.status == "completed" and done.message == "3 results", done.error
    nan, infinity, ok = [p for m in (await session.messages()) if isinstance(m, ToolMessage) for p in m.content]
    assert nan.is_error and "not a valid JSON object" in str(nan.output) and "NaN" in str(nan.output)
    assert infinity.is_error and "Infinity" in str(infinity.output) and "is not a JSON number" in str(infinity.output)
    assert not ok.is_error and isinstance(ok.output, dict) and ok.output["text"] == "kept"


@pytest.mark.parametrize(
    ("spec", "variable", "wire"),
    [
        ("anthropic/claude-sonnet-4.6", "AI_GATEWAY_BASE_URL", "openai"),
        ("openai:gpt-5", "OPENAI_BASE_URL", "openai"),
        ("anthropic:claude-sonnet-4-6", "ANTHROPIC_BASE_URL", "anthropic"),
    ],
)
async def test_a_model_string_with_its_base_url_pointed_at_a_local_server_runs_the_app(
    spec: str, variable: str, wire: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_fake_provider(app_brain()) as server:
        monkeypatch.setenv(variable, server.openai_base_url if wire == "openai" else server.anthropic_base_url)
        monkeypatch.setenv("EVE_MODEL", spec)
        runtime = Runtime(load_agent(HITL_APP))  # the app's own model is overridden by EVE_MODEL
        model = runtime.model
        assert isinstance(model, ChatCompletionsModel | AnthropicModel)
        try:
            session = await runtime.create_session()
            with anyio.fail_after(5):
                [request] = (await session.send("help me pick a template")).input_requests
                done = await session.respond(
                    [InputResponse(request_id=request.request_id, value={"pickedIds": ["tpl_red"]})]
                )
        finally:
            await model.aclose()

    assert done.message == "Recorded your pick: tpl_red."
    assert server.received[0].body["model"] == (spec.partition(":")[2] if ":" in spec else spec)
    assert "authorization" not in server.received[0].headers and "x-api-key" not in server.received[0].headers
