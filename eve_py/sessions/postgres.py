"""`PostgresSessionStore`: sessions, their conversations and event logs in PostgreSQL (psycopg 3, async).

The same layout as the SQLite store: `eve_sessions` (the small mutable record of each session,
keyed by a `bigint` identity as well as its text id), `eve_messages` and `eve_events`
(append-only logs keyed by that key and an index). Every write is one SQL statement, so one
transaction and one round trip: an `UPDATE ... WHERE id = $id AND version = $base` (the
compare-and-set) whose returned key feeds the `INSERT`s of the write's messages and events,
then, in a store that feeds other processes, `pg_notify('eve_events', ...)`. PostgreSQL
delivers that notice only if the write commits, so other processes learn of new events as soon
as they are readable (see `notices`). A store feeds others once `notices()` has been entered in
its process (a server's workers do) or when opened with `feed=True`; otherwise its writes send
no notice: PostgreSQL serialises the commits that notify on one lock held through their WAL
flush, a cost a process that no other process follows need not pay.

Connections come from a `psycopg_pool.AsyncConnectionPool` in autocommit mode (see
`eve_py.sessions._pg_connect`); the store keeps one, with its cursor, from one of its statements
to the next (`eve_py.sessions._pg_pool`). The pool's check before it hands one out (a round
trip) is skipped for this store's own statements, which find a dead connection themselves and
run once more on a new one (`_rows`). The schema is created and upgraded
only by `migrate` (`eve-py store migrate URL`), never by opening a store: a database without it,
or with another version of it, is refused with `StoreSchemaError`.

When the database goes away (a restart, a stop, the network), an operation whose connection
died is run once more on a new one (`_rows` says why that never stores a write twice); what
still finds no working connection within `timeout_s` raises `StoreUnavailableError`.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import aclosing, asynccontextmanager
from typing import Any

import anyio
import psycopg
from psycopg import sql

from eve_py._lru import Recent
from eve_py.errors import SessionConflictError, SessionNotFoundError
from eve_py.protocol import Event, dump_event, load_event
from eve_py.protocol.messages import Message, dump_message, load_messages
from eve_py.sessions._feed import CANCEL_CHANNEL, EVENTS_CHANNEL, Notice, parse_notice
from eve_py.sessions._once import POSTGRES_USE_ONCE
from eve_py.sessions._pg_connect import RETRIED, connect, connection_lost, unavailable, unreachable
from eve_py.sessions._pg_pool import Connections
from eve_py.sessions._pg_schema import POSTGRES_SCHEMA_VERSION, check_version, migrate, schema_version
from eve_py.sessions._pg_sql import COMMIT, CREATE, READ, RECORD, lazy_params, log_params, row_params
from eve_py.sessions._record import SessionRecord

__all__ = ("POSTGRES_SCHEMA_VERSION", "PostgresSessionStore", "migrate", "schema_version")

_MAX_INDEX = 2**62

_KEPT_SESSIONS = 1024
"""How many sessions' last record a store keeps in memory."""


