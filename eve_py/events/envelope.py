"""The event envelope: `meta` (`id`, `at`, `deliveryIds`) and how ids and timestamps are made.

Every event eve-py stores or streams is `{type, data, meta}`, as in eve 0.80.1. `meta.id` is
`evt_<ULID>` (sortable by creation time, unique without coordination), `meta.at` an ISO 8601
UTC timestamp with milliseconds, and `meta.deliveryIds` names the accepted messages that own
the turn the event belongs to (what `POST /eve/v1/session/{id}` returned as `deliveryId`).
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

from eve_py._wire import WireModel

__all__ = ("EventMeta", "new_id", "now_iso")

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_id(prefix: str) -> str:
    """A ULID with a prefix (`evt_01J...`): sortable by creation time, unique without coordination."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return f"{prefix}_{''.join(reversed(chars))}"


def now_iso() -> str:
    """The current UTC time, ISO 8601 with milliseconds (`2026-11-23T10:54:24.123Z`)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class EventMeta(WireModel):
    """Where and when an event was recorded, and which accepted messages own its turn."""

    id: str
    at: str
    delivery_ids: list[str] | None = None
