"""`SQLiteSessionStore`: sessions, their conversations and event logs in one SQLite file (stdlib `sqlite3`).

Three tables: `sessions` (the small mutable record of each session, keyed by an integer row id
as well as its text id), `messages` and `events` (append-only logs keyed by that row id and an
index; `WITHOUT ROWID`). A write appends its events as one row (a *chunk*: the index of its
first event and their JSON lines) and its messages likewise, so a write costs one
row per log, whatever it holds; records and chunks are encoded by `eve_py.sessions._codec`
(JSON, deflated with a preset dictionary when that is smaller). The database runs in WAL mode
so readers never block the writer, and every write is one `BEGIN IMMEDIATE` transaction that
compares the record's version before replacing it and appends that write's messages and events.
Several processes may share the file; the loser of a race gets `SessionConflictError`.

A record is stored as a *delta* (`eve_py.sessions._codec`) against the session's *base record*,
an earlier record kept in the same row: the writes of one turn differ from it by a few fields.
When the delta outgrows `_REBASE_BYTES`, the record becomes the new base.

**Where calls run.** What may wait (a durable write's sync, a lock another process holds, a
long log read) runs in a worker thread, never on the event loop; what cannot (loading a record,
a write that is not synced) runs on the loop at once, on a second connection that never waits
for a lock and never checkpoints: a lock held elsewhere sends the call to the worker thread too.
A thread hop costs more than such a write. `await SQLiteSessionStore.open(path)` opens the file
in a worker thread; the constructor opens it on the caller's thread.

The file's schema, its version and upgrades are `eve_py.sessions._sqlite_schema`'s.
"""

from __future__ import annotations

import functools
import secrets
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal, TypeVar

import anyio.to_thread

from eve_py._lru import Recent
from eve_py.errors import SessionConflictError, SessionNotFoundError, StoreSchemaError
from eve_py.protocol import Event, dump_event, load_event
from eve_py.protocol.messages import Message, dump_message, load_messages
from eve_py.sessions._codec import decode, encode
from eve_py.sessions._once import sqlite_use_once
from eve_py.sessions._record import SessionRecord
from eve_py.sessions._sqlite_schema import check_schema, connect, create_tables

__all__ = ("SQLiteSessionStore",)

_T = TypeVar("_T")

_REBASE_BYTES = 160
"""A record whose delta from the base is longer than this becomes the session's new base."""

