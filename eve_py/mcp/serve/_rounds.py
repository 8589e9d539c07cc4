"""What one `tools/call` carries between rounds on the 2026 era (`input_required` results).

A round that needs answers returns an `InputRequiredResult` whose `requestState` holds the
answers recorded so far and the digest of every question just asked. The SDK's
`RequestStateBoundary` seals that plaintext on the way out (encrypted, expiring, bound to the
tool and its arguments) and verifies it on the way back in, so this module only ever sees text
it minted; each state carries a random nonce so that it answers once (`_once`). The next
round turns the client's `inputResponses` into eve-py's `RecordedOutcome`s, each pinned to the
digest of the question it answered: an answer to a question that has changed since it was
asked is dropped and the question is asked again, as in the SDK. An elicitation is recorded
as answered; a sampling or roots answer as its result's JSON (`_asking`).

An answer that is not JSON text (a lone UTF-16 surrogate, NaN, Infinity: the 2026-era HTTP
transport reads them with Python's `json`) is refused with `-32602` before any tool code uses it:
a tool result repeating it could not be sent, after the executor's side effect.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, ValidationError

from eve_py._json import json_problem
from eve_py.errors import ToolError
from eve_py.mcp.serve._asking import ROOTS_PREFIX, SAMPLE_PREFIX, ClientAsk
from eve_py.protocol.pending import RecordedOutcome

__all__ = (
    "RoundState",
    "answer_of",
    "decode_state",
    "encode_state",
    "outcome_of",
    "recorded_answers",
    "refuse_not_json",
)

_STATE_VERSION = 2


class RoundState(BaseModel):
    """The decoded `requestState`: answers recorded in earlier rounds and the questions just asked."""

    model_config = ConfigDict(frozen=True)

    v: int = _STATE_VERSION
    n: str = ""
    """The state's nonce: the round that uses it first records it, and no other round may (`_once`)."""
    outcomes: dict[str, RecordedOutcome] = {}
    """Recorded answers, by question key (a resolver's key, `eve:approval` or `eve:result`)."""
    asked: dict[str, str] = {}
    """The digest of each question asked in the last round, by key."""


_FRESH = RoundState()
"""No progress yet: the state of a first round (shared; a `RoundState` is never changed)."""


def decode_state(request_state: str | None) -> RoundState:
    """The state a client echoed back; none, malformed or of another version means no progress yet.

    The text passed the SDK's boundary (it is what this server sealed), so anything unreadable
    is drift between two versions of this server, not an attack: the call starts over.
    """
    if not request_state:
        return _FRESH
    try:
        state = RoundState.model_validate(json.loads(request_state))
    except (ValueError, ValidationError):
        return _FRESH
    return state if state.v == _STATE_VERSION else _FRESH


def encode_state(outcomes: Mapping[str, RecordedOutcome], asked: Sequence[ClientAsk]) -> str:
    """The plaintext `requestState` for the next round (the SDK seals it before it leaves).

    ASCII JSON, as the SDK's own state: the encoding cannot fail on any text (`decode_state`
    reads it with `json.loads`).
    """
    state = RoundState(n=secrets.token_urlsafe(16), outcomes=dict(outcomes), asked={q.key: q.digest for q in asked})
    return json.dumps(state.model_dump(mode="json"), separators=(",", ":"))


def refuse_not_json(what: str, value: object) -> None:
    """Refuse a client's `value` that is not JSON text, before any tool code sees it.

    Raises:
        MCPError: `-32602` (invalid params) naming `what` and the problem.
    """
    problem = json_problem(value)
    if problem is not None:
        raise MCPError(code=types.INVALID_PARAMS, message=f"{what} is not JSON text: {problem}")


def outcome_of(key: str, answer: types.ElicitResult, digest: str) -> RecordedOutcome:
    """An elicitation's answer as a recorded outcome pinned to the question's digest.

    Raises:
        ToolError: The client accepted without content (the SDK's message).
        MCPError: `-32602`: the content is not JSON text (a lone surrogate, NaN, Infinity).
    """
    if answer.action == "accept":
        if answer.content is None:
            raise ToolError(f"Resolver {key!r} received an accepted elicitation with no content")
        refuse_not_json(f"The answer to {key!r}", answer.content)
        return RecordedOutcome(action="accept", data=dict(answer.content), q=digest)
    return RecordedOutcome(action=answer.action, q=digest)


def _kind(key: str) -> type[types.Result]:
    if key.startswith(SAMPLE_PREFIX):
        return types.CreateMessageResult
    return types.ListRootsResult if key.startswith(ROOTS_PREFIX) else types.ElicitResult


def answer_of(key: str, response: types.InputResponse, digest: str) -> RecordedOutcome:
    """A client's response to the request asked under `key`, recorded and pinned to its digest.

    Raises:
        ToolError: The response is not of the kind asked, or an elicitation accepts without content.
        MCPError: `-32602`: its content is not JSON text.
    """
    kind = _kind(key)
    if kind is types.ElicitResult:
        if not isinstance(response, types.ElicitResult):
            raise ToolError(f"Resolver {key!r} received a non-elicitation response")
        return outcome_of(key, response, digest)
    wire = response.model_dump(mode="json", by_alias=True, exclude_none=True)
    try:
        kind.model_validate(wire)
    except ValidationError:
        raise ToolError(f"The request {key!r} received a response of the wrong kind") from None
    refuse_not_json(f"The answer to {key!r}", wire)
    return RecordedOutcome(action="accept", data=wire, q=digest)


def recorded_answers(state: RoundState, responses: types.InputResponses | None) -> dict[str, RecordedOutcome]:
    """Every answer this round can use: the recorded ones, then the client's new responses.

    A response counts only for a request asked in the last round (it is pinned to that
    request's digest); a recorded outcome wins over a response re-sent for the same key.

    Raises:
        ToolError: A response is not of the kind asked, or an elicitation accepts without content.
        MCPError: `-32602`: a response's content is not JSON text.
    """
    answers = dict(state.outcomes)
    for key, response in (responses or {}).items():
        digest = state.asked.get(key)
        if digest is None or key in answers:
            continue
        answers[key] = answer_of(key, response, digest)
    return answers