class PostgresSessionStore:
    """A `SessionStore` on a PostgreSQL database (open it with `await PostgresSessionStore.open(url)`).

    Args:
        url: A libpq connection string or URL (`postgresql://user@host:5432/db`).
        min_size: Connections the pool keeps open.
        max_size: Most connections the pool opens (each is one server process on PostgreSQL).
        timeout_s: How long an operation waits for a working connection (all busy, or the
            database down or restarting) before it raises `StoreUnavailableError`.
        feed: Notify listening processes (`notices()`) of every commit with events from the
            start. Without it, this store notifies once `notices()` has been entered in this
            process: a server's workers follow each other that way, and a process nobody
            follows sends nothing. Set it in a process that writes sessions which another
            process's server streams (a job answering requests), or that server's streams see
            those events only at their next periodic re-read.
    """

    def __init__(
        self, url: str, *, min_size: int = 1, max_size: int = 8, timeout_s: float = 5.0, feed: bool = False
    ) -> None:
        self.url = url
        self._connections = Connections(url, min_size=min_size, max_size=max_size, timeout_s=timeout_s)
        self._feeding = feed
        self._records: Recent[str, tuple[str, SessionRecord]] = Recent(_KEPT_SESSIONS)
        """The last record this store wrote or read per session, with its stored JSON: a load
        that reads the same JSON back returns it without parsing it again."""

    @classmethod
    async def open(
        cls, url: str, *, min_size: int = 1, max_size: int = 8, timeout_s: float = 5.0, feed: bool = False
    ) -> PostgresSessionStore:
        """Connect once and check the schema (the pool opens on first use).

        Raises:
            StoreSchemaError: The database has no eve-py schema, or another version of it (run
                `eve-py store migrate URL`).
            UsageError: The database cannot be reached within a few seconds (a missing database,
                a wrong password, nothing listening): one line, the URL without its password.
        """
        store = cls(url, min_size=min_size, max_size=max_size, timeout_s=timeout_s, feed=feed)
        await store.check()
        return store

    async def check(self) -> None:
        """Connect once, outside the pool, and check the database's schema version.

        Raises:
            UsageError: The database cannot be reached within a few seconds.
            StoreSchemaError: No eve-py schema, or another version of it.
        """
        async with await connect(self.url) as conn:
            check_version(await schema_version(conn), self.url)

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A pooled autocommit connection, checked as it is handed out (the pool opens on first
        use, in the event loop that uses it).

        Raises:
            StoreUnavailableError: No working connection within `timeout_s`, or it died in the block.
        """
        try:
            async with self._connections.checked_out() as conn:
                yield conn
        except psycopg.OperationalError as exc:
            if not unreachable(exc):
                raise
            raise unavailable(self.url, exc) from None

    async def _one(self, query: str, params: Mapping[str, Any], *, stores: str | None = None) -> tuple[Any, ...] | None:
        """The statement's first row, or None (see `_rows`)."""
        rows = await self._rows(query, params, stores=stores)
        return rows[0] if rows else None

    async def _rows(self, query: str, params: Mapping[str, Any], *, stores: str | None = None) -> list[tuple[Any, ...]]:
        """The statement's rows, on a pooled connection; run once more if the connection died under it.

        `stores`: for a write, the record it stores; a write returns a row when it applied.

        Why running it again is safe. Its connection died because the server went away (restarted,
        stopped, the network dropped). A read can always run again. Each write here is one
        statement, so one transaction, and a compare-and-set: `COMMIT` changes the session only
        if it is still at the version it was based on, `CREATE` inserts only an id not taken. So
        a write can never apply twice, however often it runs. What a retry must not do is report
        a false conflict: PostgreSQL commits at the end of the statement, before its answer
        reaches us, so the first try may have committed and only its answer been lost. The retry
        then finds the version moved (or the id taken) and returns no row; if the session now
        holds exactly the record this write stores, the first try committed it, and the write is
        done. A second lost connection (or none within `timeout_s`) is `StoreUnavailableError`:
        whether a write landed is then unknown, which the error says.
        """
        # Shielded: a query cancelled midway costs its connection (psycopg closes it); a
        # cancelled caller (a closed stream, a cancelled turn) waits the few ms instead.
        with anyio.CancelScope(shield=True):
            try:
                rows = await self._twice(query, params, stores)
            except psycopg.OperationalError as exc:
                if not unreachable(exc):
                    raise
                raise unavailable(self.url, exc) from None
        return rows

    async def _twice(self, query: str, params: Mapping[str, Any], stores: str | None) -> list[tuple[Any, ...]]:
        retried = RETRIED.set(True)  # the first try's connection goes unchecked: a dead one fails it
        try:
            return await self._run(query, params)
        except psycopg.OperationalError as exc:
            if not connection_lost(exc):
                raise
            # The server went away, so every idle connection from before is dead too: replace them.
            await self._connections.drain()
        finally:
            RETRIED.reset(retried)
        rows = await self._run(query, params)
        if not rows and stores is not None:  # not applied now: had the first try committed it?
            held = await self._run(RECORD, {"id": params["id"]})
            return held if held and held[0][0] == stores else []
        return rows

    async def _run(self, query: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Every row of one statement, on a connection `Connections.take` hands out (with its cursor)."""
        held = await self._connections.take()
        try:
            return await self._execute(held[1], query, params)
        finally:
            await self._connections.give(held)

    async def _execute(
        self, cursor: psycopg.AsyncCursor[Any], query: str, params: Mapping[str, Any]
    ) -> list[tuple[Any, ...]]:
        """Every row of one statement, on `cursor` (reused: a new one per statement costs 10-40 µs)."""
        await cursor.execute(query.encode(), params)
        return await cursor.fetchall()

    async def create(self, record: SessionRecord, events: Sequence[Event], *, durable: bool = True) -> SessionRecord:
        """See `SessionStore.create` (`durable=False`: committed without waiting for its WAL flush, as `commit`)."""
        stored = record.created(len(events))
        params = (
            row_params(stored)
            | log_params("events", 0, [dump_event(e) for e in events])
            | self._notice(stored.id, 0, events)
            | lazy_params(durable)
        )
        if await self._one(CREATE, params, stores=params["record"]) is None:
            raise SessionConflictError(f"A session with id {record.id!r} already exists.")
        self._records.put(stored.id, (params["record"], stored))
        return stored

    async def load(self, session_id: str) -> SessionRecord:
        """See `SessionStore.load`."""
        row = await self._one(RECORD, {"id": session_id})
        if row is None:
            raise SessionNotFoundError(session_id)
        kept = self._records.get(session_id)
        if kept is not None and kept[0] == row[0]:
            return kept[1]
        record = SessionRecord.model_validate_json(row[0])
        self._records.put(session_id, (row[0], record))
        return record

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
        message_rows = [dump_message(m) for m in messages]
        params = (
            row_params(stored)
            | {"base": record.version}
            | log_params("events", record.event_count, [dump_event(e) for e in events])
            | log_params("messages", record.message_count, message_rows)
            | self._notice(record.id, record.event_count, events)
        )
        if await self._one(COMMIT, params | lazy_params(durable), stores=params["record"]) is None:
            found = await self._one("SELECT version FROM eve_sessions WHERE id = %(id)s", {"id": record.id})
            if found is None:
                raise SessionNotFoundError(record.id)
            raise SessionConflictError(
                f"Session {record.id!r} was changed by another writer (version {found[0]}, "
                f"this write was based on {record.version}); nothing was written."
            )
        self._records.put(stored.id, (params["record"], stored))
        return stored

    def _notice(self, session_id: str, first: int, events: Sequence[Event]) -> dict[str, Any]:
        """The `eve_events` payload: `session_id first_index count` (empty: no notice, for no
        events or a store that feeds nobody)."""
        return {"notify": f"{session_id} {first} {len(events)}" if events and self._feeding else ""}

    async def read_events(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Event]:
        """See `SessionStore.read_events`."""
        return [load_event(raw) for raw in await self._read("events", "event", session_id, start, stop)]

    async def read_messages(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Message]:
        """See `SessionStore.read_messages`."""
        rows = await self._read("messages", "message", session_id, start, stop)
        return load_messages(rows)

    async def _read(self, table: str, column: str, session_id: str, start: int, stop: int | None) -> list[str]:
        """One round trip: a row per entry, or one NULL row for a session with none in range."""
        bounds = {"start": max(start, 0), "stop": _MAX_INDEX if stop is None else min(max(stop, 0), _MAX_INDEX)}
        rows = await self._rows(READ.format(table=table, column=column), bounds | {"id": session_id})
        if not rows:
            raise SessionNotFoundError(session_id)
        return [str(row[0]) for row in rows if row[0] is not None]

    @asynccontextmanager
    async def notices(self) -> AsyncIterator[AsyncIterator[Notice]]:
        """Listen for other processes' commits and cancel requests, on a connection of its own.

        Yields an async iterator of `Notice`s, from the moment the block is entered (LISTEN is
        in place before it yields, so nothing committed afterwards is missed). From then on
        this store's own commits notify too (see `feed`).
        """
        self._feeding = True
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

    async def due(self, now: float, limit: int = 100) -> list[str]:
        """See `SessionStore.due` (a partial index on `input_deadline` answers it)."""
        query = "SELECT id FROM eve_sessions WHERE input_deadline <= %(now)s ORDER BY input_deadline LIMIT %(limit)s"
        return [str(row[0]) for row in await self._rows(query, {"now": now, "limit": limit})]

    async def waiting(self, limit: int = 1000) -> list[str]:
        """See `SessionStore.waiting`."""
        query = "SELECT id FROM eve_sessions WHERE status = 'waiting' ORDER BY key LIMIT %(limit)s"
        return [str(row[0]) for row in await self._rows(query, {"limit": limit})]

    async def secret(self, name: str) -> bytes:
        """See `SessionStore.secret` (one statement: of racing first callers, one value is kept)."""
        query = (
            "WITH made AS (INSERT INTO eve_secrets (name, value) VALUES (%(name)s, %(value)s) "
            "ON CONFLICT (name) DO NOTHING RETURNING value) "
            "SELECT value FROM made UNION ALL SELECT value FROM eve_secrets WHERE name = %(name)s"
        )
        row = await self._one(query, {"name": name, "value": secrets.token_bytes(32)})
        if row is None:  # another process's insert committed after this statement's snapshot
            row = await self._one("SELECT value FROM eve_secrets WHERE name = %(name)s", {"name": name})
        assert row is not None, "a secret, once inserted, is never deleted"
        return bytes(row[0])

    async def use_once(self, key: str, *, now: float, expires_at: float) -> bool:
        """See `SessionStore.use_once` (one statement; a racing recorder waits for the first one's row)."""
        return await self._one(POSTGRES_USE_ONCE, {"key": key, "now": now, "expires_at": expires_at}) is not None

    async def forget_once(self, key: str) -> None:
        """See `SessionStore.forget_once`."""
        await self._one("DELETE FROM eve_once WHERE key = %(key)s RETURNING 1", {"key": key})

    async def aclose(self) -> None:
        """Close the pool's connections."""
        await self._connections.close()
