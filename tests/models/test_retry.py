"""Retries: which failures are retried, how long each wait is, the budget, and the final errors."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime

import httpx
import pytest

from eve_py.errors import ModelConnectionError, ModelHTTPError
from eve_py.models import ChatCompletionsModel, ModelDelta, ModelRequest, RetryPolicy, UserMessage
from eve_py.models._retry import retry_after_seconds

pytestmark = pytest.mark.anyio

KEY = "sk-live-TOPSECRET-42"
OK = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}


@dataclass
class FakeTime:
    waits: list[float] = field(default_factory=list)
    now: float = 100.0

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def policy(time: FakeTime, **kwargs: float) -> RetryPolicy:
    return RetryPolicy(sleep=time.sleep, clock=time.clock, random=lambda: 1.0, **kwargs)  # type: ignore[arg-type]


def scripted(*answers: httpx.Response | Exception) -> tuple[httpx.AsyncClient, list[httpx.Request]]:
    seen: list[httpx.Request] = []
    queue = list(answers)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    return httpx.AsyncClient(transport=httpx.MockTransport(handle)), seen


def request() -> ModelRequest:
    return ModelRequest(instructions=None, messages=[UserMessage(content="hi")], tools=[])


def model(client: httpx.AsyncClient, retry: RetryPolicy) -> ChatCompletionsModel:
    return ChatCompletionsModel("openai/gpt-5", api_key=KEY, client=client, retry=retry, key_hint="AI_GATEWAY_API_KEY")


async def test_a_400_is_raised_at_once_with_status_provider_and_body_and_without_the_key() -> None:
    time = FakeTime()
    body = {"error": {"message": f"Invalid 'messages': key {KEY} rejected", "type": "invalid_request_error"}}
    client, seen = scripted(httpx.Response(400, json=body))

    with pytest.raises(ModelHTTPError) as caught:
        await model(client, policy(time)).request(request())

    error = caught.value
    assert (error.status, error.provider) == (400, "gateway")
    assert str(error) == (
        "gateway answered HTTP 400: invalid_request_error: Invalid 'messages': key [redacted] rejected"
    )
    assert "[redacted]" in error.body and KEY not in error.body
    assert len(seen) == 1 and time.waits == []


async def test_a_401_names_where_the_key_comes_from() -> None:
    client, _ = scripted(httpx.Response(401, json={"error": {"message": "Invalid API key"}}))

    with pytest.raises(ModelHTTPError) as caught:
        await model(client, policy(FakeTime())).request(request())

    assert str(caught.value) == "gateway answered HTTP 401: Invalid API key (check the API key in AI_GATEWAY_API_KEY)"


async def test_5xx_is_retried_with_doubling_capped_backoff_until_the_attempts_run_out() -> None:
    time = FakeTime()
    client, seen = scripted(httpx.Response(502, text="bad gateway"))

    with pytest.raises(ModelHTTPError) as caught:
        await model(client, policy(time, max_attempts=5, base_delay_s=1.0, max_delay_s=3.0)).request(request())

    assert caught.value.status == 502
    assert str(caught.value) == "gateway answered HTTP 502: bad gateway (after 5 attempts)"
    assert len(seen) == 5
    assert time.waits == [1.0, 2.0, 3.0, 3.0]


def test_the_jitter_keeps_each_wait_between_half_and_all_of_the_backoff() -> None:
    low = RetryPolicy(random=lambda: 0.0)
    high = RetryPolicy(random=lambda: 0.999999)

    assert [low.backoff(n) for n in (1, 2, 3, 4, 5, 6)] == [0.25, 0.5, 1.0, 2.0, 4.0, 4.0]
    assert [round(high.backoff(n), 3) for n in (1, 2, 3, 4, 5, 6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]


async def test_retry_after_is_honoured_and_a_wait_past_the_budget_is_not_taken() -> None:
    time = FakeTime()
    client, seen = scripted(
        httpx.Response(429, headers={"retry-after": "2"}, json={"error": {"message": "slow down"}}),
        httpx.Response(429, headers={"retry-after": "120"}, json={"error": {"message": "slow down more"}}),
    )

    with pytest.raises(ModelHTTPError) as caught:
        await model(client, policy(time, budget_s=60)).request(request())

    assert time.waits == [2.0]
    assert len(seen) == 2
    assert caught.value.status == 429
    assert str(caught.value) == "gateway answered HTTP 429: slow down more (after 2 attempts)"


async def test_a_connection_error_is_retried_then_reported_as_a_connection_error() -> None:
    time = FakeTime()
    client, seen = scripted(httpx.ConnectError("connection refused"))

    with pytest.raises(ModelConnectionError) as caught:
        await model(client, policy(time, max_attempts=3)).request(request())

    assert caught.value.provider == "gateway"
    assert str(caught.value) == (
        "Could not reach gateway at https://ai-gateway.vercel.sh/v1/chat/completions: "
        "ConnectError: connection refused (after 3 attempts)"
    )
    assert len(seen) == 3 and len(time.waits) == 2


async def test_a_timeout_then_success_returns_the_answer() -> None:
    time = FakeTime()
    client, seen = scripted(httpx.ReadTimeout("timed out"), httpx.Response(200, json=OK))

    response = await model(client, policy(time)).request(request())

    assert response.text == "hi"
    assert len(seen) == 2 and time.waits == [0.5]


class BreaksOff(httpx.AsyncByteStream):
    def __init__(self, first: bytes) -> None:
        self.first = first

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.first
        raise httpx.ReadError("connection reset by peer")


async def test_a_stream_that_breaks_off_midway_is_not_retried() -> None:
    time = FakeTime()
    chunk = b'data: {"choices": [{"index": 0, "delta": {"content": "Hel"}}]}\n\n'
    client, seen = scripted(httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=BreaksOff(chunk)))
    pieces: list[str] = []

    async def listen(delta: ModelDelta) -> None:
        pieces.append(delta.text)

    with pytest.raises(ModelConnectionError, match="stream broke off: ReadError"):
        await model(client, policy(time)).request(
            ModelRequest(instructions=None, messages=[UserMessage(content="hi")], tools=[], on_delta=listen)
        )

    assert pieces == ["Hel"]
    assert len(seen) == 1 and time.waits == []


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "-4"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_seconds_reads_seconds_and_milliseconds(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_seconds(httpx.Headers(headers)) == expected


def test_retry_after_seconds_reads_an_http_date() -> None:
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    later = format_datetime(datetime(2026, 1, 2, 3, 4, 35, tzinfo=UTC), usegmt=True)

    assert retry_after_seconds(httpx.Headers({"retry-after": later}), now=now.timestamp()) == 30.0


@pytest.mark.parametrize("bad", [{"max_attempts": 0}, {"budget_s": -1.0}])
def test_a_policy_rejects_nonsense(bad: dict[str, float]) -> None:
    make: Callable[..., RetryPolicy] = RetryPolicy
    with pytest.raises(ValueError):
        make(**bad)


async def test_a_base_url_without_a_scheme_fails_at_once() -> None:
    time = FakeTime()
    bad = ChatCompletionsModel("x/y", base_url="127.0.0.1:8000/v1", retry=policy(time))

    with pytest.raises(ModelConnectionError, match="check the base URL"):
        await bad.request(request())
    await bad.aclose()

    assert time.waits == []


class BreaksMidBody(httpx.AsyncByteStream):
    """A 200 whose body stops half-way, as when a connection drops while the answer arrives."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield b'{"choices":'
        raise httpx.ReadError("connection reset by peer")

    async def aclose(self) -> None:
        pass


