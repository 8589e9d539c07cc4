"""`SQLiteSessionStore`: sessions, their conversations and event logs in one SQLite file (stdlib `sqlite3`).

Two tables: `sessions` (the small mutable record of each session, keyed by an integer row id
as well as its text id) and `log` (append-only, keyed by that row id and indexes; `WITHOUT
ROWID`). A write appends its events and its messages as one row (a *chunk*: the indexes of its
first event and first message, and their JSON lines), so a write costs one log row, whatever it
holds; records and chunks are encoded by `eve_py.sessions._codec`
(JSON, deflated with a preset dictionary when that is smaller). The database runs in WAL mode
so readers never block the writer, and every write is one `BEGIN IMMEDIATE` transaction that
compares the record's version before replacing it and appends that write's messages and events.
Several processes may share the file; the loser of a race gets `SessionConflictError`.

A record is stored as a *delta* against the session's *base record*, an earlier record kept in
the same row (`eve_py.sessions._sqlite_records`).

**Where calls run** is `eve_py.sessions._sqlite_connections`'s: a durable write is queued to the
store's writer thread (group commit), and loads, short log reads and writes that need no sync
run on the loop when they need not wait. Records and chunks are encoded by the thread that runs
the write: a queued write's in the writer thread, where deflate leaves the event loop free
(zlib releases the GIL).
`await SQLiteSessionStore.open(path)` opens the file in a worker thread; the constructor opens
it on the caller's thread.

The file's schema, its version and upgrades are `eve_py.sessions._sqlite_schema`'s.
"""

from __future__ import annotations

import functools
import secrets
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal, TypeVar

import anyio.to_thread

from eve_py._lru import Recent
from eve_py.errors import SessionConflictError, SessionNotFoundError
from eve_py.protocol import Event, dump_event, load_event
from eve_py.protocol.messages import Message, dump_message, load_messages
from eve_py.sessions._codec import Primed, encode_base
from eve_py.sessions._once import sqlite_use_once
from eve_py.sessions._record import SessionRecord
from eve_py.sessions._sqlite_connections import Connections
from eve_py.sessions._sqlite_records import (
    SAME_AS_BASE,
    BaseRecords,
    append_chunk,
    encode_chunk,
    read_log,
)

__all__ = ("SQLiteSessionStore",)

_T = TypeVar("_T")