_SAME_AS_BASE = b""
"""The `record` of a row whose record is its base."""


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
        self._synchronous: Literal["FULL", "NORMAL"] = "FULL" if synchronous == "FULL" else "NORMAL"
        self._mode = self._synchronous
        """The worker connection's `synchronous` setting now."""
        self._lock = threading.Lock()
        self._db = connect(self.path, timeout_s)
        try:
            check_schema(self._db, self.path)  # before anything writes: a refused file stays as it was
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={self._mode}")
            create_tables(self._db)
            # The loop's connection: it never waits for a lock (timeout 0), never syncs, and
            # leaves checkpoints (which sync) to the worker connection's writes.
            self._quick = connect(self.path, 0.0)
        except sqlite3.Error as exc:  # "file is not a database", read-only, locked, ...
            self._db.close()
            raise StoreSchemaError(
                f"cannot use {self.path} as a session store ({exc}); name a new file or an eve-py store (--store)"
            ) from exc
        except BaseException:
            self._db.close()
            raise
        self._quick.execute("PRAGMA synchronous=NORMAL")
        self._quick.execute("PRAGMA wal_autocheckpoint=0")
        self._quick_lock = threading.Lock()
        self._rowids: dict[str, int] = {}
        self._bases: Recent[int, tuple[bytes, str]] = Recent(_KEPT_SESSIONS)
        """The last base record seen per session row: its stored bytes and its text."""
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

    async def _run(self, fn: Callable[[sqlite3.Connection], _T], *, quick: bool = False) -> _T:
        """`fn(connection)` in the worker thread; with `quick`, first on the loop if it need not wait.

        `fn` may be run twice (on the loop, then in the thread when it found the lock taken):
        what it changes outside the database must be harmless to repeat, as the caches are.
        """
        if quick and self._quick_lock.acquire(blocking=False):
            try:
                return fn(self._quick)
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode & 0xFF not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                    raise
            finally:
                self._quick_lock.release()

        def locked() -> _T:
            with self._lock:
                return fn(self._db)

        return await anyio.to_thread.run_sync(locked)

    async def _write(self, fn: Callable[[sqlite3.Connection], None], *, durable: bool = True) -> None:
        """Run `fn` in one `BEGIN IMMEDIATE` transaction: committed whole, or rolled back whole.

        `durable=False` commits without syncing when the store syncs every commit (`FULL`), on
        the event loop when no other writer holds the lock.
        """
        mode = self._synchronous if durable else "NORMAL"

        def transaction(db: sqlite3.Connection) -> None:
            if db is self._db and mode != self._mode:  # a connection setting, changed between transactions only
                db.execute(f"PRAGMA synchronous={mode}")
                self._mode = mode
            db.execute("BEGIN IMMEDIATE")
            try:
                fn(db)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:  # a failed COMMIT (busy) leaves it open, holding the lock
                    db.execute("ROLLBACK")
                raise

        await self._run(transaction, quick=not durable)

    def _rowid(self, db: sqlite3.Connection, session_id: str) -> int:
        """The session's row id (cached: it never changes).

        Raises:
            SessionNotFoundError: No such session.
        """
        rowid = self._rowids.get(session_id)
        if rowid is None:
            row = db.execute("SELECT rowid FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise SessionNotFoundError(session_id)
            rowid = self._rowids[session_id] = int(row[0])
        return rowid

    def _base(self, rowid: int, blob: bytes | None) -> str | None:
        """The text of the base record stored as `blob` (decoded once per base, then kept)."""
        if blob is None:
            return None
        kept = self._bases.get(rowid)
        if kept is not None and kept[0] == blob:
            return kept[1]
        text = decode(blob)
        self._bases.put(rowid, (bytes(blob), text))
        return text

    def _encode_record(self, rowid: int, record_json: str, base: bytes | None) -> tuple[bytes, bytes]:
        """The record's row as (record, base): a delta from the stored base, or the record as a new base."""
        text = self._base(rowid, base)
        if text is not None and base is not None:
            delta = encode(record_json, text)
            if len(delta) <= _REBASE_BYTES:
                return delta, base
        base = encode(record_json)
        self._bases.put(rowid, (base, record_json))
        return _SAME_AS_BASE, base

    def _decode_record(self, rowid: int, blob: bytes, base: bytes | None) -> str:
        """The record's JSON from its row."""
        text = self._base(rowid, base)
        if blob == _SAME_AS_BASE and text is not None:
            return text
        return decode(blob, text)

    async def create(self, record: SessionRecord, events: Sequence[Event]) -> SessionRecord:
        """See `SessionStore.create`."""
        stored = record.created(len(events))
        record_json = _dump(stored)
        event_chunk = _chunk([dump_event(e) for e in events])

        base = encode(record_json)
        rowids: list[int] = []

        def write(db: sqlite3.Connection) -> None:
            try:
                cursor = db.execute(
                    "INSERT INTO sessions (id, version, status, updated_at, record, base, deadline) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        stored.id,
                        stored.version,
                        stored.status,
                        stored.updated_at,
                        _SAME_AS_BASE,
                        base,
                        stored.input_deadline,
                    ),
                )
            except sqlite3.IntegrityError:
                raise SessionConflictError(f"A session with id {record.id!r} already exists.") from None
            assert cursor.lastrowid is not None
            _append(db, "events", cursor.lastrowid, 0, event_chunk)
            rowids.append(cursor.lastrowid)

        await self._write(write)
        # Kept only once committed: a row id of a rolled-back insert may go to another session.
        rowid = self._rowids[stored.id] = rowids[-1]
        self._bases.put(rowid, (base, record_json))
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
            record = SessionRecord.model_validate_json(self._decode_record(rowid, row[0], row[1]))
            self._records.put(rowid, record)
            return record

        return await self._run(read, quick=True)

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
        record_json = _dump(stored)
        event_chunk = _chunk([dump_event(e) for e in events])
        message_chunk = _chunk([dump_message(m) for m in messages])

        def write(db: sqlite3.Connection) -> None:
            rowid = self._rowid(db, record.id)
            found = db.execute("SELECT version, base FROM sessions WHERE rowid = ?", (rowid,)).fetchone()
            if found is None:
                raise SessionNotFoundError(record.id)
            if found[0] != record.version:
                raise SessionConflictError(
                    f"Session {record.id!r} was changed by another writer (version {found[0]}, "
                    f"this write was based on {record.version}); nothing was written."
                )
            blob, base = self._encode_record(rowid, record_json, found[1])
            db.execute(
                "UPDATE sessions SET version = ?, status = ?, updated_at = ?, record = ?, base = ?, deadline = ? "
                "WHERE rowid = ?",
                (stored.version, stored.status, stored.updated_at, blob, base, stored.input_deadline, rowid),
            )
            _append(db, "events", rowid, record.event_count, event_chunk)
            _append(db, "messages", rowid, record.message_count, message_chunk)

        await self._write(write, durable=durable)
        self._records.put(self._rowids[record.id], stored)
        return stored

    async def read_events(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Event]:
        """See `SessionStore.read_events`."""
        rows = await self._run(lambda db: self._read(db, "events", session_id, start, stop))
        return [load_event(raw) for raw in rows]

    async def read_messages(self, session_id: str, start: int = 0, stop: int | None = None) -> list[Message]:
        """See `SessionStore.read_messages`."""
        rows = await self._run(lambda db: self._read(db, "messages", session_id, start, stop))
        return load_messages(rows)

    def _read(self, db: sqlite3.Connection, table: str, session_id: str, start: int, stop: int | None) -> list[str]:
        rowid = self._rowid(db, session_id)
        start = min(max(start, 0), _MAX_INDEX)
        stop = _MAX_INDEX if stop is None else min(max(stop, 0), _MAX_INDEX)
        if start >= stop:
            return []
        # The chunk holding `start` is the last one starting at or before it; the rest follow it.
        chunks = db.execute(
            f"SELECT idx, chunk FROM {table} WHERE session = ? AND idx < ? AND idx >= "  # noqa: S608
            f"COALESCE((SELECT MAX(idx) FROM {table} WHERE session = ? AND idx <= ?), 0) ORDER BY idx",
            (rowid, stop, rowid, start),
        ).fetchall()
        lines = []
        for first, chunk in chunks:
            for index, line in enumerate(decode(chunk).split("\n"), start=first):
                if start <= index < stop:
                    lines.append(line)
        return lines

    async def due(self, now: float, limit: int = 100) -> list[str]:
        """See `SessionStore.due` (an index on the deadline column answers it)."""
        query = "SELECT id FROM sessions WHERE deadline <= ? ORDER BY deadline LIMIT ?"
        rows = await self._run(lambda db: db.execute(query, (now, limit)).fetchall(), quick=True)
        return [str(row[0]) for row in rows]

    async def waiting(self, limit: int = 1000) -> list[str]:
        """See `SessionStore.waiting`."""
        query = "SELECT id FROM sessions WHERE status = 'waiting' ORDER BY rowid LIMIT ?"
        rows = await self._run(lambda db: db.execute(query, (limit,)).fetchall(), quick=True)
        return [str(row[0]) for row in rows]

    async def secret(self, name: str) -> bytes:
        """See `SessionStore.secret`."""
        made = secrets.token_bytes(32)

        def keep(db: sqlite3.Connection) -> None:
            db.execute("INSERT OR IGNORE INTO secrets (name, value) VALUES (?, ?)", (name, made))

        await self._write(keep)
        row = await self._run(lambda db: db.execute("SELECT value FROM secrets WHERE name = ?", (name,)).fetchone())
        return bytes(row[0])

    async def use_once(self, key: str, *, now: float, expires_at: float) -> bool:
        """See `SessionStore.use_once` (one write transaction: of racing processes, one records the key)."""
        first: list[bool] = []
        await self._write(lambda db: first.append(sqlite_use_once(db, key, now, expires_at)))
        return first[-1]

    async def aclose(self) -> None:
        """Close the database connections."""

        def close(db: sqlite3.Connection) -> None:
            with self._quick_lock:
                self._quick.close()
            db.close()

        await self._run(close)


_KEPT_SESSIONS = 1024
"""How many sessions' last record and base record a store keeps in memory."""


_MAX_INDEX = 2**62
"""Bounds clamped to this stay within SQLite's 64-bit integers (a larger int raises OverflowError)."""


def _dump(record: SessionRecord) -> str:
    return record.model_dump_json(by_alias=True, exclude_none=True)


def _chunk(rows: Sequence[str]) -> bytes | None:
    """One write's log entries as one encoded chunk (JSON lines: JSON text never holds a raw newline)."""
    return encode("\n".join(rows)) if rows else None


def _append(db: sqlite3.Connection, table: str, rowid: int, first: int, chunk: bytes | None) -> None:
    if chunk is not None:
        db.execute(f"INSERT INTO {table} (session, idx, chunk) VALUES (?, ?, ?)", (rowid, first, chunk))  # noqa: S608
