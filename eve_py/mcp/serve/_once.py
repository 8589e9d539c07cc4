"""One-shot request state: a sealed 2026-era `requestState` answers at most once.

The SDK's `RequestStateBoundary` proves a state is one this server minted, unexpired and bound
to its tool and arguments, but not that it is fresh: a captured final round sent again would run
the tool again (a second refund). So each state carries a random nonce (`RoundState.n`), and the
round that uses it first records it in the session store (`SessionStore.use_once`), which every
worker on the store shares; any later round with that state is refused with the boundary's own
error (`-32602 Invalid or expired requestState`) before any tool code runs. A nonce's record
outlives its state's expiry (after which the boundary refuses the state anyway) by a margin for
clocks that differ between workers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import mcp_types as types
from mcp.server.request_state import RequestStateSecurity
from mcp.shared.exceptions import MCPError

from eve_py.sessions import SessionStore

__all__ = (
    "CLOCK_SKEW_S",
    "INVALID_STATE_MESSAGE",
    "STATE_KEY_SECRET",
    "Nonces",
    "invalid_state",
    "request_state_security",
)

logger = logging.getLogger("eve_py.mcp")

CLOCK_SKEW_S = 60.0
"""How far workers' clocks may differ (the SDK's boundary allows a state minted this far in the future)."""

INVALID_STATE_MESSAGE = "Invalid or expired requestState"
"""The SDK's frozen wire message for any refused `requestState` (the reason goes to the log only)."""

_KEY_PREFIX = "mcp-request-state:"


def invalid_state(method: str, reason: str) -> MCPError:
    """The SDK boundary's refusal (`-32602`, its message and data), its reason logged as the SDK logs it."""
    logger.warning("requestState rejected on %s: %s", method, reason)
    return MCPError(code=types.INVALID_PARAMS, message=INVALID_STATE_MESSAGE, data={"reason": "invalid_request_state"})


@dataclass(frozen=True, kw_only=True, slots=True)
class Nonces:
    """Where the nonces of used request states are recorded, and for how long.

    Args:
        store: The session store every worker serving this app shares (a `MemorySessionStore`
            for one process).
        ttl: The sealed state's lifetime in seconds (`RequestStateSecurity.ttl`).
        clock: Unix time in seconds.
    """

    store: SessionStore
    ttl: float
    clock: Callable[[], float] = field(default=time.time)

    async def spend(self, nonce: str, method: str = "tools/call") -> None:
        """Record `nonce` as used; refuse it if it was.

        Raises:
            MCPError: `-32602 Invalid or expired requestState`: the state was used before.
            StoreUnavailableError: The store cannot be reached (nothing ran).
        """
        now = self.clock()
        if not await self.store.use_once(_KEY_PREFIX + nonce, now=now, expires_at=now + self.ttl + CLOCK_SKEW_S):
            raise invalid_state(method, "replayed")


STATE_KEY_SECRET = "mcp-request-state"
"""The name of the store secret that `request_state_security` seals states with."""


async def request_state_security(store: SessionStore, *, ttl: float = 600.0) -> RequestStateSecurity:
    """A sealing policy whose key is kept in `store`: every worker on the store opens every worker's states.

    With `mcp_server(agent, request_state_security=..., store=store)` on each worker, a client's
    rounds may land on any of them, and a state still answers once.

    Args:
        ttl: How long a sealed state stays valid, in seconds.

    Raises:
        StoreUnavailableError: The store cannot be reached.
    """
    return RequestStateSecurity(keys=[await store.secret(STATE_KEY_SECRET)], ttl=ttl)
