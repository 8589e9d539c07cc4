"""Driving a request that asks the client (`tools/call`, `prompts/get`) on either protocol era.

An *attempt* runs the request as far as the answers recorded so far allow and ends with its
result or the questions still open (a resolver's `Elicit`s; a tool's sampling and roots
requests wait in its `RoundChannel`). The era decides how the questions travel, as the SDK's
resolvers do:

- 2026 era (>= 2026-07-28): `modern_round` returns an `InputRequiredResult`; the client answers
  and sends the request again with `inputResponses` and the `requestState` this server sealed,
  and the next attempt goes further (a question that depends on an answer comes in a later round);
- legacy era: `legacy_call` pushes each question as `elicitation/create` mid-request, and
  attempts again at once with the answer recorded.

An answer counts only for the exact question this server asked in the previous round (its
digest is in the sealed `requestState`, which answers once: `_once`), as the MCP SDK's
resolvers do: `inputResponses` without a state, or for a question the state does not list, are
ignored and the question is asked again (`input_required`). So a client cannot answer a
question it was never shown, nor skip an approval's round.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp_types.version import is_version_at_least

from eve_py._context import SILENT, ToolChannel
from eve_py.errors import ToolError
from eve_py.mcp.serve._asking import ClientAsk, RoundChannel, ask_of, require_capability
from eve_py.mcp.serve._notify import ClientChannel
from eve_py.mcp.serve._once import Nonces
from eve_py.mcp.serve._rounds import decode_state, encode_state, outcome_of, recorded_answers
from eve_py.mcp.serve._updates import ResourceUpdates
from eve_py.protocol.pending import RecordedOutcome
from eve_py.resolvers import Question

__all__ = (
    "INPUT_REQUIRED_VERSION",
    "LEGACY_MAX_ATTEMPTS",
    "CallSite",
    "call_site",
    "legacy_call",
    "modern_round",
    "uses_input_required",
)

INPUT_REQUIRED_VERSION = "2026-07-28"
"""The first protocol revision whose requests carry questions in `InputRequiredResult`."""

LEGACY_MAX_ATTEMPTS = 32
"""How many times a legacy-era request may ask and attempt again before it gives up (a resolver
whose question changes on every attempt would otherwise ask forever)."""

R = TypeVar("R")


@dataclass(frozen=True, kw_only=True, slots=True)
class CallSite:
    """Where a request comes from: what a tool's `ToolContext` and the capability checks need."""

    session_id: str
    call_id: str
    capabilities: types.ClientCapabilities | None
    channel: ToolChannel = SILENT
    """Where the tool's progress, logs and (legacy era) sampling and roots go: the calling client."""


def call_site(ctx: ServerRequestContext[Any, Any], updates: ResourceUpdates | None = None) -> CallSite:
    """Where the request of `ctx` comes from; its tool context's channel is the calling client (and `updates`)."""
    session_id = getattr(ctx.session, "session_id", None)
    return CallSite(
        session_id=str(session_id or "mcp"),
        call_id=f"mcp-{ctx.request_id}",
        capabilities=ctx.session.client_capabilities,
        channel=ClientChannel(ctx, updates),
    )


def uses_input_required(protocol_version: str | None) -> bool:
    """True when this connection's requests ask through `InputRequiredResult` (>= 2026-07-28)."""
    return protocol_version is not None and is_version_at_least(protocol_version, INPUT_REQUIRED_VERSION)


def _asks(site: CallSite, questions: list[Question], channel: RoundChannel) -> list[ClientAsk]:
    asks = [ask_of(question) for question in questions]
    for ask in asks:
        require_capability(site.capabilities, ask)
    return asks + list(channel.pending.values())


async def modern_round(
    attempt: Callable[[Mapping[str, RecordedOutcome], ToolChannel], Awaitable[R | list[Question]]],
    *,
    request_state: str | None,
    input_responses: types.InputResponses | None,
    site: CallSite,
    nonces: Nonces,
) -> R | types.InputRequiredResult:
    """One 2026-era round: the attempt's result, or an `InputRequiredResult` with the state to come back with.

    `attempt(recorded, channel)` runs the request with these answers, its tool context on
    `channel`: its result, or the resolvers' open questions.

    `request_state` is the plaintext the SDK's `RequestStateBoundary` already verified; its
    nonce is spent in `nonces` once the round's answers are read, before any tool code runs.

    Raises:
        ToolError: A response is not of the kind asked (nothing ran, the state stays unused).
        MCPError: An answer is not JSON text (`-32602`), the state was used before (`-32602
            Invalid or expired requestState`), the client lacks a capability a question needs
            (`-32021`), or the attempt raised one.
    """
    state = decode_state(request_state)
    recorded = recorded_answers(state, input_responses)
    if state.n:
        await nonces.spend(state.n)
    channel = RoundChannel(client=site.channel, recorded=recorded, capabilities=site.capabilities)
    outcome = await attempt(recorded, channel)
    if not isinstance(outcome, list):
        return outcome
    asks = _asks(site, outcome, channel)
    return types.InputRequiredResult(
        input_requests={ask.key: ask.request for ask in asks}, request_state=encode_state(recorded, asks)
    )


async def legacy_call(
    attempt: Callable[[Mapping[str, RecordedOutcome], ToolChannel], Awaitable[R | list[Question]]],
    *,
    site: CallSite,
    session: ServerSession,
    request_id: types.RequestId | None,
) -> R:
    """A legacy-era request: each open question is pushed as `elicitation/create`, then the request goes on.

    Args:
        session: The connection's `ServerSession` (its `elicit_form` sends the push).
        request_id: The request the pushes relate to.

    Raises:
        ToolError: The client accepted without content, or the questions never ended.
        MCPError: An answer is not JSON text (`-32602`), the client lacks form elicitation, the
            connection has no back-channel, or the attempt raised one.
    """
    recorded: dict[str, RecordedOutcome] = {}
    for _ in range(LEGACY_MAX_ATTEMPTS):
        outcome = await attempt(recorded, site.channel)
        if not isinstance(outcome, list):
            return outcome
        for question in outcome:
            if session.can_send_request:
                require_capability(site.capabilities, ask_of(question))
            answer: types.ElicitResult = await session.elicit_form(
                question.message, question.schema, related_request_id=request_id
            )
            recorded[question.key] = outcome_of(question.key, answer, question.digest)
    raise ToolError(f"the call asked questions {LEGACY_MAX_ATTEMPTS} times without finishing")
