"""Calling an MCP server's tool from an agent: `RemoteToolPlan`, the plan behind a `desk__refund_order`.

The harness runs it like any executor plan (`plan.run(input, ctx, recorded)`). A call goes over
the server's shared session (`_sessions`) and answers the server's requests: its elicitations
(a legacy `elicitation/create` push or a 2026 `input_required` round alike) from the answers
recorded for this call, its sampling requests with the agent's own model (`ctx.sample`), its
roots requests with the connection's `roots`. A question with no recorded answer ends the
attempt: the remote call is abandoned (cancelled) and the plan returns `NeedsInput`, so the call
parks durably as an eve-py `elicitation` input request. When a person answers, the harness runs
the plan again (after a restart too): the call starts over and each question asked again is
answered from the record. A question is keyed by its digest (message and schema), so the same
question gets the same answer.

The remote call is made again from the start on every answer: a server whose tool has side
effects before it asks should ask first (as resolvers do).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from pydantic import BaseModel, ConfigDict, create_model

from eve_py._context import ToolContext
from eve_py._json import JsonValue
from eve_py.authoring._signature import Completed, ExecutorPlan, NeedsInput
from eve_py.errors import EveError, ToolError
from eve_py.mcp.connect._definition import McpServerDefinition
from eve_py.mcp.connect._sessions import CallHandlers, ServerSession, in_call_task
from eve_py.protocol.pending import RecordedOutcome
from eve_py.resolvers import Question, question_digest

__all__ = ("RemoteToolPlan", "remote_plan", "result_value", "roots_result")


def _never_called(**arguments: Any) -> None:
    """A remote tool's plan runs no local function; `RemoteToolPlan.run` calls the server."""
    raise AssertionError("a remote MCP tool has no local executor")


def _question(params: types.ElicitRequestFormParams) -> Question:
    schema = dict(params.requested_schema)
    digest = question_digest(params.message, schema)
    return Question(key=f"mcp:{digest}", message=params.message, schema=schema, digest=digest)


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


_HINTS: dict[str, Any] = {"annotations": True, "meta": True, "resource": {"meta": True}}


def result_value(result: types.CallToolResult) -> JsonValue:
    """A remote tool's result as the call's output: its structured content, else its text, else its blocks.

    Blocks keep their content and leave out what eve-py's content blocks do not carry (a
    block's `annotations` and the `_meta` of a block or its resource: hints for a client), so
    that the output is read back as content (`content_from_json`), not as JSON data.

    Raises:
        ToolError: The result is an error result (its text is the message).
    """
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    if result.is_error:
        raise ToolError("\n".join(texts) or "the MCP tool failed without a message")
    if result.structured_content is not None:
        return dict(result.structured_content)
    if len(texts) == len(result.content) == 1:
        return texts[0]
    return [block.model_dump(mode="json", by_alias=True, exclude_none=True, exclude=_HINTS) for block in result.content]


def _prompt(params: types.CreateMessageRequestParams) -> str:
    """A server's sampling messages as one prompt for the agent's model (their text, by role when several)."""
    texts: list[tuple[str, str]] = []
    for message in params.messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        text = "\n".join(block.text for block in blocks if isinstance(block, types.TextContent))
        texts.append((message.role, text))
    if len(texts) == 1 and texts[0][0] == "user":
        return texts[0][1]
    return "\n\n".join(f"{role}: {text}" for role, text in texts)


def roots_result(server: McpServerDefinition, app_dir: Path) -> types.ListRootsResult:
    """The connection's `roots` as a `roots/list` answer: `file://` URIs as given, paths made ones."""
    roots: list[types.Root] = []
    for root in server.roots:
        if "://" in root:
            roots.append(types.Root(uri=root))
        else:
            path = (app_dir / root).resolve()
            roots.append(types.Root(uri=path.as_uri(), name=path.name))
    return types.ListRootsResult(roots=roots)


