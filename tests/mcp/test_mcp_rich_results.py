"""A tool returning images, audio, embedded resources or mixed content gives an MCP client those blocks as they are."""

from __future__ import annotations

import mcp.types as types
import pytest
from mcp.client import Client
from mcp.types.version import LATEST_MODERN_VERSION

from eve_py import define_tool
from eve_py.agent import Agent
from eve_py.mcp import mcp_server
from eve_py.protocol.content import (
    AudioContent,
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

pytestmark = pytest.mark.anyio

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="


def chart(city: str) -> list[TextContent | ImageContent | EmbeddedResource]:
    csv = TextResourceContents(uri=f"data://{city}.csv", mime_type="text/csv", text="month,mm\njan,80")
    return [
        TextContent(text=f"Rainfall in {city}:"),
        ImageContent(data=PNG, mime_type="image/png"),
        EmbeddedResource(resource=csv),
    ]


def jingle() -> AudioContent:
    return AudioContent(data="UklGRg==", mime_type="audio/wav")


def raw() -> EmbeddedResource:
    return EmbeddedResource(resource=BlobResourceContents(uri="data://raw.bin", blob="AAEC"))


def agent() -> Agent:
    return Agent.from_definitions(
        {
            "chart": define_tool(description="A chart.", execute=chart),
            "jingle": define_tool(description="A jingle.", execute=jingle),
            "raw": define_tool(description="Raw bytes.", execute=raw),
        }
    )


@pytest.mark.parametrize("mode", ["legacy", LATEST_MODERN_VERSION])
async def test_content_blocks_reach_the_client_as_they_are(mode: str) -> None:
    async with Client(mcp_server(agent()), mode=mode) as client:
        charted = await client.call_tool("chart", {"city": "Oslo"})
        sung = await client.call_tool("jingle", {})
        blob = await client.call_tool("raw", {})
    assert not charted.is_error and charted.structured_content is None
    assert charted.content == [
        types.TextContent(type="text", text="Rainfall in Oslo:"),
        types.ImageContent(type="image", data=PNG, mime_type="image/png"),
        types.EmbeddedResource(
            type="resource",
            resource=types.TextResourceContents(uri="data://Oslo.csv", mime_type="text/csv", text="month,mm\njan,80"),
        ),
    ]
    assert sung.content == [types.AudioContent(type="audio", data="UklGRg==", mime_type="audio/wav")]
    assert blob.content == [
        types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(uri="data://raw.bin", blob="AAEC"))
    ]
