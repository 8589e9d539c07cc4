"""`PostgresSessionStore`: sessions, their conversations and event logs in PostgreSQL (psycopg 3, async).

The same layout as the SQLite store: `eve_sessions` (the small mutable record of each session,
keyed by a `bigint` identity as well as its text id), `eve_messages` and `eve_events`
(append-only logs keyed by that key and an index). Every write is one SQL statement, so one
transaction and one round trip: an `UPDATE ... WHERE id = $id AND version = $base` (the
compare-and-set) whose returned key feeds the `INSERT`s of the write's messages and events,
then `pg_notify('eve_events', ...)`. PostgreSQL delivers that notice only if the write commits,
so other processes learn of new events as soon as they are readable (see `notices`).

Connections come from a `psycopg_pool.AsyncConnectionPool` in autocommit mode. The schema is
created and upgraded only by `migrate` (`eve-py store migrate URL`), never by opening a store:
a database without it, or with another version of it, is refused with `StoreSchemaError`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing, asynccontextmanager
from typing import Any

import anyio
import psycopg
from psycopg import sql
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from pydantic import TypeAdapter

from eve_py.errors import SessionConflictError, SessionNotFoundError, StoreSchemaError, UsageError
from eve_py.protocol import Event, dump_event, load_event
from eve_py.protocol.messages import Message
from eve_py.sessions._feed import CANCEL_CHANNEL, EVENTS_CHANNEL, Notice, parse_notice
from eve_py.sessions._record import SessionRecord

__all__ = ("POSTGRES_SCHEMA_VERSION", "PostgresSessionStore", "migrate", "schema_version")

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
)
POSTGRES_SCHEMA_VERSION = len(_MIGRATIONS)
"""The schema version this eve-py reads and writes (`eve_schema.version`)."""
_MIGRATE_LOCK = 0x657665  # pg_advisory_xact_lock key: concurrent migrations run one after the other
_MAX_INDEX = 2**62

_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
_MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)

# The events and messages of a write go in as arrays: one statement, whatever their number.
_APPEND = """
    {table}_rows AS (
        INSERT INTO eve_{table} (session, idx, {column})
        SELECT w.key, %({table}_first)s + t.n - 1, t.v
        FROM written w, unnest(%({table})s::text[]) WITH ORDINALITY AS t (v, n)
    )"""
_NOTIFY = f"CASE WHEN %(notify)s <> '' THEN pg_notify('{EVENTS_CHANNEL}', %(notify)s) END"
_CREATE = f"""
WITH written AS (
    INSERT INTO eve_sessions (id, version, status, updated_at, record)
    VALUES (%(id)s, %(version)s, %(status)s, %(updated_at)s, %(record)s)
    ON CONFLICT (id) DO NOTHING RETURNING key
), {_APPEND.format(table="events", column="event").strip()}
SELECT key, {_NOTIFY} FROM written
"""
_COMMIT = f"""
WITH written AS (
    UPDATE eve_sessions SET version = %(version)s, status = %(status)s, updated_at = %(updated_at)s,
        record = %(record)s
    WHERE id = %(id)s AND version = %(base)s RETURNING key
), {_APPEND.format(table="events", column="event").strip()},
{_APPEND.format(table="messages", column="message").strip()}
SELECT key, {_NOTIFY} FROM written
"""
_READ = """
SELECT l.{column} FROM eve_sessions s
LEFT JOIN eve_{table} l ON l.session = s.key AND l.idx >= %s AND l.idx < %s
WHERE s.id = %s ORDER BY l.idx
"""


class PostgresSessionStore:
    """A `SessionStore` on a PostgreSQL database (open it with `await PostgresSessionStore.open(url)`).

    Args:
        url: A libpq connection string or URL (`postgresql://user@host:5432/db`).
        min_size: Connections the pool keeps open.
        max_size: Most connections the pool opens (each is one server process on PostgreSQL).
    """

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8) -> None:
        self.url = url
        self._pool = AsyncConnectionPool(
            url, min_size=min_size, max_size=max_size, open=False, kwargs={"autocommit": True}
        )
        self._opened = False

    @classmethod
    async def open(cls, url: str, *, min_size: int = 1, max_size: int = 8) -> PostgresSessionStore:
        """Connect and check the schema.

        Raises:
            StoreSchemaError: The database has no eve-py schema, or another version of it (run
                `eve-py store migrate URL`).
            UsageError: The database cannot be reached.
        """
        store = cls(url, min_size=min_size, max_size=max_size)
        try:
            await store.check()
        except (psycopg.OperationalError, PoolTimeout) as exc:
            await store.aclose()
            raise UsageError(f"cannot connect to {_redact(url)}: {exc}") from None
        except BaseException:
            await store.aclose()
            raise
        return store

    async def check(self) -> None:
        """Connect (opening the pool on first use) and check the database's schema version.

        Raises:
            StoreSchemaError: No eve-py schema, or another version of it.
        """
        async with self.connection() as conn:
            _check_version(await schema_version(conn), self.url)

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A pooled autocommit connection (the pool opens on first use, in the event loop that uses it)."""
        if not self._opened:
            self._opened = True
            await self._pool.open(wait=True, timeout=30.0)
        async with self._pool.connection() as conn:
            yield conn

    async def _one(self, query: str, params: dict[str, Any], *, durable: bool = True) -> tuple[Any, ...] | None:
        # Shielded: a query cancelled midway costs its connection (psycopg closes it); a
        # cancelled caller (a closed stream, a cancelled turn) waits the few ms instead.
        with anyio.CancelScope(shield=True):
            async with self.connection() as conn:
                if durable:
                    row = await (await conn.execute(query.encode(), params)).fetchone()
                else:
                    async with conn.transaction():
                        await conn.execute(b"SET LOCAL synchronous_commit = off")
                        row = await (await conn.execute(query.encode(), params)).fetchone()
        return row

    async def create(self, record: SessionRecord, events: Sequence[Event]) -> SessionRecord:
        """See `SessionStore.create`."""
        stored = record.created(len(events))
        params = _row(stored) | _logs("events", 0, [dump_event(e) for e in events]) | _notice(stored.id, 0, events)
        if await self._one(_CREATE, params) is None:
            raise SessionConflictError(f"A session with id {record.id!r} already exists.")
        return stored

    async def load(self, session_id: str) -> SessionRecord:
        """See `SessionStore.load`."""
        row = await self._one("SELECT record FROM eve_sessions WHERE id = %(id)s", {"id": session_id})
        if row is None:
            raise SessionNotFoundError(session_id)
        return SessionRecord.model_validate_json(row[0])

    async def commit(
        self,
        record: SessionRecord,
        events: Sequence[Event],
        messages: Sequence[Message] = (),
        *,
        durable: bool = True,
    ) -> SessionRecord:
        """See `SessionStore.commit`.

        A write that is not `durable` is committed with `synchronous_commit = off`: PostgreSQL
        acknowledges it before its WAL is flushed, keeps it in order, and flushes it with the
        next durable commit (a database crash can lose it, never reorder or corrupt anything).
        """
        stored = record.stored(len(events), len(messages))
        message_rows = [_MESSAGE.dump_json(m, by_alias=True, exclude_none=True).decode() for m in messages]
        params = (
            _row(stored)
            | {"base": record.version}
            | _logs("events", record.event_count, [dump_event(e) for e in events])
            | _logs("messages", record.message_count, message_rows)
            | _notice(record.id, record.event_count, events)
        )
        if await self._one(_COMMIT, params, durable=durable) is None:
            found = await self._one("SELECT version FROM eve_sessions WHERE id = %(id)s", {"id": record.id})
            if found is None:
                raise SessionNotFoundError(record.id)
            raise SessionConflictError(
                f"Session {record.id!r} was changed by another writer (version {found[0]}, "
                f"this write was based on {record.version}); nothing was written."
            )
        return stored

    async def read_events(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Event]:
        """See `SessionStore.read_events`."""
        return [load_event(raw) for raw in await self._read("events", "event", session_id, start, stop)]

    async def read_messages(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Message]:
        """See `SessionStore.read_messages`."""
        rows = await self._read("messages", "message", session_id, start, stop)
        return _MESSAGES.validate_json("[" + ",".join(rows) + "]")

    async def _read(self, table: str, column: str, session_id: str, start: int, stop: int | None) -> list[str]:
        """One round trip: a row per entry, or one NULL row for a session with none in range."""
        bounds = (max(start, 0), _MAX_INDEX if stop is None else min(max(stop, 0), _MAX_INDEX))
        with anyio.CancelScope(shield=True):  # see _one
            async with self.connection() as conn:
                cursor = await conn.execute(_READ.format(table=table, column=column).encode(), (*bounds, session_id))
                rows = await cursor.fetchall()
        if not rows:
            raise SessionNotFoundError(session_id)
        return [str(row[0]) for row in rows if row[0] is not None]

    @asynccontextmanager
    async def notices(self) -> AsyncIterator[AsyncIterator[Notice]]:
        """Listen for other processes' commits and cancel requests, on a connection of its own.

        Yields an async iterator of `Notice`s, from the moment the block is entered (LISTEN is
        in place before it yields, so nothing committed afterwards is missed).
        """
        async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as conn:
            for channel in (EVENTS_CHANNEL, CANCEL_CHANNEL):
                await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))

            async def received() -> AsyncGenerator[Notice, None]:
                # Closed explicitly: psycopg's generator holds the connection's lock until closed.
                async with aclosing(conn.notifies()) as notifies:
                    async for notify in notifies:
                        notice = parse_notice(notify.channel, notify.payload)
                        if notice is not None:
                            yield notice

            async with aclosing(received()) as notices:
                yield notices

    async def request_cancel(self, session_id: str) -> None:
        """Ask whichever process runs the session's turn to cancel it (a `cancel` notice)."""
        await self._one("SELECT pg_notify(%(channel)s, %(id)s)", {"channel": CANCEL_CHANNEL, "id": session_id})

    async def aclose(self) -> None:
        """Close the pool's connections."""
        if self._opened:
            await self._pool.close()


