"""A tool returning images, audio and resources: each provider is sent the images as images, the rest as text.

The requests go through the real adapters to the loopback `fake_provider` server; the tests
assert the exact request body each provider receives, and that the stored conversation keeps
the tool's content blocks.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from eve_py import Runtime, define_tool
from eve_py.agent import Agent
from eve_py.models import AnthropicModel, ChatCompletionsModel, Model, ModelRequest, ToolMessage
from eve_py.protocol.content import (
    AudioContent,
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
    content_from_json,
)
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.models.fake_provider import FakeProvider, Reply, ReplyCall, running_fake_provider

pytestmark = pytest.mark.anyio

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="  # 44 bytes
CSV = "month,mm\njan,80"


def chart(city: str) -> list[ContentBlock]:
    return [
        TextContent(text=f"Rainfall in {city}:"),
        ImageContent(data=PNG, mime_type="image/png"),
        EmbeddedResource(resource=TextResourceContents(uri=f"data://{city}.csv", mime_type="text/csv", text=CSV)),
        AudioContent(data=WAV, mime_type="audio/wav"),
        EmbeddedResource(resource=BlobResourceContents(uri="data://raw.bin", blob="AAEC")),
    ]


def forecast(city: str) -> dict[str, Any]:
    return {"city": city, "rain": True}


def agent() -> Agent:
    return Agent.from_definitions(
        {
            "chart": define_tool(description="Rainfall as a chart.", execute=chart),
            "forecast": define_tool(description="Tomorrow's weather.", execute=forecast),
        }
    )


async def brain(request: ModelRequest, wire: str) -> Reply:
    if any(isinstance(message, ToolMessage) for message in request.messages):
        return Reply(text="It rains in Oslo.")
    prefix = "toolu_" if wire == "anthropic" else "call_"
    city = json.dumps({"city": "Oslo"})
    return Reply(calls=[ReplyCall(f"{prefix}chart", "chart", city), ReplyCall(f"{prefix}forecast", "forecast", city)])


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        yield http


def make_model(wire: str, server: FakeProvider, client: httpx.AsyncClient) -> Model:
    if wire == "openai":
        return ChatCompletionsModel("openai/gpt-5", base_url=server.openai_base_url, client=client)
    return AnthropicModel("claude-sonnet-4-6", base_url=server.anthropic_base_url, client=client)


NOTES = [
    "[audio: audio/wav, 44 bytes, not shown to the model]",
    "[resource data://raw.bin: application/octet-stream, 3 bytes, not shown to the model]",
]


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_an_image_result_reaches_the_model_as_an_image(wire: str, client: httpx.AsyncClient) -> None:
    async with running_fake_provider(brain) as server:
        runtime = Runtime(agent(), model=make_model(wire, server, client))
        session = await runtime.create_session()
        with anyio.fail_after(10):
            done = await session.send("Rain in Oslo?")
        stored = await session.messages()

    assert done.status == "completed" and done.message == "It rains in Oslo."
    assert server.rejections == []
    sent = server.received[1].body["messages"]
    if wire == "openai":
        assert sent[-3:] == [
            {
                "role": "tool",
                "tool_call_id": "call_chart",
                "content": "\n".join(
                    [
                        "Rainfall in Oslo:",
                        "[Image 1: image/png, in the user message after these tool results]",
                        f"data://Oslo.csv\n{CSV}",
                        *NOTES,
                    ]
                ),
            },
            {"role": "tool", "tool_call_id": "call_forecast", "content": '{"city":"Oslo","rain":true}'},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Image 1, from the chart result:"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                ],
            },
        ]
    else:
        assert sent[-1] == {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_chart",
                    "content": [
                        {"type": "text", "text": "Rainfall in Oslo:"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                        {"type": "text", "text": f"data://Oslo.csv\n{CSV}"},
                        *({"type": "text", "text": note} for note in NOTES),
                    ],
                },
                {"type": "tool_result", "tool_use_id": "toolu_forecast", "content": '{"city":"Oslo","rain":true}'},
            ],
        }
    [results] = [message for message in stored if isinstance(message, ToolMessage)]
    assert content_from_json(results.content[0].output) == chart("Oslo")  # the stored result keeps the blocks


async def test_unsupported_image_types_and_json_that_only_looks_like_blocks_are_not_images(
    client: httpx.AsyncClient,
) -> None:
    def svg() -> ImageContent:
        return ImageContent(data="PHN2Zz48L3N2Zz4=", mime_type="image/svg+xml")

    def lookalike() -> list[dict[str, Any]]:
        return [{"type": "image", "data": PNG, "mimeType": "image/png", "caption": "not a block: an extra key"}]

    async def calls(request: ModelRequest, wire: str) -> Reply:
        if any(isinstance(message, ToolMessage) for message in request.messages):
            return Reply(text="Seen.")
        return Reply(calls=[ReplyCall("toolu_svg", "svg", "{}"), ReplyCall("toolu_lookalike", "lookalike", "{}")])

    tools = {
        "svg": define_tool(description="An SVG.", execute=svg),
        "lookalike": define_tool(description="Data.", execute=lookalike),
    }
    async with running_fake_provider(calls) as server:
        model = AnthropicModel("claude-sonnet-4-6", base_url=server.anthropic_base_url, client=client)
        session = await Runtime(Agent.from_definitions(tools), model=model).create_session()
        with anyio.fail_after(10):
            await session.send("show me")
    [svg_result, data_result] = server.received[1].body["messages"][-1]["content"]
    assert svg_result["content"] == [
        {"type": "text", "text": "[image: image/svg+xml, 11 bytes, not shown to the model]"}
    ]
    assert json.loads(data_result["content"]) == lookalike()


async def test_mock_model_sees_the_content_blocks_it_was_sent() -> None:
    def respond(request: MockModelRequest) -> str | MockResponse:
        if request.last_tool_result is None:
            return MockResponse(tool_calls=[MockToolCall("chart", {"city": "Oslo"})])
        return "Charted."

    model = MockModel(respond)
    session = await Runtime(agent(), model=model).create_session()
    with anyio.fail_after(5):
        await session.send("chart Oslo")
    result = model.requests[-1].last_tool_result
    assert result is not None and result.content == chart("Oslo")
    assert model.requests[0].tool_results == []
