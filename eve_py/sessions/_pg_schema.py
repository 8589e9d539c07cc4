"""The eve-py schema of a PostgreSQL database: its migrations, its version, and `migrate`.

The schema is created and upgraded only by `migrate` (`eve-py store migrate URL`), never by
opening a store; `check_version` refuses a database without it or with another version of it.
"""

from __future__ import annotations

from typing import Any

import psycopg

from eve_py.errors import StoreSchemaError
from eve_py.sessions._pg_connect import connect, redact

__all__ = ("POSTGRES_SCHEMA_VERSION", "check_version", "migrate", "schema_version")

_MIGRATIONS: tuple[str, ...] = (
    # 1: the append-only layout (record schema 3) and the server's session owners.
    """
    CREATE TABLE eve_sessions (
        key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text NOT NULL UNIQUE,
        version bigint NOT NULL,
        status text NOT NULL,
        updated_at text NOT NULL,
        record text NOT NULL
    );
    CREATE TABLE eve_messages (
        session bigint NOT NULL REFERENCES eve_sessions (key),
        idx bigint NOT NULL,
        message text NOT NULL,
        PRIMARY KEY (session, idx)
    );
    CREATE TABLE eve_events (
        session bigint NOT NULL REFERENCES eve_sessions (key),
        idx bigint NOT NULL,
        event text NOT NULL,
        PRIMARY KEY (session, idx)
    );
    CREATE TABLE eve_server_owners (
        session_id text PRIMARY KEY,
        principal text NOT NULL,
        created_at text NOT NULL
    );
    """,
    # 2: each waiting session's first input deadline (indexed, for the expiry sweep); the store's secrets.
    """
    ALTER TABLE eve_sessions ADD COLUMN input_deadline double precision;
    CREATE INDEX eve_sessions_input_deadline ON eve_sessions (input_deadline) WHERE input_deadline IS NOT NULL;
    CREATE TABLE eve_secrets (
        name text PRIMARY KEY,
        value bytea NOT NULL
    );
    """,
    # 3: keys used once (`use_once`: a sealed MCP request state answers once), until they lapse.
    """
    CREATE TABLE eve_once (
        key text PRIMARY KEY,
        expires_at double precision NOT NULL
    );
    CREATE INDEX eve_once_expires_at ON eve_once (expires_at);
    """,
    # 4: no foreign keys from the logs to their session. Every log row is inserted by the very
    # statement that updated or inserted its session row and took the key from it, and sessions
    # are never deleted, so the check could never fail; it cost each write a trigger per row and
    # a share lock on the session's row (a tenth of a cycle's time on a local server).
    """
    ALTER TABLE eve_events DROP CONSTRAINT IF EXISTS eve_events_session_fkey;
    ALTER TABLE eve_messages DROP CONSTRAINT IF EXISTS eve_messages_session_fkey;
    """,
)
POSTGRES_SCHEMA_VERSION = len(_MIGRATIONS)
"""The schema version this eve-py reads and writes (`eve_schema.version`)."""
_MIGRATE_LOCK = 0x657665  # pg_advisory_xact_lock key: concurrent migrations run one after the other


async def schema_version(conn: psycopg.AsyncConnection[Any]) -> int | None:
    """The database's eve-py schema version, or None when it has none."""
    cursor = await conn.execute("SELECT to_regclass('eve_schema') IS NOT NULL")
    found = await cursor.fetchone()
    if found is None or not found[0]:
        return None
    cursor = await conn.execute("SELECT version FROM eve_schema")
    row = await cursor.fetchone()
    return None if row is None else int(row[0])


def check_version(version: int | None, url: str) -> None:
    """Refuse a database whose eve-py schema is missing or of another version than this eve-py's.

    Raises:
        StoreSchemaError: Saying what to run (`eve-py store migrate`, or the newer eve-py).
    """
    where = redact(url)
    if version is None:
        raise StoreSchemaError(
            f"{where} has no eve-py schema; create it first with: eve-py store migrate {where!r} "
            "(opening a store never changes a database's schema)."
        )
    if version < POSTGRES_SCHEMA_VERSION:
        raise StoreSchemaError(
            f"{where} holds eve-py schema {version}; this eve-py reads schema {POSTGRES_SCHEMA_VERSION}. "
            f"Upgrade it with: eve-py store migrate {where!r}"
        )
    if version > POSTGRES_SCHEMA_VERSION:
        raise StoreSchemaError(
            f"{where} holds eve-py schema {version}, written by a newer eve-py; this one reads schema "
            f"{POSTGRES_SCHEMA_VERSION}. Run the newer eve-py."
        )


async def migrate(url: str) -> tuple[int | None, int]:
    """Create or upgrade the eve-py schema of the database at `url`, in one transaction.

    Concurrent calls run one after the other (an advisory lock); running it on an up-to-date
    database changes nothing.

    Returns:
        The version before (None: no schema) and after.

    Raises:
        UsageError: The database cannot be reached within a few seconds (one line, no password).
        StoreSchemaError: The database holds a newer schema than this eve-py knows.
    """
    async with await connect(url) as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATE_LOCK,))
        before = await schema_version(conn)
        if before is not None and before > POSTGRES_SCHEMA_VERSION:
            check_version(before, url)
        if before is None:
            await conn.execute("CREATE TABLE eve_schema (version integer NOT NULL)")
            await conn.execute("INSERT INTO eve_schema VALUES (0)")
        for script in _MIGRATIONS[before or 0 :]:
            await conn.execute(script.encode())
        await conn.execute("UPDATE eve_schema SET version = %s", (POSTGRES_SCHEMA_VERSION,))
    return before, POSTGRES_SCHEMA_VERSION
