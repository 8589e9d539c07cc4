"""Running a tool's resolvers for one call: memoized, questions batched, answers restored.

One pass walks the tool's resolved parameters in signature order. Each resolver runs at most
once per pass (memoized by identity); a resolver whose dependency is waiting for an answer does
not run, but every other dependency is still visited, so independent questions are asked
together and a question that depends on another's answer is asked in a later pass.

When a resolver returns `Elicit(message, Model)`, a recorded answer is used only if it was
given to the same question: same resolver key and same digest of the rendered message and
schema. Otherwise the question is returned for the call to park on. A resolver that asks the
MCP client through its context (`ctx.sample`, `ctx.list_roots` on the 2026 era) waits the same
way: its question is with the context's channel, and the other resolvers still run, so every
question of the pass goes to the client in one round.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import typing
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio.from_thread
import anyio.to_thread
from pydantic import BaseModel, ValidationError

from eve_py._context import ClientInputPending, ToolContext
from eve_py._json import JsonSchema, canonical_dumps
from eve_py.errors import ToolError
from eve_py.protocol.pending import RecordedOutcome
from eve_py.resolvers._markers import AcceptedElicitation, CancelledElicitation, DeclinedElicitation, Elicit
from eve_py.resolvers._plan import Dependency, ResolverNode

__all__ = ("Question", "Resolution", "question_digest", "resolve_parameters")

_T = TypeVar("_T")


class _Accepted:
    """An accepted outcome, kept light: most resolvers return plain values that are never wrapped."""

    __slots__ = ("data",)

    def __init__(self, data: Any) -> None:
        self.data = data


_Outcome = _Accepted | DeclinedElicitation | CancelledElicitation


@dataclass(frozen=True, kw_only=True, slots=True)
class Question:
    """A resolver's question, to be asked as an `elicitation` input request."""

    key: str
    """The resolver's stable key."""
    message: str
    schema: JsonSchema
    """The JSON Schema of the answer (from the `Elicit`'s model)."""
    digest: str
    """Identifies the exact question: a recorded answer is reused only for the same digest."""


@dataclass(frozen=True, slots=True)
class Resolution:
    """The outcome of one pass: every resolved parameter's value, or the questions to ask."""

    values: dict[str, Any]
    questions: list[Question]
    waiting: bool = False
    """A resolver asked the client through its context (the question is with the channel)."""


def question_digest(message: str, schema: JsonSchema) -> str:
    """First 16 bytes of SHA-256 over the canonical JSON of `{message, requestedSchema}`, base64url."""
    raw = hashlib.sha256(canonical_dumps({"message": message, "requestedSchema": schema}).encode()).digest()[:16]
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class _Pending:
    """A resolver waiting for an answer (its own question, or one below it)."""


_PENDING = _Pending()


class _AskedClient:
    """What a resolver returned when it raised `ClientInputPending` (its question is with the channel)."""


_ASKED_CLIENT = _AskedClient()

_Call = tuple[ResolverNode, dict[str, Any]]
"""A resolver the walk needs called, with its keyword arguments; the walk is sent its return value."""

_Walk = Generator[_Call, Any, _T]