@dataclass(frozen=True, slots=True)
class RemoteToolPlan(ExecutorPlan):
    """An executor plan that calls one tool of an MCP server."""

    server: McpServerDefinition
    server_name: str
    """The connection's name (its file under `agent/connections/`), for messages."""
    remote_name: str
    """The tool's name on the server."""
    app_dir: Path
    """Where a stdio command runs."""
    session: ServerSession
    """The server's shared session (one per connection)."""

    async def run(
        self, tool_input: Mapping[str, Any], ctx: ToolContext, recorded: Mapping[str, RecordedOutcome] | None = None
    ) -> Completed | NeedsInput:
        """Call the remote tool, answering its questions from `recorded`.

        Raises:
            ToolError: The server could not be reached, failed, timed out, answered with an
                error result, or asked for something other than a form.
        """
        answers = recorded or {}
        open_questions: list[Question] = []
        parked = anyio.CancelScope()

        async def on_elicit(params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
            if not isinstance(params, types.ElicitRequestFormParams):
                return types.ErrorData(code=types.INVALID_PARAMS, message="eve-py answers form elicitations only")
            question = _question(params)
            entry = answers.get(question.key)
            if entry is not None and entry.q == question.digest:
                content = entry.data if entry.action == "accept" and isinstance(entry.data, dict) else None
                return types.ElicitResult(action=entry.action, content=content)
            open_questions.append(question)
            parked.cancel()  # abandon the remote call: it resumes from the start once answered
            if in_call_task():
                await anyio.sleep_forever()  # a 2026 round runs in this call's task: cancelled here
            return types.ErrorData(code=types.INVALID_REQUEST, message="the question waits for a person")

        async def on_sample(params: types.CreateMessageRequestParams) -> types.CreateMessageResult | types.ErrorData:
            try:
                text = await ctx.sample(
                    _prompt(params), system_prompt=params.system_prompt, max_tokens=params.max_tokens
                )
            except EveError as exc:
                return types.ErrorData(code=types.INTERNAL_ERROR, message=str(exc))
            content = types.TextContent(type="text", text=text)
            return types.CreateMessageResult(role="assistant", content=content, model="eve-py agent model")

        async def on_roots() -> types.ListRootsResult:
            return roots_result(self.server, self.app_dir)

        handlers = CallHandlers(elicit=on_elicit, sample=on_sample, roots=on_roots if self.server.roots else None)
        label = f"MCP server {self.server_name!r}"
        try:
            with anyio.fail_after(self.server.timeout_s), parked:
                result = await self.session.call(self.remote_name, tool_input, handlers)
        except TimeoutError:
            await self.session.aclose()  # a server that does not answer may be stuck: the next call reconnects
            raise ToolError(f"{label} did not answer within {self.server.timeout_s:g} s") from None
        except ToolError:
            raise
        except Exception as exc:
            raise ToolError(f"{label} failed: {_describe(exc)}") from None
        if open_questions:
            return NeedsInput(open_questions)
        return Completed(result_value(result))

    async def aclose(self) -> None:
        """Close the server's shared session in this event loop (the next call opens a new one)."""
        await self.session.aclose()


def remote_plan(
    server: McpServerDefinition,
    *,
    server_name: str,
    tool: types.Tool,
    app_dir: Path,
    session: ServerSession | None = None,
) -> RemoteToolPlan:
    """The plan for one listed remote tool (its arguments are checked by the server); `session`
    is the server's shared session (a new one by default)."""
    arguments: type[BaseModel] = create_model(f"{tool.name}_input", __config__=ConfigDict(extra="allow"))
    return RemoteToolPlan(
        fn=_never_called,
        is_async=True,
        context_params=(),
        resolved_params=(),
        arguments_model=arguments,
        input_schema=dict(tool.input_schema),
        server=server,
        server_name=server_name,
        remote_name=tool.name,
        app_dir=app_dir,
        session=session if session is not None else ServerSession(server=server, app_dir=app_dir),
    )
