"""Context objects eve-py hands to tool executors, resolvers and approval policies.

A parameter annotated `ToolContext` is filled by the runtime and never appears in the
model-facing input schema. Through it a running tool reports progress, logs, asks the MCP
client's model (sampling) and lists the client's roots; where those go is the context's
`channel`, set by whoever runs the call (an MCP server, the agent loop). An approval policy
(`needs_approval=callable`) receives an `ApprovalContext`.

On the MCP 2026 era a client is asked in rounds (`input_required` results), not mid-call: a
channel that has no answer yet raises `ClientInputPending`, the call ends its round with the
question, and the tool runs again from the start with the answer in the next round.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, get_args

from eve_py._json import JsonObject, JsonValue
from eve_py.errors import ToolError

__all__ = (
    "LOG_LEVELS",
    "SILENT",
    "ApprovalContext",
    "ClientFeature",
    "ClientInputPending",
    "LogLevel",
    "Root",
    "ToolChannel",
    "ToolContext",
)

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
"""The syslog severities MCP logging uses (RFC 5424), least severe first."""

LOG_LEVELS: tuple[LogLevel, ...] = get_args(LogLevel)
"""Every `LogLevel`, least severe first."""

ClientFeature = Literal["elicitation", "sampling", "roots"]
"""What a tool may ask of whoever runs it: a person's answer (`Elicit`), a model's (`sample`), the roots."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Root:
    """A directory or file the client lets the server work in (MCP roots)."""

    uri: str
    """Its URI (`file:///...`)."""
    name: str | None = None
    """A name for people, if the client gave one."""


class ClientInputPending(BaseException):  # noqa: N818  # a signal, not an error
    """Raised by a channel that must ask the client in a round of its own (the MCP 2026 era).

    It derives from `BaseException` so that a tool's `except Exception:` does not swallow it: the
    call that raised it ends its round with the question, and the tool runs again with the answer.
    """


class ToolChannel(Protocol):
    """Where a running tool's progress, log entries and sampling requests go.

    Implementations: the MCP server's (notifications and requests to the client), the agent
    loop's (sampling by the agent's own model), and `SILENT` (nobody listens).
    """

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """Report progress (`progress` of `total`, rising; `total` None when unknown)."""
        ...

    async def log(self, level: LogLevel, data: JsonValue, logger: str | None) -> None:
        """Log one entry at `level`."""
        ...

    async def sample(self, prompt: str, *, system_prompt: str | None, max_tokens: int) -> str:
        """The text a model answers to `prompt`.

        Raises:
            ToolError: Nobody here offers sampling (uncaught, the call fails with its message).
            ClientInputPending: The answer comes in the next round.
        """
        ...

    async def list_roots(self) -> list[Root]:
        """The client's roots.

        Raises:
            ToolError: Nobody here offers roots.
            ClientInputPending: The answer comes in the next round.
        """
        ...

    def offers(self, feature: ClientFeature) -> bool:
        """Whether `feature` can be asked of whoever runs the call."""
        ...

    async def resource_updated(self, uri: str) -> None:
        """Tell whoever listens to the resource at `uri` that it changed."""
        ...


class _Silent:
    """Nobody listens: progress and logs cost a call that returns; sampling is unavailable."""

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        return None

    async def log(self, level: LogLevel, data: JsonValue, logger: str | None) -> None:
        return None

    async def sample(self, prompt: str, *, system_prompt: str | None, max_tokens: int) -> str:
        raise ToolError(
            "sampling needs an MCP client that offers it: serve the tool with `eve-py mcp` to a client "
            "that declares the sampling capability"
        )

    async def list_roots(self) -> list[Root]:
        raise ToolError(
            "roots need an MCP client that offers them: serve the tool with `eve-py mcp` to a client "
            "that declares the roots capability"
        )

    def offers(self, feature: ClientFeature) -> bool:
        # A resolver's question parks for a person wherever no client is connected.
        return feature == "elicitation"

    async def resource_updated(self, uri: str) -> None:
        return None