class SQLiteSessionStore:
    """A `SessionStore` on a SQLite database file.

    Args:
        path: The database file; created (with its folder) if missing.
        timeout_s: How long a write waits for another process's lock, in seconds.
        synchronous: `FULL` (default) syncs every durable write to disk before it returns, so an
            accepted answer, a park or a completed turn survives power loss too (the writes
            between them are synced with them); `NORMAL` syncs nothing and keeps every write
            through process crashes only.

    Raises:
        StoreSchemaError: The file is not a SQLite database, holds another eve-py's schema, or
            cannot be opened; it is left as it was.
    """

    def __init__(
        self, path: str | Path, *, timeout_s: float = 30.0, synchronous: Literal["FULL", "NORMAL"] = "FULL"
    ) -> None:
        self.path = Path(path)
        self._connections = Connections(self.path, timeout_s, "FULL" if synchronous == "FULL" else "NORMAL")
        self._rowids: Recent[str, int] = Recent(_KEPT_SESSIONS)
        """Row ids of recently used sessions (a row id never changes; one dropped is read again)."""
        self._bases = BaseRecords(_KEPT_SESSIONS)
        self._records: Recent[int, SessionRecord] = Recent(_KEPT_SESSIONS)
        """The last record this store wrote or read per session row (a version names one record)."""

    @classmethod
    async def open(
        cls, path: str | Path, *, timeout_s: float = 30.0, synchronous: Literal["FULL", "NORMAL"] = "FULL"
    ) -> SQLiteSessionStore:
        """Open the store from async code: the file is opened and its schema set up off the event loop."""
        return await anyio.to_thread.run_sync(
            functools.partial(cls, path, timeout_s=timeout_s, synchronous=synchronous)
        )

    def _rowid(self, db: sqlite3.Connection, session_id: str) -> int:
        """The session's row id (kept for recently used sessions: it never changes).

        Raises:
            SessionNotFoundError: No such session.
        """
        rowid = self._rowids.get(session_id)
        if rowid is None:
            row = db.execute("SELECT rowid FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise SessionNotFoundError(session_id)
            rowid = int(row[0])
            self._rowids.put(session_id, rowid)
        return rowid

    async def create(self, record: SessionRecord, events: Sequence[Event], *, durable: bool = True) -> SessionRecord:
        """See `SessionStore.create` (`durable=False`: written on the loop, synced with the next durable write)."""
        stored = record.created(len(events))
        record_json = stored.to_json()
        event_rows = [dump_event(e) for e in events]
        written: list[tuple[int, bytes, Primed | None]] = []

        def write(db: sqlite3.Connection) -> None:
            base, primed = encode_base(record_json)  # in the thread that runs the write, as `commit`'s
            chunk = encode_chunk(event_rows, ())
            try:
                cursor = db.execute(
                    "INSERT INTO sessions (id, version, status, updated_at, record, base, deadline) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        stored.id,
                        stored.version,
                        stored.status,
                        stored.updated_at,
                        SAME_AS_BASE,
                        base,
                        stored.input_deadline,
                    ),
                )
            except sqlite3.IntegrityError:
                raise SessionConflictError(f"A session with id {record.id!r} already exists.") from None
            assert cursor.lastrowid is not None
            append_chunk(db, cursor.lastrowid, 0, 0, 0, chunk)
            written.append((cursor.lastrowid, base, primed))

        await self._connections.write(write, durable=durable)
        # Kept only once committed: a row id of a rolled-back insert may go to another session.
        rowid, base, primed = written[-1]
        self._rowids.put(stored.id, rowid)
        self._bases.keep(rowid, base, record_json, primed)
        self._records.put(rowid, stored)
        return stored

    async def load(self, session_id: str) -> SessionRecord:
        """See `SessionStore.load`."""

        def read(db: sqlite3.Connection) -> SessionRecord:
            rowid = self._rowid(db, session_id)
            kept = self._records.get(rowid)
            if kept is not None:  # the version alone tells whether it is still the stored record
                row = db.execute("SELECT version FROM sessions WHERE rowid = ?", (rowid,)).fetchone()
                if row is not None and row[0] == kept.version:
                    return kept
            row = db.execute("SELECT record, base FROM sessions WHERE rowid = ?", (rowid,)).fetchone()
            if row is None:
                raise SessionNotFoundError(session_id)
            record = SessionRecord.model_validate_json(self._bases.decode(rowid, row[0], row[1]))
            self._records.put(rowid, record)
            return record

        return await self._connections.read(read)

    async def commit(
        self,
        record: SessionRecord,
        events: Sequence[Event],
        messages: Sequence[Message] = (),
        *,
        durable: bool = True,
    ) -> SessionRecord:
        """See `SessionStore.commit`.

        With `synchronous="FULL"`, a durable write syncs the WAL before it returns; a write that is
        not durable commits with `NORMAL` (no sync): the WAL is appended in order, so the next
        durable write's sync covers it too, and a process crash loses neither.
        """
        stored = record.stored(len(events), len(messages))
        record_json = stored.to_json()
        event_rows = [dump_event(e) for e in events]
        message_rows = [dump_message(m) for m in messages]
        known = self._rowids.get(record.id)
        kept = self._bases.last(known) if known is not None else None

        def write(db: sqlite3.Connection) -> int:
            chunk = encode_chunk(event_rows, message_rows)
            rowid = self._rowid(db, record.id)
            early = self._bases.encode(rowid, record_json, kept) if kept is not None else None
            if early is not None:  # one statement when the row is as this store last saw it
                changed = db.execute(
                    f"{_UPDATE} AND version = ? AND base = ?", (*_columns(stored, *early), rowid, record.version, kept)
                ).rowcount
                if changed == 1:
                    append_chunk(db, rowid, record.event_count, record.message_count, len(message_rows), chunk)
                    return rowid
            found = db.execute("SELECT version, base FROM sessions WHERE rowid = ?", (rowid,)).fetchone()
            if found is None:
                raise SessionNotFoundError(record.id)
            if found[0] != record.version:
                raise SessionConflictError(
                    f"Session {record.id!r} was changed by another writer (version {found[0]}, "
                    f"this write was based on {record.version}); nothing was written."
                )
            encoded = early if early is not None and found[1] == kept else None
            if encoded is None:  # another process wrote since: encode against the base it left
                encoded = self._bases.encode(rowid, record_json, found[1])
            db.execute(_UPDATE, (*_columns(stored, *encoded), rowid))
            append_chunk(db, rowid, record.event_count, record.message_count, len(message_rows), chunk)
            return rowid

        self._records.put(await self._connections.write(write, durable=durable), stored)
        return stored

    async def read_events(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Event]:
        """See `SessionStore.read_events`."""
        rows = await self._connections.read(
            lambda db: self._read(db, "events", session_id, start, stop), quick=_short(start, stop)
        )
        return [load_event(raw) for raw in rows]

    async def read_messages(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Message]:
        """See `SessionStore.read_messages`."""
        rows = await self._connections.read(
            lambda db: self._read(db, "messages", session_id, start, stop), quick=_short(start, stop)
        )
        return load_messages(rows)

    def _read(self, db: sqlite3.Connection, table: str, session_id: str, start: int, stop: int | None) -> list[str]:
        return read_log(db, table, self._rowid(db, session_id), start, stop)

    async def due(self, now: float, limit: int = 100) -> list[str]:
        """See `SessionStore.due` (an index on the deadline column answers it)."""
        query = "SELECT id FROM sessions WHERE deadline <= ? ORDER BY deadline LIMIT ?"
        rows = await self._connections.read(lambda db: db.execute(query, (now, limit)).fetchall())
        return [str(row[0]) for row in rows]

    async def waiting(self, limit: int = 1000) -> list[str]:
        """See `SessionStore.waiting`."""
        query = "SELECT id FROM sessions WHERE status = 'waiting' ORDER BY rowid LIMIT ?"
        rows = await self._connections.read(lambda db: db.execute(query, (limit,)).fetchall())
        return [str(row[0]) for row in rows]

    async def secret(self, name: str) -> bytes:
        """See `SessionStore.secret`."""
        made = secrets.token_bytes(32)

        def keep(db: sqlite3.Connection) -> None:
            db.execute("INSERT OR IGNORE INTO secrets (name, value) VALUES (?, ?)", (name, made))

        await self._connections.write(keep)
        query = "SELECT value FROM secrets WHERE name = ?"
        row = await self._connections.read(lambda db: db.execute(query, (name,)).fetchone())
        return bytes(row[0])

    async def use_once(self, key: str, *, now: float, expires_at: float) -> bool:
        """See `SessionStore.use_once` (one write transaction: of racing processes, one records the key)."""
        return await self._connections.write(lambda db: sqlite_use_once(db, key, now, expires_at))

    async def forget_once(self, key: str) -> None:
        """See `SessionStore.forget_once`."""
        await self._connections.write(lambda db: db.execute("DELETE FROM once WHERE key = ?", (key,)))

    async def on_file(self, fn: Callable[[sqlite3.Connection], _T], *, write: bool = False) -> _T:
        """Run `fn(connection)` on this store's own connections to its file: the seam for a table of
        another part of eve-py kept in the same file (the server's session owners).

        A read may run twice (on the event loop, then in a worker thread when the file was busy), so
        what `fn` changes outside the database must be harmless to repeat. A write runs in one
        `BEGIN IMMEDIATE` transaction, committed whole or rolled back whole, and is synced with the
        store's next durable write (it is not synced on its own).

        Raises:
            Exception: Whatever `fn` raised (a write's transaction rolled back first).
        """
        return await (self._connections.write(fn, durable=False) if write else self._connections.read(fn))

    async def aclose(self) -> None:
        """Finish the queued writes, then close the database connections."""

        await anyio.to_thread.run_sync(self._connections.close)


_KEPT_SESSIONS = 1024
"""How many sessions' row id, last record and base record a store keeps in memory."""

_SHORT_READ = 256
"""A log read of at most this many entries runs on the loop (a few chunks to decode)."""

_UPDATE = (
    "UPDATE sessions SET version = ?, status = ?, updated_at = ?, record = ?, base = ?, deadline = ? WHERE rowid = ?"
)


def _columns(stored: SessionRecord, blob: bytes, base: bytes) -> tuple[object, ...]:
    return (stored.version, stored.status, stored.updated_at, blob, base, stored.input_deadline)


def _short(start: int, stop: int | None) -> bool:
    return stop is not None and stop - start <= _SHORT_READ
