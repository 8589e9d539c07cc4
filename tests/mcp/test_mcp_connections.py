"""MCP servers as tools for an agent: `agent/connections/*.py` declares them, their tools join
under a prefix, their questions park durably as `elicitation` input requests, and a server
that is down, dies mid-call or times out gives the model one clear error result.

The remote server is the real thing: `eve-py mcp` serving the refund-desk port over HTTP (one
process for the test session), or a stdio command where the test is about the process itself.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import mcp.types as types
import pytest

from eve_py import InputResponse, Runtime, load_agent
from eve_py._context import ToolContext
from eve_py.agent import Agent, load_mock_model
from eve_py.cli._main import main
from eve_py.errors import ToolDefinitionError, ToolError, ToolResolutionError
from eve_py.mcp import define_mcp_server
from eve_py.mcp.connect._remote import remote_plan
from eve_py.protocol.messages import ToolMessage
from eve_py.sessions._sqlite import SQLiteSessionStore
from eve_py.testing import MockModel, MockModelRequest, MockResponse, MockToolCall
from eve_py.tools._resolved import ResolvedTool
from tests.conftest import REPO

pytestmark = pytest.mark.anyio

CLIENT_APP = REPO / "fixtures" / "mcp-client-desk"


def _app_using(tmp_path: Path, connection: str) -> Path:
    """The mcp-client-desk app with its `desk` connection replaced by `connection` (Python source)."""
    app = tmp_path / "app"
    shutil.copytree(CLIENT_APP, app, ignore=shutil.ignore_patterns(".eve", "__pycache__"))
    (app / "agent" / "connections" / "desk.py").write_text(connection)
    return app


@pytest.fixture
def http_app(tmp_path: Path, desk_url: str) -> Path:
    return _app_using(
        tmp_path, f"from eve_py.mcp import define_mcp_server\n\nserver = define_mcp_server(url={desk_url!r})\n"
    )


def test_remote_tools_join_under_the_prefix_with_their_schemas(http_app: Path) -> None:
    agent = load_agent(http_app)
    tool = agent.tools["desk__refund_order"]
    assert set(tool.input_schema["properties"]) == {"order_id", "reason"}
    assert tool.output_schema is not None and "refunded_cents" in tool.output_schema["properties"]
    assert tool.description.startswith("Refund an order.")


async def test_a_remote_question_parks_durably_and_resumes_after_a_restart(http_app: Path, tmp_path: Path) -> None:
    store_path = tmp_path / "sessions.db"
    store = await SQLiteSessionStore.open(store_path)
    runtime = Runtime(load_agent(http_app), model=load_mock_model(http_app), store=store)
    session = await runtime.create_session()
    first = await session.send("refund ORD-7002 it arrived broken")
    [scope] = first.input_requests
    assert first.status == "waiting" and scope.kind == "elicitation"
    assert scope.prompt.startswith("ORD-7002 has several items (enamel-mug, canvas-tote, sticker-pack).")
    await runtime.aclose()
    await store.aclose()

    store = await SQLiteSessionStore.open(store_path)  # a new process would see exactly this
    runtime = Runtime(load_agent(http_app), model=load_mock_model(http_app), store=store)
    try:
        session = await runtime.get_session(session.id)
        second = await session.respond([InputResponse(request_id=scope.request_id, value={"full": True})])
        [restock] = second.input_requests
        assert restock.prompt == "The refund includes physical items (enamel-mug, canvas-tote). Return them to stock?"
        done = await session.respond([InputResponse(request_id=restock.request_id, value={"restock": True})])
        assert done.status == "completed"
        assert done.message == "Refunded 48.00 on ORD-7002 (restocked)."
    finally:
        await runtime.aclose()
        await store.aclose()


async def test_a_declined_remote_question_gives_the_servers_error_result(http_app: Path) -> None:
    runtime = Runtime(load_agent(http_app), model=load_mock_model(http_app))
    session = await runtime.create_session()
    first = await session.send("refund ORD-7002 changed my mind")
    done = await session.respond([InputResponse(request_id=first.input_requests[0].request_id, action="decline")])
    messages = await session.messages()
    await runtime.aclose()
    [result] = [part for m in messages if isinstance(m, ToolMessage) for part in m.content]
    assert result.is_error
    assert "Resolver for parameter 'scope' could not resolve: elicitation was decline" in str(result.output)
    assert done.status == "completed"


def _calls_once(tool_name: str) -> MockModel:
    def respond(request: MockModelRequest) -> str | MockResponse:
        results = request.tool_results_since_last_user_message
        if not results:
            return MockResponse(tool_calls=[MockToolCall(tool_name, {"order_id": "ORD-7001", "reason": "x"})])
        return f"error={results[-1].is_error}: {results[-1].output}"

    return MockModel(respond)


def _agent_with(server_command: list[str] | None, url: str | None, timeout_s: float) -> Agent:
    server = define_mcp_server(command=server_command, url=url, timeout_s=timeout_s)
    listed = types.Tool(name="refund_order", input_schema={"type": "object", "properties": {}})
    plan = remote_plan(server, server_name="desk", tool=listed, app_dir=REPO)
    tool = ResolvedTool(
        name="desk__refund_order",
        description="Refund.",
        input_schema=plan.input_schema,
        output_schema=None,
        client_resolved=False,
        needs_approval=False,
        to_model_output=None,
        path="connections/desk.py",
        plan=plan,
    )
    return Agent(name="t", tools={tool.name: tool})


async def _one_result(agent: Agent) -> str:
    runtime = Runtime(agent, model=_calls_once("desk__refund_order"))
    session = await runtime.create_session()
    try:
        done = await session.send("go")
    finally:
        await runtime.aclose()
    assert done.status == "completed"
    messages = await session.messages()
    [result] = [part for m in messages if isinstance(m, ToolMessage) for part in m.content]
    assert result.is_error
    return str(result.output)


async def test_a_server_that_is_down_gives_one_clear_error_result() -> None:
    output = await _one_result(_agent_with(None, "http://127.0.0.1:9/mcp", 20))
    assert output.startswith("Error executing tool desk__refund_order: MCP server 'desk' failed: ")


async def test_a_server_that_does_not_answer_times_out_with_one_clear_error_result() -> None:
    hang = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    output = await _one_result(_agent_with(hang, None, 1.5))
    assert output == "Error executing tool desk__refund_order: MCP server 'desk' did not answer within 1.5 s"


async def test_a_server_that_dies_mid_call_gives_one_clear_error_result(tmp_path: Path) -> None:
    script = tmp_path / "dies.py"
    script.write_text(
        "import os\nfrom mcp.server.mcpserver import MCPServer\n\nmcp = MCPServer('dies')\n\n\n"
        "@mcp.tool()\ndef refund_order() -> str:\n    os._exit(3)\n\n\nmcp.run()\n"
    )
    output = await _one_result(_agent_with([sys.executable, str(script)], None, 60))
    assert output.startswith("Error executing tool desk__refund_order: MCP server 'desk' failed: ")


def test_an_unreachable_server_fails_loading_with_the_file_named(tmp_path: Path) -> None:
    app = _app_using(
        tmp_path,
        "from eve_py.mcp import define_mcp_server\n\nserver = define_mcp_server(url='http://127.0.0.1:9/mcp')\n",
    )
    with pytest.raises(ToolResolutionError, match='Cannot list the tools of the MCP server in "connections/desk.py"'):
        load_agent(app)


def test_a_connection_file_must_export_a_server(tmp_path: Path) -> None:
    app = _app_using(tmp_path, "server = 'http://127.0.0.1:9/mcp'\n")
    with pytest.raises(ToolResolutionError, match='Expected the export "server"'):
        load_agent(app)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of"),
        ({"command": ["x"], "url": "http://h/mcp"}, "exactly one of"),
        ({"url": "ftp://h/mcp"}, "http:// or https://"),
        ({"command": ["x"], "bearer_env": "T"}, "for url=... servers"),
        ({"url": "http://h/mcp", "timeout_s": 0}, "timeout_s must be > 0"),
        ({"url": "http://h/mcp", "roots": "data"}, "roots must be a list"),
        ({"url": "http://h/mcp", "roots": ["https://example.com"]}, "a root is a path or a file:// URI"),
    ],
)
def test_define_mcp_server_rejects_bad_shapes(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ToolDefinitionError, match=message):
        define_mcp_server(**kwargs)  # type: ignore[arg-type]


async def test_a_bearer_token_variable_that_is_not_set_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DESK_TOKEN", raising=False)
    server = define_mcp_server(url="http://127.0.0.1:9/mcp", bearer_env="DESK_TOKEN")
    listed = types.Tool(name="refund_order", input_schema={"type": "object", "properties": {}})
    plan = remote_plan(server, server_name="desk", tool=listed, app_dir=REPO)
    with pytest.raises(ToolError, match="the environment variable DESK_TOKEN is not set"):
        await plan.run({}, ToolContext(session_id="s", turn_id="t", call_id="c", tool_name="desk__refund_order"))


async def test_the_fixture_app_uses_the_desk_over_stdio() -> None:
    """The legacy era's `elicitation/create` push parks the call too (stdio negotiates legacy)."""
    agent = load_agent(CLIENT_APP)  # lists the tools of `eve-py mcp ../refund-desk-mcp`, run in the app folder
    runtime = Runtime(agent, model=load_mock_model(CLIENT_APP))
    session = await runtime.create_session()
    try:
        first = await session.send("refund ORD-7002 changed my mind")
        [scope] = first.input_requests
        assert scope.kind == "elicitation" and scope.prompt.startswith("ORD-7002 has several items")
        done = await session.respond([InputResponse(request_id=scope.request_id, action="decline")])
    finally:
        await runtime.aclose()
    assert done.status == "completed" and done.message is not None
    assert done.message.startswith("The refund did not go through: Error executing tool desk__refund_order: ")
    assert "Resolver for parameter 'scope' could not resolve: elicitation was decline" in done.message


def test_build_lists_the_connected_servers_tools(http_app: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", str(http_app)]) == 0
    manifest = json.loads((http_app / ".eve" / "build" / "manifest.json").read_text(encoding="utf-8"))
    [remote] = [tool for tool in manifest["tools"] if tool["name"] == "desk__refund_order"]
    assert remote["source"] == "connections/desk.py" and not remote["clientResolved"]
    assert set(remote["inputSchema"]["properties"]) == {"order_id", "reason"}
    assert "desk__refund_order" in capsys.readouterr().out


def test_build_names_a_server_it_cannot_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    app = _app_using(
        tmp_path,
        "from eve_py.mcp import define_mcp_server\n\nserver = define_mcp_server(url='http://127.0.0.1:9/mcp')\n",
    )
    assert main(["build", str(app)]) != 0
    err = capsys.readouterr().err
    assert "E301" in err and 'Cannot list the tools of the MCP server in "connections/desk.py"' in err
