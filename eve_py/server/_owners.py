"""Who owns which session: the principal (a token's hash) that created it, kept durably.

A session belongs to the principal that created it; requests from any other principal are
answered as if the session did not exist. Ownership is stored beside the sessions, never only
in process memory, so a restarted server still knows it:

- `SQLiteOwners`: a table `eve_server_owners` in a SQLite file (by default the session
  store's own file, written through the store's own writer: a claim shares the transaction and
  the sync of the session's first write, and never waits on the store's lock from outside).
- `PostgresOwners` (`eve_py.server._pg_owners`): a table of a PostgreSQL store's database.
- `MemoryOwners`: a dict, for servers on a `MemorySessionStore` (which is in memory anyway).
"""

from __future__ import annotations

import sqlite3
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

import anyio.to_thread

from eve_py._lru import Recent
from eve_py.errors import SessionConflictError, UsageError
from eve_py.protocol import now_iso
from eve_py.sessions import MemorySessionStore, SessionStore, SQLiteSessionStore

__all__ = ("MemoryOwners", "OwnerStore", "SQLiteOwners", "owners_for")

_T = TypeVar("_T")


@runtime_checkable
class OwnerStore(Protocol):
    """Durable session ownership. Implementations: `SQLiteOwners`, `MemoryOwners`."""

    async def claim(self, session_id: str, principal: str) -> None:
        """Record `principal` as the owner of a new session id.

        Raises:
            SessionConflictError: The id already has an owner.
        """
        ...

    async def owner(self, session_id: str) -> str | None:
        """The session's owner, or None when nobody claimed it."""
        ...

    async def aclose(self) -> None:
        """Release resources."""
        ...


class MemoryOwners:
    """Ownership in a dict: lost with the process, like the `MemorySessionStore` it goes with."""

    def __init__(self) -> None:
        self._owners: dict[str, str] = {}

    async def claim(self, session_id: str, principal: str) -> None:
        """See `OwnerStore.claim`."""
        if session_id in self._owners:
            raise SessionConflictError(f"Session {session_id!r} already has an owner.")
        self._owners[session_id] = principal

    async def owner(self, session_id: str) -> str | None:
        """See `OwnerStore.owner`."""
        return self._owners.get(session_id)

    async def aclose(self) -> None:
        """Nothing to release."""


_SCHEMA = """
CREATE TABLE IF NOT EXISTS eve_server_owners (
    session_id TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""


class SQLiteOwners:
    """Ownership in a SQLite table; owners found are cached (ownership never changes).

    Args:
        path: The database file (may be the session store's file); created if missing.
        timeout_s: How long a write waits for another connection's lock, in seconds.
        cache_size: How many owners to keep cached in memory.
        store: The session store on `path`, if any: claims are queued to its writer (a claim is
            then synced with the next durable write, such as the new session's) and reads use
            its connection on the event loop, instead of a connection of this table's own that
            would contend with the store for the file's lock.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        timeout_s: float = 30.0,
        cache_size: int = 10_000,
        store: SQLiteSessionStore | None = None,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=timeout_s, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._cache = Recent[str, str](cache_size)
        self._store = store if store is not None and store.path == self.path else None

    async def _run(self, fn: Callable[[sqlite3.Connection], _T], *, write: bool = False) -> _T:
        store = self._store
        if store is not None:
            return await store.on_file(fn, write=write)

        def locked() -> _T:
            with self._lock:
                return fn(self._db)

        return await anyio.to_thread.run_sync(locked)

    async def claim(self, session_id: str, principal: str) -> None:
        """See `OwnerStore.claim`."""

        def write(db: sqlite3.Connection) -> None:
            try:
                db.execute(
                    "INSERT INTO eve_server_owners (session_id, principal, created_at) VALUES (?, ?, ?)",
                    (session_id, principal, now_iso()),
                )
            except sqlite3.IntegrityError:
                raise SessionConflictError(f"Session {session_id!r} already has an owner.") from None

        await self._run(write, write=True)
        self._cache.put(session_id, principal)

    async def owner(self, session_id: str) -> str | None:
        """See `OwnerStore.owner`."""
        cached = self._cache.get(session_id)
        if cached is not None:
            return cached

        def read(db: sqlite3.Connection) -> str | None:
            row = db.execute("SELECT principal FROM eve_server_owners WHERE session_id = ?", (session_id,)).fetchone()
            return None if row is None else str(row[0])

        found = await self._run(read)
        if found is not None:
            self._cache.put(session_id, found)
        return found

    async def aclose(self) -> None:
        """Close this table's own connection (a store it writes through is closed by its owner)."""

        def close() -> None:
            with self._lock:
                self._db.close()

        await anyio.to_thread.run_sync(close)


def owners_for(store: SessionStore) -> OwnerStore:
    """The default owner store for a session store: its SQLite file or PostgreSQL database, or memory.

    Raises:
        UsageError: The store is of another kind; pass `owners=` to `create_app` yourself.
    """
    if isinstance(store, SQLiteSessionStore):
        return SQLiteOwners(store.path, store=store)
    if isinstance(store, MemorySessionStore):
        return MemoryOwners()
    if "eve_py.sessions.postgres" in sys.modules:  # a PostgreSQL store exists only once its module is loaded
        from eve_py.server._pg_owners import PostgresOwners
        from eve_py.sessions.postgres import PostgresSessionStore

        if isinstance(store, PostgresSessionStore):
            return PostgresOwners(store)
    raise UsageError(
        f"create_app() cannot keep session owners beside a {type(store).__name__}; pass owners= "
        "(an OwnerStore such as SQLiteOwners(path)) so ownership survives a restart"
    )