async def test_a_json_answer_that_breaks_off_is_retried_like_a_connection_error() -> None:
    seen: list[httpx.Request] = []

    def handle(sent: httpx.Request) -> httpx.Response:
        seen.append(sent)
        return httpx.Response(200, stream=BreaksMidBody()) if len(seen) == 1 else httpx.Response(200, json=OK)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    response = await model(client, policy(FakeTime())).request(request())

    assert response.text == "hi"
    assert len(seen) == 2


async def test_a_json_answer_that_keeps_breaking_off_is_a_connection_error() -> None:
    seen: list[httpx.Request] = []

    def handle(sent: httpx.Request) -> httpx.Response:
        seen.append(sent)
        return httpx.Response(200, stream=BreaksMidBody())

    client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    with pytest.raises(ModelConnectionError, match="ReadError: connection reset by peer"):
        await model(client, policy(FakeTime(), max_attempts=2)).request(request())
    assert len(seen) == 2


async def test_credentials_in_a_base_url_never_appear_in_errors() -> None:
    client, _ = scripted(httpx.ConnectError("refused"))
    leaky = ChatCompletionsModel(
        "m", base_url="http://user:pa55@127.0.0.1:9/v1?api-key=s3cret", client=client, retry=policy(FakeTime())
    )

    with pytest.raises(ModelConnectionError) as caught:
        await leaky.request(request())

    assert "pa55" not in str(caught.value) and "s3cret" not in str(caught.value)
    assert "at http://127.0.0.1:9/v1" in str(caught.value)
