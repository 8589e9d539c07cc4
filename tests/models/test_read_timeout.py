"""A model server that accepts the connection and never answers: the request fails after the read
timeout, which `read_timeout_s` or `EVE_MODEL_READ_TIMEOUT_S` sets, with an error that says so."""

from __future__ import annotations

import anyio
import pytest
from anyio.abc import SocketStream

from eve_py.errors import ModelConfigurationError, ModelConnectionError
from eve_py.models import ChatCompletionsModel, ModelRequest, RetryPolicy, UserMessage

pytestmark = pytest.mark.anyio


def _request() -> ModelRequest:
    return ModelRequest(instructions=None, messages=[UserMessage(content="hi")], tools=[])


async def test_a_server_that_never_answers_fails_after_the_read_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVE_MODEL_READ_TIMEOUT_S", "0.3")
    held: list[SocketStream] = []

    async def hold(stream: SocketStream) -> None:
        async with stream:
            held.append(stream)  # accept, read nothing, answer nothing
            await anyio.sleep_forever()

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, hold)
        model = ChatCompletionsModel(
            "m", base_url=f"http://127.0.0.1:{port}/v1", provider="local", retry=RetryPolicy(max_attempts=1)
        )
        with anyio.fail_after(10), pytest.raises(ModelConnectionError) as caught:
            await model.request(_request())
        await model.aclose()
        group.cancel_scope.cancel()
    assert held, "the server took the connection"
    assert str(caught.value) == (
        f"local at http://127.0.0.1:{port}/v1/chat/completions took the request but sent nothing for 0.3 s "
        "(read timeout; EVE_MODEL_READ_TIMEOUT_S or read_timeout_s sets it)"
    )


def test_a_read_timeout_that_is_not_a_positive_number_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelConfigurationError, match="read_timeout_s must be a positive number of seconds"):
        ChatCompletionsModel("m", read_timeout_s=0)
    monkeypatch.setenv("EVE_MODEL_READ_TIMEOUT_S", "soon")
    with pytest.raises(ModelConfigurationError, match="EVE_MODEL_READ_TIMEOUT_S must be a positive number"):
        ChatCompletionsModel("m")
    assert ChatCompletionsModel("m", read_timeout_s=12.5)._http.timeout.read == 12.5
