"""An app's `agent/resources/` and `agent/prompts/` served by `mcp_server`, with completions, on both eras.

A prompt whose resolver asks elicits before it renders: mid-request on the legacy era, in an
`input_required` round on the 2026 era (whose sealed state answers once, as a tool's does).
"""

from __future__ import annotations

from pathlib import Path

import mcp.types as types
import pytest
from mcp.client import Client, ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types.version import LATEST_MODERN_VERSION

from eve_py.agent import load_agent
from eve_py.errors import ToolResolutionError
from eve_py.mcp import mcp_server

pytestmark = pytest.mark.anyio

ERAS = ["legacy", LATEST_MODERN_VERSION]

FILES = {
    "agent/agent.py": 'from eve_py import define_agent\n\nagent = define_agent(instructions="Orders.")\n',
    "agent/tools/ask_question.py": "from eve_py import disable_tool\n\ntool = disable_tool()\n",
    "agent/resources/policy.py": (
        "from eve_py.mcp import define_resource\n\n"
        "def read() -> str:\n    return 'Refunds within 30 days.'\n\n"
        "resource = define_resource('desk://policy', read, title='Refund policy')\n"
    ),
    "agent/resources/logo.py": (
        "from eve_py.mcp import define_resource\n\n"
        "async def read() -> bytes:\n    return b'\\x89PNG'\n\n"
        "resource = define_resource('desk://logo', read, mime_type='image/png')\n"
    ),
    "agent/resources/orders.py": (
        "from eve_py.mcp import define_resource\n\n"
        "def read(order_id: str) -> str:\n    return f'order {order_id}: shipped'\n\n"
        "def ids(typed: str) -> list[str]:\n"
        "    return [o for o in ('ORD-7001', 'ORD-7002', 'X-1') if o.startswith(typed)]\n\n"
        "resource = define_resource('orders://{order_id}', read, complete={'order_id': ids})\n"
    ),
    "agent/prompts/refund_request.py": (
        "from eve_py.mcp import PromptMessage, define_prompt\n\n"
        "def render(order_id: str, tone: str = 'polite') -> list[PromptMessage | str]:\n"
        '    """Draft a refund request."""\n'
        "    asked = f'Write a {tone} refund request for {order_id}.'\n"
        "    return [asked, PromptMessage(role='assistant', content='Sure.')]\n\n"
        "prompt = define_prompt(render, complete={'tone': lambda typed: ['polite', 'firm']})\n"
    ),
    "agent/prompts/apology.py": (
        "from typing import Annotated\n\n"
        "from pydantic import BaseModel\n\n"
        "from eve_py import Elicit, Resolve\n"
        "from eve_py.mcp import define_prompt\n\n"
        "class Reason(BaseModel):\n    reason: str\n\n"
        "def ask_reason(order_id: str) -> Elicit[Reason]:\n"
        "    return Elicit(f'Why is {order_id} late?', Reason)\n\n"
        "def render(order_id: str, reason: Annotated[Reason, Resolve(ask_reason)]) -> str:\n"
        "    return f'Apologise for {order_id}: {reason.reason}.'\n\n"
        "prompt = define_prompt(render)\n"
    ),
}


