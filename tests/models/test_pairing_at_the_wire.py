"""Every request body the adapters build from the HITL flows satisfies each provider's pairing rule.

The flows run on the fixture apps with their mock models; each request the mock received is
rebuilt as the body the gateway (Chat Completions) and the Anthropic adapters would send, and
checked with the provider's documented rule (`provider_rules`), which raises the provider's
own error text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from eve_py import InputResponse, Runtime, load_agent
from eve_py.agent import load_mock_model
from eve_py.models import (
    AnthropicModel,
    AssistantMessage,
    ChatCompletionsModel,
    ModelRequest,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from eve_py.testing import MockModel, MockModelRequest
from tests.conftest import HITL_APP
from tests.models.provider_rules import ProviderRejection, check_anthropic_body, check_openai_body

pytestmark = pytest.mark.anyio

REFUND_APP = Path(__file__).resolve().parents[2] / "fixtures" / "refund-desk"

Flow = Callable[[], Awaitable[MockModel]]


def runtime(app: Path) -> tuple[Runtime, MockModel]:
    model = load_mock_model(app)
    assert isinstance(model, MockModel)
    return Runtime(load_agent(app), model=model), model


async def parked_client_tool() -> MockModel:
    rt, model = runtime(HITL_APP)
    session = await rt.create_session()
    [request] = (await session.send("help me pick a template")).input_requests
    done = await session.respond([InputResponse(request_id=request.request_id, value={"pickedIds": ["tpl_red"]})])
    assert done.status == "completed"
    return model


async def approval_deny() -> MockModel:
    rt, model = runtime(HITL_APP)
    session = await rt.create_session()
    [request] = (await session.send("run the guarded echo")).input_requests
    done = await session.respond([InputResponse(request_id=request.request_id, option_id="deny", text="no")])
    assert done.status == "completed" and done.message is not None and "did not run" in done.message
    return model


async def two_parks_in_one_turn() -> MockModel:
    rt, model = runtime(HITL_APP)
    session = await rt.create_session()
    [first] = (await session.send("set up a palette")).input_requests
    [second] = (
        await session.respond([InputResponse(request_id=first.request_id, option_id="tpl_blue")])
    ).input_requests
    done = await session.respond([InputResponse(request_id=second.request_id, option_id="red")])
    assert done.status == "completed"
    return model


async def parallel_mixed_batch() -> MockModel:
    rt, model = runtime(HITL_APP)
    session = await rt.create_session()
    requests = (await session.send("review my page")).input_requests
    answers = [
        InputResponse(request_id=r.request_id, option_id="approve" if r.kind == "tool-approval" else "blue")
        for r in requests
    ]
    done = await session.respond(answers)
    assert done.status == "completed"
    return model


async def dismissed_by_a_new_message() -> MockModel:
    rt, model = runtime(HITL_APP)
    session = await rt.create_session()
    await session.send("compare two layouts")
    done = await session.send("never mind, run the guarded echo")
    [request] = done.input_requests
    await session.respond([InputResponse(request_id=request.request_id, option_id="approve")])
    return model


async def resolver_decline() -> MockModel:
    rt, model = runtime(REFUND_APP)
    session = await rt.create_session()
    [scope] = (await session.send("refund ORD-7002, it arrived broken")).input_requests
    done = await session.respond([InputResponse(request_id=scope.request_id, action="decline")])
    assert done.message is not None and done.message.startswith("The refund did not go through")
    return model


FLOWS: dict[str, Flow] = {
    "parked client tool": parked_client_tool,
    "approval deny": approval_deny,
    "two parks in one turn": two_parks_in_one_turn,
    "parallel approval + question + executed call": parallel_mixed_batch,
    "batch dismissed by a new message": dismissed_by_a_new_message,
    "resolver decline (refund desk)": resolver_decline,
}


def as_model_request(mock: MockModelRequest) -> ModelRequest:
    tools = [ToolSpec(name=t.name, description=t.description, input_schema=t.input_schema) for t in mock.tools]
    return ModelRequest(instructions=mock.instructions, messages=mock.messages, tools=tools)


def bodies(model: MockModel) -> list[tuple[str, dict[str, Any]]]:
    gateway = ChatCompletionsModel("anthropic/claude-sonnet-4.6")
    anthropic = AnthropicModel("claude-sonnet-4-6")
    built: list[tuple[str, dict[str, Any]]] = []
    for mock in model.requests:
        request = as_model_request(mock)
        for stream in (False, True):
            built.append(("openai", gateway.build_body(request, stream=stream)))
            built.append(("anthropic", anthropic.build_body(request, stream=stream)))
    return built


@pytest.mark.parametrize("flow", FLOWS.values(), ids=list(FLOWS))
async def test_every_body_built_from_the_flow_satisfies_both_providers_pairing_rules(flow: Flow) -> None:
    model = await flow()

    built = bodies(model)

    assert any(isinstance(m, ToolMessage) for r in model.requests for m in r.messages), "the flow has tool results"
    for wire, body in built:
        (check_openai_body if wire == "openai" else check_anthropic_body)(body)


async def test_a_dismissed_batch_puts_the_new_user_text_after_the_tool_results_in_one_anthropic_message() -> None:
    model = await dismissed_by_a_new_message()
    last = as_model_request(model.requests[-1])
    dismissed_at = next(
        i
        for i, m in enumerate(last.messages)
        if isinstance(m, UserMessage)
        and m.content.startswith("never mind")
        and isinstance(last.messages[i - 1], ToolMessage)
    )

    messages: Any = AnthropicModel("claude-sonnet-4-6").build_body(
        ModelRequest(instructions=None, messages=last.messages[: dismissed_at + 1], tools=[]), stream=False
    )["messages"]

    blocks = messages[-1]["content"]
    assert messages[-1]["role"] == "user"
    assert [b["type"] for b in blocks] == ["tool_result", "tool_result", "text"]
    assert blocks[-1]["text"] == "never mind, run the guarded echo"
    assert all(m["role"] != messages[i + 1]["role"] for i, m in enumerate(messages[:-1])), "roles alternate"


async def test_an_approval_denial_is_an_error_tool_result_on_the_anthropic_wire() -> None:
    model = await approval_deny()
    body: Any = AnthropicModel("claude-sonnet-4-6").build_body(as_model_request(model.requests[-1]), stream=False)

    [result] = [b for m in body["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert result["is_error"] is True
    assert isinstance(result["content"], str) and result["content"]


# --- the checker bites: broken bodies get the providers' real errors --------------------------------


async def broken_conversation() -> ModelRequest:
    """The parked-client-tool conversation with the tool message of its first step removed."""
    model = await parked_client_tool()
    request = as_model_request(model.requests[-1])
    first_tool = next(i for i, m in enumerate(request.messages) if isinstance(m, ToolMessage))
    messages = [m for i, m in enumerate(request.messages) if i != first_tool]
    return ModelRequest(instructions=request.instructions, messages=messages, tools=request.tools)


async def test_a_missing_result_gets_anthropics_error_text() -> None:
    request = await broken_conversation()
    body = AnthropicModel("claude-sonnet-4-6").build_body(request, stream=False)
    [call] = next(m for m in request.messages if isinstance(m, AssistantMessage)).tool_calls

    with pytest.raises(ProviderRejection) as caught:
        check_anthropic_body(body)

    assert caught.value.message == (
        f"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: {call.tool_call_id}. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    )


async def test_a_missing_result_gets_openais_error_text() -> None:
    request = await broken_conversation()
    body = ChatCompletionsModel("openai/gpt-5").build_body(request, stream=False)
    [call] = next(m for m in request.messages if isinstance(m, AssistantMessage)).tool_calls

    with pytest.raises(ProviderRejection) as caught:
        check_openai_body(body)

    assert caught.value.message == (
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        f"'tool_call_id'. The following tool_call_ids did not have response messages: {call.tool_call_id}"
    )
    assert caught.value.param == "messages.[2].role"


def test_text_before_the_results_hides_them_from_anthropic() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}}]},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "x"},
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": ""},
                ],
            },
        ]
    }

    with pytest.raises(ProviderRejection, match=r"^messages\.1: `tool_use` ids were found without"):
        check_anthropic_body(body)


def test_duplicate_and_orphan_results_get_the_providers_error_texts() -> None:
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}}]}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
    orphan = {"type": "tool_result", "tool_use_id": "toolu_9", "content": "ok"}

    with pytest.raises(ProviderRejection) as duplicate:
        check_anthropic_body(
            {"messages": [{"role": "user", "content": "hi"}, use, {"role": "user", "content": [result, result]}]}
        )
    with pytest.raises(ProviderRejection) as stray:
        check_anthropic_body(
            {"messages": [{"role": "user", "content": "hi"}, use, {"role": "user", "content": [result, orphan]}]}
        )

    assert duplicate.value.message == (
        "messages.2.content.1: each tool_use must have a single result. "
        "Found multiple `tool_result` blocks with id: toolu_1"
    )
    assert stray.value.message == (
        "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. Each `tool_result` "
        "block must have a corresponding `tool_use` block in the previous message."
    )

    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "t", "arguments": "{}"}}],
    }
    answer = {"role": "tool", "tool_call_id": "call_1", "content": "ok"}
    with pytest.raises(ProviderRejection) as twice:
        check_openai_body({"messages": [{"role": "user", "content": "hi"}, call, answer, answer]})
    with pytest.raises(ProviderRejection) as unasked:
        check_openai_body({"messages": [{"role": "user", "content": "hi"}, answer]})

    assert (
        twice.value.message
        == "Invalid parameter: Duplicate value for 'tool_call_id' of 'call_1' in messages[2] and messages[3]."
    )
    assert unasked.value.message == (
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
    )


def test_blank_text_in_a_stored_history_never_reaches_anthropic() -> None:
    from eve_py.models._anthropic import to_anthropic_messages
    from eve_py.protocol.messages import AssistantMessage, Message, TextPart, UserMessage

    history: list[Message] = [
        UserMessage(content="hi"),
        AssistantMessage(content=[TextPart(text="\n\n")]),
        UserMessage(content="   "),
        UserMessage(content="still there?"),
    ]

    messages = to_anthropic_messages(history)

    check_anthropic_body({"messages": messages})
    assert messages == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "still there?"}]}
    ]
