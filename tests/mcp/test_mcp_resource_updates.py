"""A tool that changes what a resource reads says so, and every client subscribed to the URI hears it, on both eras.

Driven with the SDK's own client: `resources/subscribe` and `notifications/resources/updated` on
the legacy era, a `subscriptions/listen` stream on the 2026 era. A second client calls the tool,
so the update crosses connections; a URI nobody subscribed to reaches no one.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp.types as types
import pytest
from mcp.client import Client
from mcp.client.session import IncomingMessage
from mcp.server.subscriptions import ResourceUpdated
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types.version import LATEST_MODERN_VERSION

from eve_py import Runtime
from eve_py.agent import load_agent
from eve_py.mcp import mcp_server
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio

FILES = {
    "agent/agent.py": 'from eve_py import define_agent\n\nagent = define_agent(instructions="Orders.")\n',
    "agent/tools/ask_question.py": "from eve_py import disable_tool\n\ntool = disable_tool()\n",
    "orders.json": '{"ORD-7001": "shipped", "ORD-7002": "delivered"}',
    "agent/resources/orders.py": (
        "import json\nfrom pathlib import Path\n\n"
        "from eve_py.mcp import define_resource\n\n"
        "ORDERS = Path(__file__).parents[2] / 'orders.json'\n\n"
        "def read(order_id: str) -> str:\n"
        "    return f'{order_id}: {json.loads(ORDERS.read_text())[order_id]}'\n\n"
        "resource = define_resource('orders://{order_id}', read)\n"
    ),
    "agent/tools/refund.py": (
        "import json\nfrom pathlib import Path\n\n"
        "from eve_py import ToolContext, define_tool\n\n"
        "ORDERS = Path(__file__).parents[2] / 'orders.json'\n\n"
        "async def refund(order_id: str, ctx: ToolContext) -> str:\n"
        "    orders = json.loads(ORDERS.read_text())\n"
        "    orders[order_id] = 'refunded'\n"
        "    ORDERS.write_text(json.dumps(orders))\n"
        "    await ctx.notify_resource_updated(f'orders://{order_id}')\n"
        "    return f'{order_id} refunded'\n\n"
        "tool = define_tool(description='Refund an order.', execute=refund)\n"
    ),
}


@pytest.fixture
def app(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def text_of(result: types.ReadResourceResult) -> str:
    [contents] = result.contents
    assert isinstance(contents, types.TextResourceContents)
    return contents.text


async def test_a_legacy_client_subscribed_to_a_uri_hears_its_update_and_reads_the_change(app: Path) -> None:
    server = mcp_server(load_agent(app))
    heard: list[str] = []
    updated = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            heard.append(str(message.params.uri))
            updated.set()

    async with (
        Client(server, mode="legacy", message_handler=on_message) as watcher,
        Client(server, mode="legacy", message_handler=on_message) as caller,
    ):
        capabilities = watcher.server_capabilities.resources
        assert capabilities is not None and capabilities.subscribe and not capabilities.list_changed
        with pytest.warns(MCPDeprecationWarning):  # removed on the 2026 era, where listen() replaces it
            await watcher.session.subscribe_resource("orders://ORD-7002")
        assert text_of(await watcher.read_resource("orders://ORD-7002")) == "ORD-7002: delivered"
        await caller.call_tool("refund", {"order_id": "ORD-7001"})  # nobody subscribed to this one
        await caller.call_tool("refund", {"order_id": "ORD-7002"})
        with anyio.fail_after(5):
            await updated.wait()
        assert text_of(await watcher.read_resource("orders://ORD-7002")) == "ORD-7002: refunded"
        with pytest.warns(MCPDeprecationWarning):
            await watcher.session.unsubscribe_resource("orders://ORD-7002")
        await caller.call_tool("refund", {"order_id": "ORD-7002"})
        await watcher.list_resource_templates()  # a round trip after the call: a notification would be in by now
    assert heard == ["orders://ORD-7002"]


async def test_a_2026_client_listening_to_a_uri_hears_its_update(app: Path) -> None:
    server = mcp_server(load_agent(app))
    async with (
        Client(server, mode=LATEST_MODERN_VERSION) as watcher,
        Client(server, mode=LATEST_MODERN_VERSION) as caller,
    ):
        async with watcher.listen(resource_subscriptions=["orders://ORD-7002"]) as subscription:
            assert subscription.honored.resource_subscriptions == ["orders://ORD-7002"]
            await caller.call_tool("refund", {"order_id": "ORD-7001"})  # not listened to
            await caller.call_tool("refund", {"order_id": "ORD-7002"})
            with anyio.fail_after(5):
                event = await anext(aiter(subscription))
        assert event == ResourceUpdated(uri="orders://ORD-7002")
        assert text_of(await watcher.read_resource("orders://ORD-7002")) == "ORD-7002: refunded"


async def test_in_an_agent_run_the_notification_goes_nowhere_and_the_call_completes(app: Path) -> None:
    def respond(request: MockModelRequest) -> str | MockResponse:
        if request.last_tool_result is None:
            return MockResponse(tool_calls=[MockToolCall("refund", {"order_id": "ORD-7002"})])
        return str(request.last_tool_result.output)

    session = await Runtime(load_agent(app), model=MockModel(respond)).create_session()
    with anyio.fail_after(5):
        done = await session.send("refund ORD-7002")
    assert done.message == "ORD-7002 refunded"
