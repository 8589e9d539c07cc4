"""What one round asks the MCP client: a resolver's elicitation, a tool's sampling and roots requests.

On the legacy era a tool's `ctx.sample(...)` and `ctx.list_roots()` are requests pushed to the
client mid-call (`_notify.ClientChannel`). A 2026-era client has no back-channel: it is asked in
rounds. `RoundChannel` answers those calls from the answers the round carries; a request without
one is collected (after the SDK resolvers' capability check) and `ClientInputPending` ends the
tool's run. The round then returns every collected request, with the resolvers' elicitations,
in one `InputRequiredResult`.

A sampling or roots request's key is its kind and the digest of its parameters
(`eve:sample:<digest>`, `eve:roots:<digest>`): the answer follows the question wherever the
tool asks it, in whatever order; two identical requests in one call share one answer.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field

import mcp_types as types
from mcp.shared.exceptions import MCPError

from eve_py._context import ClientFeature, ClientInputPending, LogLevel, Root, ToolChannel
from eve_py._json import JsonValue, canonical_dumps
from eve_py.errors import ToolError
from eve_py.protocol.pending import RecordedOutcome
from eve_py.resolvers import Question

__all__ = (
    "ROOTS_PREFIX",
    "SAMPLE_PREFIX",
    "ClientAsk",
    "RoundChannel",
    "ask_of",
    "offered",
    "require_capability",
    "roots_of",
    "sampled_text",
    "sampling_request",
)

SAMPLE_PREFIX = "eve:sample:"
ROOTS_PREFIX = "eve:roots:"

_LIST_ROOTS = types.ListRootsRequest()


@dataclass(frozen=True, kw_only=True, slots=True)
class ClientAsk:
    """One input request of a round, under its key, with the digest its answer is pinned to."""

    key: str
    request: types.InputRequest
    digest: str


def ask_of(question: Question) -> ClientAsk:
    """A resolver's question as the form elicitation the client is shown (the same shape on both eras)."""
    params = types.ElicitRequestFormParams(message=question.message, requested_schema=question.schema)
    return ClientAsk(key=question.key, request=types.ElicitRequest(params=params), digest=question.digest)


def _digest(request: types.InputRequest) -> str:
    params = request.params.model_dump(mode="json", by_alias=True, exclude_none=True) if request.params else None
    return (
        base64.urlsafe_b64encode(hashlib.sha256(canonical_dumps(params).encode("utf-8", "surrogatepass")).digest()[:16])
        .rstrip(b"=")
        .decode()
    )


def sampling_request(prompt: str, *, system_prompt: str | None, max_tokens: int) -> types.CreateMessageRequest:
    """`ctx.sample(...)` as the request the client's model answers."""
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
    params = types.CreateMessageRequestParams(messages=[message], max_tokens=max_tokens, system_prompt=system_prompt)
    return types.CreateMessageRequest(params=params)


def sampled_text(result: types.CreateMessageResult) -> str:
    """The text of a sampling answer.

    Raises:
        ToolError: The model answered with something other than text.
    """
    content = result.content
    if not isinstance(content, types.TextContent):
        raise ToolError(f"the client's model answered with {content.type} content, not text")
    return content.text


def roots_of(result: types.ListRootsResult) -> list[Root]:
    """A `roots/list` answer as the tool sees it."""
    return [Root(uri=str(root.uri), name=root.name) for root in result.roots]


def offered(capabilities: types.ClientCapabilities | None, feature: ClientFeature) -> bool:
    """Whether the client declared `feature` (a bare `elicitation: {}` counts as form support, url-only does not)."""
    if capabilities is None:
        return False
    if feature == "elicitation":
        elicitation = capabilities.elicitation
        return elicitation is not None and (elicitation.form is not None or elicitation.url is None)
    if feature == "sampling":
        return capabilities.sampling is not None
    return capabilities.roots is not None


_REQUIRED: dict[ClientFeature, tuple[str, types.ClientCapabilities]] = {
    "elicitation": (
        "form elicitation",
        types.ClientCapabilities(elicitation=types.ElicitationCapability(form=types.FormElicitationCapability())),
    ),
    "sampling": ("sampling", types.ClientCapabilities(sampling=types.SamplingCapability())),
    "roots": ("roots", types.ClientCapabilities(roots=types.RootsCapability())),
}


def _feature(request: types.InputRequest) -> ClientFeature:
    if isinstance(request, types.ElicitRequest):
        return "elicitation"
    return "sampling" if isinstance(request, types.CreateMessageRequest) else "roots"


def require_capability(capabilities: types.ClientCapabilities | None, ask: ClientAsk) -> None:
    """The SDK resolvers' check: a request needs the capability the client must have declared.

    Raises:
        MCPError: `MISSING_REQUIRED_CLIENT_CAPABILITY` (`-32021`, HTTP 400), its data naming
            what the client must declare.
    """
    feature = _feature(ask.request)
    if offered(capabilities, feature):
        return
    name, required = _REQUIRED[feature]
    data = types.MissingRequiredClientCapabilityErrorData(required_capabilities=required)
    raise MCPError(
        code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=f"Client did not declare the {name} capability required by {ask.key!r}",
        data=data.model_dump(by_alias=True, mode="json", exclude_none=True),
    )


@dataclass(kw_only=True, slots=True)
class RoundChannel:
    """The `ToolChannel` of one 2026-era round: progress and logs go to `client`, asks wait a round.

    Args:
        client: The calling client's channel (progress and log notifications).
        recorded: The answers this round carries, by key.
        capabilities: What the client declared for this request.
    """

    client: ToolChannel
    recorded: Mapping[str, RecordedOutcome]
    capabilities: types.ClientCapabilities | None
    pending: dict[str, ClientAsk] = field(default_factory=dict)
    """The requests asked in this round that have no answer yet, by key."""

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        await self.client.progress(progress, total, message)

    async def log(self, level: LogLevel, data: JsonValue, logger: str | None) -> None:
        await self.client.log(level, data, logger)

    def offers(self, feature: ClientFeature) -> bool:
        return offered(self.capabilities, feature)

    async def resource_updated(self, uri: str) -> None:
        await self.client.resource_updated(uri)

    def _answer(self, prefix: str, request: types.InputRequest) -> JsonValue:
        digest = _digest(request)
        ask = ClientAsk(key=prefix + digest, request=request, digest=digest)
        entry = self.recorded.get(ask.key)
        if entry is not None and entry.q == digest and entry.action == "accept":
            return entry.data
        require_capability(self.capabilities, ask)
        self.pending[ask.key] = ask
        raise ClientInputPending(ask.key)

    async def sample(self, prompt: str, *, system_prompt: str | None, max_tokens: int) -> str:
        """See `ToolChannel.sample`: the recorded answer, or `ClientInputPending` (the request waits a round).

        Raises:
            MCPError: `-32021`: the client did not declare sampling.
            ToolError: The model answered with something other than text.
        """
        request = sampling_request(prompt, system_prompt=system_prompt, max_tokens=max_tokens)
        return sampled_text(types.CreateMessageResult.model_validate(self._answer(SAMPLE_PREFIX, request)))

    async def list_roots(self) -> list[Root]:
        """See `ToolChannel.list_roots`: the recorded answer, or `ClientInputPending`.

        Raises:
            MCPError: `-32021`: the client did not declare roots.
        """
        return roots_of(types.ListRootsResult.model_validate(self._answer(ROOTS_PREFIX, _LIST_ROOTS)))
