"""`tools/list` in pages with opaque cursors, on both eras; a cursor that is not one of this list's is `-32602`."""

from __future__ import annotations

import base64

import mcp.types as types
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp.types.version import LATEST_MODERN_VERSION

from eve_py import define_tool
from eve_py.agent import Agent
from eve_py.mcp import mcp_server

pytestmark = pytest.mark.anyio

ERAS = ["legacy", LATEST_MODERN_VERSION]


def echo(text: str) -> str:
    return text


def agent(*names: str) -> Agent:
    return Agent.from_definitions({name: define_tool(description=f"Tool {name}.", execute=echo) for name in names})


async def every_page(client: Client) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        listed = await client.list_tools(cursor=cursor, cache_mode="bypass")
        pages.append([tool.name for tool in listed.tools])
        cursor = listed.next_cursor
        if cursor is None:
            return pages


@pytest.mark.parametrize("mode", ERAS)
async def test_tools_come_in_pages_that_follow_each_other(mode: str) -> None:
    async with Client(mcp_server(agent("a", "b", "c", "d", "e"), page_size=2), mode=mode) as client:
        assert await every_page(client) == [["ask_question", "a"], ["b", "c"], ["d", "e"]]
    async with Client(mcp_server(agent("a", "b")), mode=mode) as client:  # 100 a page by default
        assert await every_page(client) == [["ask_question", "a", "b"]]


def _cursor(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize("mode", ERAS)
async def test_a_cursor_not_of_this_list_is_invalid_params(mode: str) -> None:
    async with Client(mcp_server(agent("x", "y", "z"), page_size=2), mode=mode) as other:
        foreign = (await other.list_tools()).next_cursor
    assert foreign is not None
    async with Client(mcp_server(agent("a", "b", "c"), page_size=2), mode=mode) as client:
        real = (await client.list_tools()).next_cursor
        assert real is not None
        for bad in ("not a cursor!", _cursor("[1, 2]"), _cursor('["tools", 9, "x"]'), foreign, real + "A"):
            with pytest.raises(MCPError) as caught:
                await client.list_tools(cursor=bad, cache_mode="bypass")
            assert caught.value.error.code == types.INVALID_PARAMS
            assert caught.value.error.message == "Invalid cursor"
        assert [tool.name for tool in (await client.list_tools(cursor=real)).tools] == ["b", "c"]