class _Pass:
    """One pass's walk, written once as generators that yield each resolver call they need.

    The walk does no I/O itself: `_on_loop` and `_in_thread` drive it, so one walk serves a DAG
    of async resolvers (no thread at all) and one with sync resolvers (one worker-thread hop for
    the whole pass, async resolvers sent back to the loop).
    """

    def __init__(self, arguments: Mapping[str, Any], ctx: ToolContext, recorded: Mapping[str, RecordedOutcome]) -> None:
        self.arguments = arguments
        self.ctx = ctx
        self.recorded = recorded
        self.cache: dict[object, _Outcome] = {}
        self.questions: dict[str, Question] = {}
        self.waiting = False

    def outcome(self, node: ResolverNode) -> _Walk[_Outcome | _Pending]:
        if node.identity in self.cache:
            return self.cache[node.identity]
        if node.key in self.questions:
            return _PENDING
        kwargs: dict[str, Any] = {}
        waiting = False
        for param in node.params:
            if param.source == "context":
                kwargs[param.name] = self.ctx
            elif param.source == "argument":
                kwargs[param.name] = self.arguments[param.name]
            else:
                assert param.dependency is not None
                value = yield from self.consume(param.name, param.dependency)
                if value is _PENDING:
                    waiting = True
                else:
                    kwargs[param.name] = value
        if waiting:
            return _PENDING
        result = yield (node, kwargs)
        if result is _ASKED_CLIENT:
            self.waiting = True
            return _PENDING
        if isinstance(result, Elicit):
            restored = self._restore(node, result)
            if restored is None:
                return _PENDING
            outcome = restored
        else:
            outcome = _Accepted(result)
        self.cache[node.identity] = outcome
        return outcome

    def _restore(self, node: ResolverNode, marker: Elicit[Any]) -> _Outcome | None:
        schema = marker.schema.model_json_schema()
        digest = question_digest(marker.message, schema)
        entry = self.recorded.get(node.key)
        if entry is not None and entry.q == digest:
            if entry.action == "decline":
                return DeclinedElicitation()
            if entry.action == "cancel":
                return CancelledElicitation()
            try:
                data: BaseModel = marker.schema.model_validate(entry.data)
            except ValidationError as exc:
                # Asking again would show the same question under the same request id forever.
                problems = "; ".join(e["msg"] for e in exc.errors())
                raise ToolError(
                    f"Resolver {node.key!r} received an accepted elicitation whose content does not match the "
                    f"requested schema ({problems})"
                ) from None
            return _Accepted(data)
        self.questions[node.key] = Question(key=node.key, message=marker.message, schema=schema, digest=digest)
        return None

    def consume(self, consumer: str, dependency: Dependency) -> _Walk[Any]:
        outcome = yield from self.outcome(dependency.node)
        if isinstance(outcome, _Pending):
            return outcome
        if dependency.wants_union:
            if isinstance(outcome, _Accepted):
                return AcceptedElicitation[Any].model_construct(action="accept", data=outcome.data)
            return outcome
        if isinstance(outcome, _Accepted):
            return outcome.data
        raise ToolError(f"Resolver for parameter {consumer!r} could not resolve: elicitation was {outcome.action}")

    def walk(self, params: Sequence[tuple[str, Dependency]]) -> _Walk[dict[str, Any]]:
        values: dict[str, Any] = {}
        for name, dependency in params:
            value = yield from self.consume(name, dependency)
            if value is not _PENDING:
                values[name] = value
        return values


async def _on_loop(walk: _Walk[_T]) -> _T:
    """Drive a walk whose resolvers are all async: each is awaited on the event loop."""
    sent: Any = None
    while True:
        try:
            node, kwargs = walk.send(sent)
        except StopIteration as done:
            return typing.cast(_T, done.value)
        try:
            sent = await node.fn(**kwargs)
        except ClientInputPending:
            sent = _ASKED_CLIENT


def _in_thread(walk: _Walk[_T]) -> _T:
    """Drive a walk in a worker thread: sync resolvers run here, async ones on the event loop."""
    sent: Any = None
    while True:
        try:
            node, kwargs = walk.send(sent)
        except StopIteration as done:
            return typing.cast(_T, done.value)
        try:
            sent = anyio.from_thread.run(functools.partial(node.fn, **kwargs)) if node.is_async else node.fn(**kwargs)
        except ClientInputPending:
            sent = _ASKED_CLIENT


@functools.lru_cache(maxsize=1024)
def _has_sync_resolver(params: tuple[tuple[str, Dependency], ...]) -> bool:
    """Whether any resolver the parameters reach is a plain (sync) function."""
    seen: set[int] = set()
    stack = [dependency.node for _, dependency in params]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if not node.is_async:
            return True
        stack += [param.dependency.node for param in node.params if param.dependency is not None]
    return False


async def resolve_parameters(
    params: Sequence[tuple[str, Dependency]],
    *,
    arguments: Mapping[str, Any],
    ctx: ToolContext,
    recorded: Mapping[str, RecordedOutcome],
) -> Resolution:
    """Run one pass over a tool's resolved parameters, in signature order.

    Args:
        params: (parameter name, dependency) for each resolved tool parameter.
        arguments: The call's validated tool arguments (by name).
        ctx: The call's context.
        recorded: Answers recorded for this call, by resolver key.

    Raises:
        ToolError: A resolver raised it, or a decline/cancel reached a consumer that wants the
            plain value; the first such failure in walk order aborts the pass.
        Exception: Whatever a resolver raises.
    """
    state = _Pass(arguments, ctx, recorded)
    params = tuple(params)
    if _has_sync_resolver(params):
        # One hop for the whole pass, not one per sync resolver: a thread hop costs far more
        # than a typical resolver.
        values = await anyio.to_thread.run_sync(_in_thread, state.walk(params))
    else:
        values = await _on_loop(state.walk(params))
    return Resolution(values=values, questions=list(state.questions.values()), waiting=state.waiting)
