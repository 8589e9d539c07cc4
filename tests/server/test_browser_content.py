"""A tool result of content blocks in the browser chat: images as images, audio as a player, resources as text.

Headless Chromium through Playwright (as test_browser_ux.py), against a real `eve-py serve`
app whose tool returns text, an image, audio and embedded resources; axe-core finds no serious
accessibility problem on the view.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from eve_py import Runtime, define_tool
from eve_py.agent import Agent
from eve_py.protocol.content import (
    AudioContent,
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from tests.server.helpers import serve
from tests.server.test_browser import browser_page, send
from tests.server.test_browser_ux import shoot

pytestmark = pytest.mark.anyio

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="


def chart(city: str) -> list[ContentBlock]:
    return [
        TextContent(text=f"Rainfall in {city}"),
        ImageContent(data=PNG, mime_type="image/png"),
        AudioContent(data=WAV, mime_type="audio/wav"),
        EmbeddedResource(resource=TextResourceContents(uri=f"data://{city}.csv", mime_type="text/csv", text="jan,80")),
        EmbeddedResource(resource=BlobResourceContents(uri="data://raw.bin", blob="AAEC")),
    ]


def lookalike() -> list[dict[str, Any]]:
    return [{"type": "text", "text": "data, not content", "score": 3}]


def respond(request: MockModelRequest) -> str | MockResponse:
    if not request.tool_results_since_last_user_message:
        tool = "lookalike" if "data" in (request.last_user_message or "") else "chart"
        return MockResponse(tool_calls=[MockToolCall(tool, {"city": "Oslo"} if tool == "chart" else {})])
    return "Here it is."


def runtime() -> Runtime:
    tools = {
        "chart": define_tool(description="Rainfall as a chart, a table and a jingle.", execute=chart),
        "lookalike": define_tool(description="JSON that looks like a block.", execute=lookalike),
    }
    return Runtime(Agent.from_definitions(tools, name="charts"), model=MockModel(respond))


async def test_an_image_result_is_shown_as_an_image_audio_as_a_player_and_resources_as_text(tmp_path: Path) -> None:
    async with serve(runtime(), tokens=()) as served, browser_page(tmp_path / "p") as page:
        await page.set_viewport_size({"width": 1000, "height": 800})
        await page.goto(served.base + "/")
        await send(page, "rain in Oslo?")
        await expect(page.locator(".msg.assistant").last).to_have_text("Here it is.")

        result = page.get_by_label("chart result")
        image = result.get_by_role("img", name="Rainfall in Oslo")
        await expect(image).to_have_attribute("src", f"data:image/png;base64,{PNG}")
        assert await image.evaluate("img => img.complete && img.naturalWidth") == 1  # the browser decoded it
        audio = result.locator("audio")
        await expect(audio).to_have_attribute("src", f"data:audio/wav;base64,{WAV}")
        await expect(audio).to_have_attribute("controls", "")
        await expect(audio).to_have_accessible_name("Audio from chart")
        await expect(result.locator("figure")).to_have_text("data://Oslo.csvjan,80")
        blob = result.get_by_role("link", name="data://raw.bin (application/octet-stream, 3 bytes)")
        await expect(blob).to_have_attribute("download", "raw.bin")
        await expect(result.locator(".content-text")).to_have_text("Rainfall in Oslo")
        await shoot(page, "content")

        await send(page, "show the data")
        await expect(page.locator(".msg.assistant").last).to_have_text("Here it is.")
        await expect(page.locator(".tool").last.locator(".content")).to_have_count(0)  # shown as JSON data
        await expect(page.locator(".tool").last).to_contain_text("data, not content")
