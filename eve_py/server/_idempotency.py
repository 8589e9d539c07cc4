"""Idempotency keys (eve 1.0's `idempotencyKey`): a repeated follow-up or answer gets the first receipt, runs nothing.

A client that cannot tell whether a `POST /session/{id}` was accepted (a timeout, a dropped
connection) sends it again with the same key. As eve 1.0 does it (`docs/channels/eve.mdx`,
`dist/src/channel/delivery-idempotency.js`), the delivery's id is derived from the key
(`delivery_id_for_key`, eve's own derivation), so the first request and every repeat name the
same delivery; a repeat on the same session runs nothing, even with another body; the same key
on another session is another delivery.

Where eve remembers a session's last 1,024 keys, eve-py asks the session's log, which keeps
every delivery it ran: a key is a repeat when its delivery id is in the log (a message's turn
names it in `meta.deliveryIds`, answers in `input.resolved`'s `deliveryId`), for as long as the
session lives. The log cannot see a request still under way, so each key is also claimed in
the session store (`SessionStore.use_once`) for `CLAIM_S` while its request runs: of two
workers that get the same key at once, exactly one runs it. A claim whose request was refused
(a wrong answer, a session not ready) is dropped at once (`SessionStore.forget_once`), so a
corrected retry runs; a claim whose worker died before writing anything lapses after `CLAIM_S`,
so the retry after it runs and the request is not lost.
"""

from __future__ import annotations

import enum
import hashlib
import logging
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import anyio

from eve_py.protocol import DeliveryIgnored, Event, InputApproved, InputResolved
from eve_py.sessions import SessionStore

__all__ = ("CLAIM_S", "IdempotencyKeys", "KeyUse", "delivered_in", "delivery_id_for_key")

_log = logging.getLogger("eve_py.server")

CLAIM_S = 120.0
"""How long a key stays claimed by a request that has not yet written its delivery, in seconds:
a retry sooner than this after a worker died mid-request is refused (`409`), a later one runs."""


class KeyUse(enum.Enum):
    """What an idempotency key stands for when a request with it arrives."""

    FIRST = "first"
    """No delivery of this key yet: the request runs (the key is claimed while it does)."""
    DELIVERED = "delivered"
    """The session's log holds the key's delivery: the request gets its receipt and runs nothing."""
    IN_FLIGHT = "in_flight"
    """Another request with this key is under way (or its worker died less than `CLAIM_S` ago)."""


def delivery_id_for_key(key: str) -> str:
    """The delivery id eve 1.0 gives the delivery an idempotency key names: a UUID-shaped hex
    string from the SHA-256 of `"eve:delivery:" + key` (eve's `deliveryIdForIdempotencyKey`)."""
    digest = bytearray(hashlib.sha256(f"eve:delivery:{key}".encode()).digest()[:16])
    digest[6] = digest[6] & 0x0F | 0x80
    digest[8] = digest[8] & 0x3F | 0x80
    hexed = digest.hex()
    return f"{hexed[:8]}-{hexed[8:12]}-{hexed[12:16]}-{hexed[16:20]}-{hexed[20:]}"


def delivered_in(events: Sequence[Event], delivery_id: str) -> Event | None:
    """The first event of `events` that delivery `delivery_id` wrote, or None: an event of a turn
    the delivery's message owns, the `input.resolved` of its answers, or the `delivery.ignored`
    of a stale answer."""
    for event in events:
        if isinstance(event, InputResolved | InputApproved | DeliveryIgnored) and event.data.delivery_id == delivery_id:
            return event
        if event.meta.delivery_ids and delivery_id in event.meta.delivery_ids:
            return event
    return None


class IdempotencyKeys:
    """The keys of the sessions on one store.

    Args:
        store: Where keys are claimed and the sessions' logs are read (shared by every worker on it).
        claim_s: How long a claim lasts, in seconds.
    """

    def __init__(self, store: SessionStore, *, claim_s: float = CLAIM_S) -> None:
        self._store = store
        self._claim_s = claim_s

    @staticmethod
    def _name(session_id: str, key: str) -> str:
        return f"idempotency:{session_id}:{hashlib.sha256(key.encode()).hexdigest()}"

    @asynccontextmanager
    async def use(self, session_id: str, key: str) -> AsyncIterator[tuple[KeyUse, Event | None]]:
        """Claim `key` for the session and say what it stands for, with the delivery's first event
        when it was delivered.

        A first use keeps its claim until `CLAIM_S` lapses (its delivery is in the log by then);
        an error raised in the block drops the claim again (the request was refused, or never
        started), and the error goes on.

        Raises:
            StoreUnavailableError: The store could not claim the key or read the log (nothing ran).
        """
        now = time.time()
        name = self._name(session_id, key)
        claimed = await self._store.use_once(name, now=now, expires_at=now + self._claim_s)
        try:
            # Read after claiming: a request that finished between a read and a claim is seen either way.
            event = delivered_in(await self._store.read_events(session_id), delivery_id_for_key(key))
        except BaseException:
            if claimed:
                await self._forget(name)
            raise
        if event is not None or not claimed:
            yield (KeyUse.DELIVERED, event) if event is not None else (KeyUse.IN_FLIGHT, None)
            return
        try:
            yield KeyUse.FIRST, None
        except BaseException:
            await self._forget(name)
            raise

    async def _forget(self, name: str) -> None:
        """Drop a claim whose request did not run; a store that fails now leaves it to lapse (the
        refusal being raised is the one the caller must see)."""
        with anyio.CancelScope(shield=True):
            try:
                await self._store.forget_once(name)
            except Exception:  # noqa: BLE001 - the claim lapses after `CLAIM_S` anyway
                _log.warning("could not drop an idempotency key's claim; it lapses in %g s", self._claim_s)