@pytest.fixture
def app(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize("mode", ERAS)
async def test_resources_are_listed_and_read(app: Path, mode: str) -> None:
    async with Client(mcp_server(load_agent(app)), mode=mode) as client:
        listed = await client.list_resources()
        templates = await client.list_resource_templates()
        policy = await client.read_resource("desk://policy")
        logo = await client.read_resource("desk://logo")
        order = await client.read_resource("orders://ORD-7001")
    assert [(str(r.uri), r.name, r.title) for r in listed.resources] == [
        ("desk://logo", "logo", None),
        ("desk://policy", "policy", "Refund policy"),
    ]
    assert [t.uri_template for t in templates.resource_templates] == ["orders://{order_id}"]
    assert policy.contents == [
        types.TextResourceContents(uri="desk://policy", mime_type="text/plain", text="Refunds within 30 days.")
    ]
    assert logo.contents == [types.BlobResourceContents(uri="desk://logo", mime_type="image/png", blob="iVBORw==")]
    assert (
        isinstance(order.contents[0], types.TextResourceContents)
        and order.contents[0].text == "order ORD-7001: shipped"
    )


@pytest.mark.parametrize("mode", ERAS)
async def test_prompts_render_with_their_arguments(app: Path, mode: str) -> None:
    async with Client(mcp_server(load_agent(app)), mode=mode) as client:
        (_, listed) = (await client.list_prompts()).prompts
        got = await client.get_prompt("refund_request", {"order_id": "ORD-7002"})
        with pytest.raises(MCPError, match="Missing required arguments: order_id") as missing:
            await client.get_prompt("refund_request", {})
        with pytest.raises(MCPError, match="Unknown prompt: nope"):
            await client.get_prompt("nope", {})
    assert listed.name == "refund_request" and listed.description == "Draft a refund request."
    assert [(a.name, a.required) for a in listed.arguments or []] == [("order_id", True), ("tone", False)]
    assert [(m.role, m.content) for m in got.messages] == [
        ("user", types.TextContent(type="text", text="Write a polite refund request for ORD-7002.")),
        ("assistant", types.TextContent(type="text", text="Sure.")),
    ]
    assert missing.value.error.code == types.INVALID_PARAMS


async def answer_reason(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    assert isinstance(params, types.ElicitRequestFormParams) and params.message == "Why is ORD-7 late?"
    return types.ElicitResult(action="accept", content={"reason": "a storm"})


@pytest.mark.parametrize("mode", ERAS)
async def test_a_prompt_asks_before_it_renders(app: Path, mode: str) -> None:
    async with Client(mcp_server(load_agent(app)), mode=mode, elicitation_callback=answer_reason) as client:
        listed = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
        got = await client.get_prompt("apology", {"order_id": "ORD-7"})
    assert [(a.name, a.required) for a in listed["apology"].arguments or []] == [("order_id", True)]
    assert [m.content for m in got.messages] == [types.TextContent(type="text", text="Apologise for ORD-7: a storm.")]


async def test_a_prompts_sealed_state_answers_once(app: Path) -> None:
    async with Client(
        mcp_server(load_agent(app)), mode=LATEST_MODERN_VERSION, elicitation_callback=answer_reason
    ) as client:
        first = await client.session.get_prompt("apology", {"order_id": "ORD-7"}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult) and first.input_requests
        ((key, _),) = first.input_requests.items()
        answer: types.InputResponses = {key: types.ElicitResult(action="accept", content={"reason": "rain"})}
        done = await client.session.get_prompt(
            "apology", {"order_id": "ORD-7"}, input_responses=answer, request_state=first.request_state
        )
        assert isinstance(done, types.GetPromptResult)
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await client.session.get_prompt(
                "apology", {"order_id": "ORD-7"}, input_responses=answer, request_state=first.request_state
            )


@pytest.mark.parametrize("mode", ERAS)
async def test_completions_suggest_from_what_was_typed(app: Path, mode: str) -> None:
    async with Client(mcp_server(load_agent(app)), mode=mode) as client:
        orders = await client.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="orders://{order_id}"),
            {"name": "order_id", "value": "ORD"},
        )
        tones = await client.complete(
            types.PromptReference(type="ref/prompt", name="refund_request"), {"name": "tone", "value": ""}
        )
        none = await client.complete(
            types.PromptReference(type="ref/prompt", name="refund_request"), {"name": "order_id", "value": "O"}
        )
    assert orders.completion.values == ["ORD-7001", "ORD-7002"] and orders.completion.total == 2
    assert tones.completion.values == ["polite", "firm"]
    assert none.completion.values == []


@pytest.mark.parametrize("mode", ERAS)
async def test_an_unknown_uri_is_invalid_params_naming_it(app: Path, mode: str) -> None:
    async with Client(mcp_server(load_agent(app)), mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource("desk://nothing")
    assert caught.value.error.code == types.INVALID_PARAMS
    assert caught.value.error.data == {"uri": "desk://nothing"}


async def test_resources_come_in_pages(app: Path) -> None:
    async with Client(mcp_server(load_agent(app), page_size=1)) as client:
        first = await client.list_resources()
        second = await client.list_resources(cursor=first.next_cursor)
    assert [str(r.uri) for r in first.resources + second.resources] == ["desk://logo", "desk://policy"]
    assert second.next_cursor is None


def test_a_file_without_its_export_is_named(app: Path) -> None:
    (app / "agent" / "prompts" / "broken.py").write_text("prompt = 'not a prompt'\n")
    with pytest.raises(ToolResolutionError, match='export "prompt" from "prompts/broken.py" to be define_prompt'):
        mcp_server(load_agent(app))