SILENT: ToolChannel = _Silent()
"""The channel of a context nobody listens to."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolContext:
    """What a running tool knows about the call it serves."""

    session_id: str
    """The session the call belongs to."""
    turn_id: str
    """The turn the call belongs to."""
    call_id: str
    """The model's id for this tool call (the `toolCallId` in the conversation)."""
    tool_name: str
    """The tool's name as the model sees it (its path under `agent/tools/`)."""
    approved: bool = False
    """True when the call ran because a person approved it."""
    channel: ToolChannel = field(default=SILENT, repr=False, compare=False)
    """Where `report_progress`, `log` and `sample` go (set by whoever runs the call)."""

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Report how far the call has got: on MCP a progress notification (when the client asked for
        them), on eve's wire an `action.progress` event.

        Args:
            progress: How much is done; it should rise with every report.
            total: How much there is in all, if known.
            message: What is happening now, for a person.
        """
        await self.channel.progress(progress, total, message)

    async def log(self, level: LogLevel, message: JsonValue, *, logger: str | None = None) -> None:
        """Log one entry: on MCP a `notifications/message` (at or above the client's level), on eve's
        wire an `action.log` event.

        Args:
            level: `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert` or `emergency`.
            message: Text, or any JSON value.
            logger: The name of what logs (optional).

        Raises:
            ValueError: `level` is not one of those.
        """
        if level not in LOG_LEVELS:
            raise ValueError(f"log level must be one of {', '.join(LOG_LEVELS)}, not {level!r}")
        await self.channel.log(level, message, logger)

    async def sample(self, prompt: str, *, system_prompt: str | None = None, max_tokens: int = 1000) -> str:
        """Ask a model and return its text answer: the MCP client's (MCP sampling) when served by
        `eve-py mcp`, the agent's own model in an agent run.

        On the legacy era the client is asked mid-call. On the 2026 era the question ends this
        round and the tool runs again from the start with the answer: ask before any side
        effect, or in a resolver (several resolvers' questions go in one round).

        Args:
            prompt: The user message the model answers.
            system_prompt: A system prompt the client may use.
            max_tokens: The most tokens the answer may take.

        Raises:
            ToolError: Nobody offers sampling here (an MCP client that did not declare it, or a
                tool run outside both); uncaught, the call fails with this message, which says so.
            MCPError: `-32021`: the 2026-era client did not declare the sampling capability.
        """
        return await self.channel.sample(prompt, system_prompt=system_prompt, max_tokens=max_tokens)

    async def list_roots(self) -> list[Root]:
        """The roots (directories, files) the MCP client lets this server work in.

        On the 2026 era the question ends this round and the tool runs again with the answer;
        ask before any side effect, or in a resolver (several resolvers' questions go in one round).

        Raises:
            ToolError: The call does not come from an MCP client that offers roots (legacy era).
            MCPError: `-32021`: the 2026-era client did not declare the roots capability.
        """
        return await self.channel.list_roots()

    def offers(self, feature: ClientFeature) -> bool:
        """Whether the caller can be asked for `feature`: `"elicitation"` (a resolver's `Elicit`),
        `"sampling"` (`sample`) or `"roots"` (`list_roots`), as the MCP client declared it.

        Outside MCP only elicitation is offered (a person answers the parked question).
        """
        return self.channel.offers(feature)

    async def notify_resource_updated(self, uri: str) -> None:
        """Say that the resource at `uri` (one of the app's `agent/resources/`) now reads differently.

        Served by `eve-py mcp`, every client of this process subscribed to `uri` (`resources/subscribe`
        on the legacy era, a `subscriptions/listen` stream on the 2026 era) gets
        `notifications/resources/updated` and may read it again. Elsewhere nobody subscribes, and
        nothing is sent.

        Args:
            uri: The resource's URI exactly as clients read it (a template's filled in, e.g.
                `orders://ORD-7002`).
        """
        await self.channel.resource_updated(uri)


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalContext:
    """What an approval policy sees when it decides whether a call needs a person's approval."""

    session_id: str
    """The session the call belongs to."""
    call_id: str
    """The model's id for the tool call."""
    tool_name: str
    """The tool's name as the model sees it."""
    tool_input: JsonObject
    """The call's input, as sent by the model and validated against the tool's input schema."""
    remembered: bool = False
    """Whether a person approved this tool's `once()` prompt earlier in the session, with no
    later denial (what `once()` reads; eve 1.0 dropped 0.80.1's `approvedTools`)."""