def _row(record: SessionRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "version": record.version,
        "status": record.status,
        "updated_at": record.updated_at,
        "record": record.model_dump_json(by_alias=True, exclude_none=True),
    }


def _logs(table: str, first: int, rows: list[str]) -> dict[str, Any]:
    return {table: rows, f"{table}_first": first}


def _notice(session_id: str, first: int, events: Sequence[Event]) -> dict[str, Any]:
    """The `eve_events` payload: `session_id first_index count` (empty: no notice for no events)."""
    return {"notify": f"{session_id} {first} {len(events)}" if events else ""}


async def schema_version(conn: psycopg.AsyncConnection[Any]) -> int | None:
    """The database's eve-py schema version, or None when it has none."""
    cursor = await conn.execute("SELECT to_regclass('eve_schema') IS NOT NULL")
    found = await cursor.fetchone()
    if found is None or not found[0]:
        return None
    cursor = await conn.execute("SELECT version FROM eve_schema")
    row = await cursor.fetchone()
    return None if row is None else int(row[0])


def _check_version(version: int | None, url: str) -> None:
    where = _redact(url)
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


def _redact(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "the database"
    host, port, name, user = (str(info.get(k) or "") for k in ("host", "port", "dbname", "user"))
    return f"postgresql://{user + '@' if user else ''}{host}{':' + port if port else ''}/{name}"


async def migrate(url: str) -> tuple[int | None, int]:
    """Create or upgrade the eve-py schema of the database at `url`, in one transaction.

    Concurrent calls run one after the other (an advisory lock); running it on an up-to-date
    database changes nothing.

    Returns:
        The version before (None: no schema) and after.

    Raises:
        StoreSchemaError: The database holds a newer schema than this eve-py knows.
    """
    async with await psycopg.AsyncConnection.connect(url) as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATE_LOCK,))
        before = await schema_version(conn)
        if before is not None and before > POSTGRES_SCHEMA_VERSION:
            _check_version(before, url)
        if before is None:
            await conn.execute("CREATE TABLE eve_schema (version integer NOT NULL)")
            await conn.execute("INSERT INTO eve_schema VALUES (0)")
        for script in _MIGRATIONS[before or 0 :]:
            await conn.execute(script.encode())
        await conn.execute("UPDATE eve_schema SET version = %s", (POSTGRES_SCHEMA_VERSION,))
    return before, POSTGRES_SCHEMA_VERSION
