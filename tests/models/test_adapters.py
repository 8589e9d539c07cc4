"""Conversion both ways for both adapters, over `httpx.MockTransport`."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from eve_py.errors import ModelConnectionError, ModelError
from eve_py.models import (
    AnthropicModel,
    AssistantMessage,
    ChatCompletionsModel,
    Message,
    ModelDelta,
    ModelRequest,
    TextPart,
    ToolCallPart,
    ToolMessage,
    ToolResultPart,
    ToolSpec,
    UserMessage,
)

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
TOOLS = [ToolSpec(name="note", description="Record a note.", input_schema=SCHEMA)]

CONVERSATION: list[Message] = [
    UserMessage(content="note two things"),
    AssistantMessage(
        content=[
            TextPart(text="Noting both."),
            ToolCallPart(tool_call_id="call_a", tool_name="note", input={"text": "one"}),
            ToolCallPart(tool_call_id="mock-call-1-0#2", tool_name="note", input={"text": "two"}),
        ]
    ),
    ToolMessage(
        content=[
            ToolResultPart(tool_call_id="call_a", tool_name="note", output={"recorded": True}),
            ToolResultPart(
                tool_call_id="mock-call-1-0#2",
                tool_name="note",
                output="Error executing tool note: full",
                is_error=True,
            ),
        ]
    ),
    UserMessage(content="thanks"),
]


def conversation_request(on_delta: Any = None) -> ModelRequest:
    return ModelRequest(instructions="Be brief.", messages=CONVERSATION, tools=TOOLS, on_delta=on_delta)


def sse(*events: str) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content="".join(events).encode())


def serve(response: httpx.Response) -> tuple[httpx.AsyncClient, list[dict[str, Any]]]:
    bodies: list[dict[str, Any]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return response

    return httpx.AsyncClient(transport=httpx.MockTransport(handle)), bodies


def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    return "data: " + json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"


class Deltas:
    def __init__(self) -> None:
        self.seen: list[ModelDelta] = []

    async def __call__(self, delta: ModelDelta) -> None:
        self.seen.append(delta)


# --- eve-py -> Chat Completions ------------------------------------------------------------------


def test_chat_completions_body_has_system_first_calls_as_json_text_and_one_tool_message_per_result() -> None:
    model = ChatCompletionsModel("anthropic/claude-sonnet-4.6", extra_body={"temperature": 0})

    body: Any = model.build_body(conversation_request(), stream=False)

    hashed = body["messages"][2]["tool_calls"][1]["id"]
    assert body == {
        "model": "anthropic/claude-sonnet-4.6",
        "temperature": 0,
        "tools": [
            {"type": "function", "function": {"name": "note", "description": "Record a note.", "parameters": SCHEMA}}
        ],
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "note two things"},
            {
                "role": "assistant",
                "content": "Noting both.",
                "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "note", "arguments": '{"text":"one"}'}},
                    {"id": hashed, "type": "function", "function": {"name": "note", "arguments": '{"text":"two"}'}},
                ],
            },
            {"role": "tool", "tool_call_id": "call_a", "content": '{"recorded":true}'},
            {"role": "tool", "tool_call_id": hashed, "content": "Error executing tool note: full"},
            {"role": "user", "content": "thanks"},
        ],
    }
    assert hashed.startswith("call_") and len(hashed) <= 40 and "#" not in hashed


def test_chat_completions_body_leaves_out_empty_tools_and_content_of_call_only_messages() -> None:
    messages: list[Message] = [
        UserMessage(content="hi"),
        AssistantMessage(content=[ToolCallPart(tool_call_id="c1", tool_name="note", input={})]),
        ToolMessage(content=[ToolResultPart(tool_call_id="c1", tool_name="note", output=None)]),
    ]

    body: Any = ChatCompletionsModel("openai/gpt-5").build_body(
        ModelRequest(instructions=None, messages=messages, tools=[]), stream=True
    )

    assert "tools" not in body and body["stream"] is True
    assert body["messages"][1]["content"] is None
    assert body["messages"][2] == {"role": "tool", "tool_call_id": "c1", "content": "null"}


# --- Chat Completions -> eve-py ------------------------------------------------------------------


async def test_interleaved_parallel_tool_call_chunks_are_assembled_per_index() -> None:
    client, bodies = serve(
        sse(
            chunk({"role": "assistant", "content": None}),
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "call_1", "type": "function", "function": {"name": "note", "arguments": ""}}
                    ]
                }
            ),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 1,
                            "id": "call_2",
                            "type": "function",
                            "function": {"name": "note", "arguments": '{"te'},
                        }
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"text": "a"}'}}]}),
            chunk({"tool_calls": [{"index": 1, "function": {"arguments": 'xt": "b"}'}}]}),
            chunk({}, "tool_calls"),
            "data: [DONE]\n\n",
        )
    )
    deltas = Deltas()

    response = await ChatCompletionsModel("x/y", client=client).request(
        ModelRequest(instructions=None, messages=[UserMessage(content="hi")], tools=TOOLS, on_delta=deltas)
    )

    assert bodies[0]["stream"] is True, "a listener turns streaming on"
    assert [(c.id, c.input) for c in response.tool_calls] == [("call_1", {"text": "a"}), ("call_2", {"text": "b"})]
    assert [(d.call_id, d.tool_name, d.text) for d in deltas.seen] == [
        ("call_1", "note", ""),
        ("call_2", "note", '{"te'),
        ("call_1", None, '{"text": "a"}'),
        ("call_2", None, 'xt": "b"}'),
    ]


async def test_a_parallel_batch_that_reuses_index_0_with_new_ids_stays_separate_calls() -> None:
    client, _ = serve(
        sse(
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "call_1", "function": {"name": "note", "arguments": '{"text": "a"}'}}
                    ]
                }
            ),
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "call_2", "function": {"name": "note", "arguments": '{"text": "b"}'}}
                    ]
                }
            ),
            chunk({}, "tool_calls"),
        )
    )

    response = await ChatCompletionsModel("x/y", client=client, stream=True).request(conversation_request())

    assert [(c.id, c.input) for c in response.tool_calls] == [("call_1", {"text": "a"}), ("call_2", {"text": "b"})]


async def test_arguments_that_are_not_a_json_object_set_input_error() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "note", "arguments": '{"text": "cut'}},
            {"id": "c2", "type": "function", "function": {"name": "note", "arguments": "[1, 2]"}},
            {"id": "c3", "type": "function", "function": {"name": "note", "arguments": ""}},
        ],
    }
    client, bodies = serve(httpx.Response(200, json={"choices": [{"index": 0, "message": message}]}))

    response = await ChatCompletionsModel("x/y", client=client).request(conversation_request())

    assert "stream" not in bodies[0], "no listener: no streaming"
    bad, array, empty = response.tool_calls
    assert bad.input == {} and bad.input_error is not None and bad.input_error.startswith("invalid JSON: ")
    assert array.input_error == "expected a JSON object, got list"
    assert (empty.input, empty.input_error) == ({}, None)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_nan_and_infinity_in_argument_text_set_input_error_like_any_invalid_text(stream: bool) -> None:
    raw = ['{"text": NaN}', '{"text": "x", "n": -Infinity}', '{"text": "ok"}']
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "note", "arguments": a}} for i, a in enumerate(raw)
    ]
    if stream:
        deltas = [{"index": i, **call} for i, call in enumerate(calls)]
        client, _ = serve(sse(chunk({"tool_calls": deltas}), chunk({}, "tool_calls")))
    else:
        message = {"role": "assistant", "content": None, "tool_calls": calls}
        client, _ = serve(httpx.Response(200, json={"choices": [{"index": 0, "message": message}]}))

    response = await ChatCompletionsModel("x/y", client=client, stream=stream).request(conversation_request())

    nan, infinity, fine = response.tool_calls
    assert (nan.input, nan.input_error) == ({}, "invalid JSON: NaN is not a JSON number (JSON has no NaN or Infinity)")
    assert (
        infinity.input == {}
        and infinity.input_error is not None
        and "-Infinity is not a JSON number" in infinity.input_error
    )
    assert (fine.input, fine.input_error) == ({"text": "ok"}, None)


async def test_a_server_that_answers_json_to_a_stream_request_is_still_understood() -> None:
    client, _ = serve(httpx.Response(200, json={"choices": [{"index": 0, "message": {"content": "plain"}}]}))

    response = await ChatCompletionsModel("x/y", client=client, stream=True).request(conversation_request())

    assert response.text == "plain"


async def test_a_stream_that_ends_without_finishing_is_a_connection_error() -> None:
    client, _ = serve(sse(chunk({"content": "Hel"})))

    with pytest.raises(ModelConnectionError, match="ended before the response was complete"):
        await ChatCompletionsModel("x/y", client=client, stream=True).request(conversation_request())


async def test_an_error_chunk_mid_stream_is_a_model_error() -> None:
    client, _ = serve(sse(chunk({"content": "Hel"}), 'data: {"error": {"message": "overloaded"}}\n\n'))

    with pytest.raises(ModelError, match="reported an error mid-stream.*overloaded"):
        await ChatCompletionsModel("x/y", client=client, stream=True).request(conversation_request())


async def test_a_body_that_is_not_a_completion_is_a_model_error() -> None:
    client, _ = serve(httpx.Response(200, text="<html>gateway timeout</html>"))

    with pytest.raises(ModelError, match="not a chat completion"):
        await ChatCompletionsModel("x/y", client=client).request(conversation_request())


# --- eve-py -> Anthropic -------------------------------------------------------------------------


def test_anthropic_body_has_top_level_system_tool_use_blocks_and_flagged_error_results() -> None:
    body: Any = AnthropicModel("claude-sonnet-4-6", max_tokens=512).build_body(conversation_request(), stream=True)

    hashed = body["messages"][1]["content"][2]["id"]
    assert body == {
        "model": "claude-sonnet-4-6",
        "max_tokens": 512,
        "system": "Be brief.",
        "stream": True,
        "tools": [{"name": "note", "description": "Record a note.", "input_schema": SCHEMA}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "note two things"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Noting both."},
                    {"type": "tool_use", "id": "call_a", "name": "note", "input": {"text": "one"}},
                    {"type": "tool_use", "id": hashed, "name": "note", "input": {"text": "two"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "call_a", "content": '{"recorded":true}'},
                    {
                        "type": "tool_result",
                        "tool_use_id": hashed,
                        "content": "Error executing tool note: full",
                        "is_error": True,
                    },
                    {"type": "text", "text": "thanks"},
                ],
            },
        ],
    }
    assert hashed.startswith("toolu_eve_") and "#" not in hashed


# --- Anthropic -> eve-py -------------------------------------------------------------------------


def event(kind: str, **data: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"


async def test_a_tool_use_without_input_deltas_has_empty_input_and_parallel_blocks_keep_their_order() -> None:
    client, _ = serve(
        sse(
            event("message_start", message={"id": "msg_1", "content": []}),
            event(
                "content_block_start",
                index=0,
                content_block={"type": "tool_use", "id": "toolu_a", "name": "now", "input": {}},
            ),
            event("content_block_stop", index=0),
            event(
                "content_block_start",
                index=1,
                content_block={"type": "tool_use", "id": "toolu_b", "name": "note", "input": {}},
            ),
            event("content_block_delta", index=1, delta={"type": "input_json_delta", "partial_json": '{"text": "x"}'}),
            event("content_block_stop", index=1),
            event("message_delta", delta={"stop_reason": "tool_use"}),
            event("message_stop"),
        )
    )

    response = await AnthropicModel("claude", client=client, stream=True).request(conversation_request())

    assert [(c.id, c.name, c.input) for c in response.tool_calls] == [
        ("toolu_a", "now", {}),
        ("toolu_b", "note", {"text": "x"}),
    ]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_nan_and_infinity_in_a_tool_use_input_set_input_error(stream: bool) -> None:
    if stream:
        blocks = [
            event(
                "content_block_start", index=i, content_block={"type": "tool_use", "id": f"toolu_{i}", "name": "note"}
            )
            + event("content_block_delta", index=i, delta={"type": "input_json_delta", "partial_json": text})
            for i, text in enumerate(['{"text": NaN}', '{"text": Infinity}', '{"text": "ok"}'])
        ]
        body = sse(event("message_start", message={"id": "msg_1", "content": []}), *blocks, event("message_stop"))
    else:
        # Python's json writes NaN and Infinity as bare tokens, as a broken provider would.
        uses = [
            {"type": "tool_use", "id": f"toolu_{i}", "name": "note", "input": {"text": v}}
            for i, v in enumerate([float("nan"), float("inf"), "ok"])
        ]
        body = httpx.Response(200, content=json.dumps({"id": "msg_1", "type": "message", "content": uses}).encode())
    client, _ = serve(body)

    response = await AnthropicModel("claude", client=client, stream=stream).request(conversation_request())

    nan, infinity, fine = response.tool_calls
    assert nan.input == {} and nan.input_error is not None and "NaN" in nan.input_error
    assert infinity.input == {} and infinity.input_error is not None and "Infinity" in infinity.input_error
    assert "is not a JSON number" in nan.input_error and "is not a JSON number" in infinity.input_error
    assert (fine.input, fine.input_error) == ({"text": "ok"}, None)


async def test_an_overloaded_error_event_mid_stream_is_a_model_error() -> None:
    client, _ = serve(
        sse(
            event("message_start", message={"id": "msg_1", "content": []}),
            event("error", error={"type": "overloaded_error", "message": "Overloaded"}),
        )
    )

    with pytest.raises(ModelError, match="overloaded_error: Overloaded"):
        await AnthropicModel("claude", client=client, stream=True).request(conversation_request())


async def test_an_anthropic_stream_cut_before_message_stop_is_a_connection_error() -> None:
    client, _ = serve(sse(event("message_start", message={"id": "msg_1", "content": []})))

    with pytest.raises(ModelConnectionError, match="ended before the message was complete"):
        await AnthropicModel("claude", client=client, stream=True).request(conversation_request())


def test_model_names_follow_the_spelling() -> None:
    assert ChatCompletionsModel("anthropic/claude-sonnet-4.6").name == "anthropic/claude-sonnet-4.6"
    assert ChatCompletionsModel("gpt-5", provider="openai").name == "openai:gpt-5"
    assert AnthropicModel("claude-sonnet-4-6").name == "anthropic:claude-sonnet-4-6"
