"""The event envelope: `meta` (`id`, `at`, `deliveryIds`) and how ids and timestamps are made.

Every event eve-py stores or streams is `{type, data, meta}`, as in eve 0.80.1. `meta.id` is
`evt_<ULID>` (sortable by creation time, unique without coordination), `meta.at` an ISO 8601
UTC timestamp with milliseconds, and `meta.deliveryIds` names the accepted messages that own
the turn the event belongs to (what `POST /eve/v1/session/{id}` returned as `deliveryId`).
"""

from __future__ import annotations

import base64
import os
import time
from datetime import UTC, datetime

from eve_py._wire import WireModel

__all__ = ("EventMeta", "new_id", "now_iso")

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_TO_CROCKFORD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", _CROCKFORD)


def new_id(prefix: str) -> str:
    """A ULID with a prefix (`evt_01J...`): sortable by creation time, unique without coordination."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    # Base32 in C: the 128 bits sit in a 130-bit field (26 groups of 5, the first holding 3 bits),
    # padded with 6 zero bits to 17 bytes; the first 26 letters are the ULID, in RFC 4648's
    # alphabet, then mapped to Crockford's.
    encoded = base64.b32encode((value << 6).to_bytes(17, "big"))[:26].decode("ascii")
    return f"{prefix}_{encoded.translate(_TO_CROCKFORD)}"


def now_iso() -> str:
    """The current UTC time, ISO 8601 with milliseconds (`2026-11-23T10:54:24.123Z`)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class EventMeta(WireModel):
    """Where and when an event was recorded, and which accepted messages own its turn."""

    id: str
    at: str
    delivery_ids: list[str] | None = None
