"""Keys used once: the SQL behind `SessionStore.use_once` for the SQLite and PostgreSQL stores.

A key is recorded with the time its record lapses; recording it again before then fails, from
any process on the store. Each call first deletes the records that have lapsed (an index on
`expires_at` finds them), so the table holds only live keys: what makes a sealed MCP request
state answer once while it can still be verified.
"""

from __future__ import annotations

import sqlite3

__all__ = ("POSTGRES_USE_ONCE", "sqlite_use_once")

POSTGRES_USE_ONCE = (
    "WITH lapsed AS (DELETE FROM eve_once WHERE expires_at <= %(now)s) "
    "INSERT INTO eve_once (key, expires_at) VALUES (%(key)s, %(expires_at)s) "
    "ON CONFLICT (key) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE eve_once.expires_at <= %(now)s "
    "RETURNING 1"
)
"""One statement: a row comes back when the key was recorded now (new, or its record had lapsed).

The `DELETE` and the `INSERT` see the same snapshot, so a lapsed record of the same key is
overwritten by the `ON CONFLICT` branch rather than deleted under it. A concurrent recorder
of the same key waits for the first one's row lock and then finds it live: no row."""


def sqlite_use_once(db: sqlite3.Connection, key: str, now: float, expires_at: float) -> bool:
    """Record `key` until `expires_at` inside the caller's write transaction; whether it was new (or lapsed)."""
    db.execute("DELETE FROM once WHERE expires_at <= ?", (now,))
    db.execute("INSERT OR IGNORE INTO once (key, expires_at) VALUES (?, ?)", (key, expires_at))
    return bool(db.execute("SELECT changes()").fetchone()[0])
