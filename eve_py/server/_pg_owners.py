"""`PostgresOwners`: session ownership in the `eve_server_owners` table of a PostgreSQL store.

The table is part of the store's schema (`eve-py store migrate`), and the owners use the
store's own connection pool, so every server process on the database agrees on who owns what.
"""

from __future__ import annotations

import psycopg

from eve_py._lru import Recent
from eve_py.errors import SessionConflictError
from eve_py.protocol import now_iso
from eve_py.sessions.postgres import PostgresSessionStore

__all__ = ("PostgresOwners",)


class PostgresOwners:
    """Ownership in PostgreSQL; owners found are cached (ownership never changes).

    Args:
        store: The session store whose database (and pool) holds the owners.
        cache_size: How many owners to keep cached in memory.
    """

    def __init__(self, store: PostgresSessionStore, *, cache_size: int = 10_000) -> None:
        self._store = store
        self._cache = Recent[str, str](cache_size)

    async def claim(self, session_id: str, principal: str) -> None:
        """See `OwnerStore.claim`."""
        async with self._store.connection() as conn:
            try:
                await conn.execute(
                    "INSERT INTO eve_server_owners (session_id, principal, created_at) VALUES (%s, %s, %s)",
                    (session_id, principal, now_iso()),
                )
            except psycopg.errors.UniqueViolation:
                raise SessionConflictError(f"Session {session_id!r} already has an owner.") from None
        self._cache.put(session_id, principal)

    async def owner(self, session_id: str) -> str | None:
        """See `OwnerStore.owner`."""
        cached = self._cache.get(session_id)
        if cached is not None:
            return cached
        async with self._store.connection() as conn:
            cursor = await conn.execute("SELECT principal FROM eve_server_owners WHERE session_id = %s", (session_id,))
            row = await cursor.fetchone()
        if row is None:
            return None
        self._cache.put(session_id, str(row[0]))
        return str(row[0])

    async def aclose(self) -> None:
        """Nothing to release: the pool is the store's."""
