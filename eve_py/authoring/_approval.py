"""eve 1.0's approval policies: what a tool's `approval` says about each call before it runs.

A policy is `never()`, `always()`, `once()`, or a callable `(ApprovalContext) -> status` (sync or
async), as in eve 1.0 (`docs/tools/human-in-the-loop.md`, `eve/tools/approval`). A status is:

| Status | The call |
| --- | --- |
| `"user-approval"` or `True` | parks for a person's approval |
| `"not-applicable"`, `False` or `None` | runs, no one asked |
| `"approved"` | runs, approved by the policy |
| `"denied"` or `Denied(reason)` | is denied without a person; the model gets `reason` |
| `once()`'s status (`RememberedAsk`) | parks, and the answer is remembered for the tool |

`once()` remembers the latest answer to its own prompts per tool for the rest of the session
(across turns and context clears): an approval covers later calls to the tool whatever their
input, a later denial replaces it, and when one message answers several of its prompts a
denial wins. eve-py keeps that memory in the session record (durable: a restart or another
worker sees it); `ApprovalContext.remembered` is what a policy reads of it.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from eve_py._context import ApprovalContext

__all__ = (
    "ApprovalDecision",
    "ApprovalPolicy",
    "ApprovalStatus",
    "Denied",
    "RememberedAsk",
    "always",
    "asks_never",
    "decide_approval",
    "never",
    "once",
    "policy_name",
)


@dataclass(frozen=True)
class Denied:
    """A policy's denial: the call never runs, and the model's tool result says `reason`."""

    reason: str | None = None


@dataclass(frozen=True)
class RememberedAsk:
    """`once()`'s status when it asks: the call parks, and its answer is remembered for the tool.

    A policy wrapping `once()` returns this object unchanged to keep the memory (as in eve)."""


ApprovalStatus: TypeAlias = (
    bool | None | Literal["user-approval", "not-applicable", "approved", "denied"] | Denied | RememberedAsk
)
"""What a policy returns for one call (see the module's table)."""

ApprovalPolicy: TypeAlias = bool | Callable[[ApprovalContext], ApprovalStatus | Awaitable[ApprovalStatus]]
"""`True` (always ask), `False` (never ask), `never()`, `always()`, `once()`, or a callable deciding per call."""


@dataclass(frozen=True)
class ApprovalDecision:
    """A policy's status for one call, as the harness carries it out."""

    outcome: Literal["ask", "run", "deny"]
    remember: bool = False
    """An `ask` from `once()`: the answer is remembered for the tool."""
    reason: str | None = None
    """A `deny`'s reason for the model, if the policy gave one."""


_ASK = ApprovalDecision("ask")
_RUN = ApprovalDecision("run")


def _never(ctx: ApprovalContext) -> ApprovalStatus:
    return "not-applicable"


def _always(ctx: ApprovalContext) -> ApprovalStatus:
    return "user-approval"


def _once(ctx: ApprovalContext) -> ApprovalStatus:
    return "approved" if ctx.remembered else RememberedAsk()


def never() -> Callable[[ApprovalContext], ApprovalStatus]:
    """Never ask: every call runs (what a tool without a policy does)."""
    return _never


def always() -> Callable[[ApprovalContext], ApprovalStatus]:
    """Ask a person before every call."""
    return _always


def once() -> Callable[[ApprovalContext], ApprovalStatus]:
    """Ask once per tool and session: an approval covers the tool's later calls until a denial replaces it."""
    return _once


def asks_never(policy: object) -> bool:
    """Whether `policy` is known without a call never to ask (`False`, `never()`)."""
    return policy is False or policy is _never


def policy_name(policy: ApprovalPolicy) -> Literal["never", "always", "once", "dynamic"]:
    """What `policy` is, as `eve-py build`'s manifest and `GET /info` name it (`dynamic`: decided per call)."""
    if asks_never(policy):
        return "never"
    if policy is True or policy is _always:
        return "always"
    return "once" if policy is _once else "dynamic"


async def decide_approval(policy: ApprovalPolicy, ctx: ApprovalContext) -> ApprovalDecision:
    """Evaluate `policy` for one call.

    Raises:
        TypeError: The policy returned something that is not an `ApprovalStatus`.
        Exception: Whatever the policy raised (the harness fails the call with it).
    """
    if isinstance(policy, bool):
        return _ASK if policy else _RUN
    status: object = policy(ctx)  # what a policy returns is checked here, whatever it says it returns
    if inspect.isawaitable(status):
        status = await status
    if status is True or status == "user-approval":
        return _ASK
    if status is False or status is None or status in ("not-applicable", "approved"):
        return _RUN
    if status == "denied":
        return ApprovalDecision("deny")
    if isinstance(status, Denied):
        return ApprovalDecision("deny", reason=status.reason)
    if isinstance(status, RememberedAsk):
        return ApprovalDecision("ask", remember=True)
    if not isinstance(status, str):  # eve 0.80.1's `needsApproval` took any truthy value as "ask"
        return _ASK if status else _RUN
    raise TypeError(
        f"an approval policy returned {status!r}; return 'user-approval', 'not-applicable', 'approved', "
        "'denied', Denied(reason), a bool, or once()'s status"
    )
