"""`SQLiteSessionStore`: sessions, their conversations and event logs in one SQLite file (stdlib `sqlite3`).

Three tables: `sessions` (the small mutable record of each session, keyed by an integer row id
as well as its text id), `messages` and `events` (append-only logs keyed by that row id and an
index; `WITHOUT ROWID`). A write appends its events as one row (a *chunk*: the index of its
first event and their JSON lines) and its messages likewise, so a write costs one
row per log, whatever it holds; records and chunks are encoded by `eve_py.sessions.codec`
(JSON, deflated with a preset dictionary when that is smaller). The database runs in WAL mode
so readers never block the writer, and every write is one `BEGIN IMMEDIATE` transaction that
compares the record's version before replacing it and appends that write's messages and events.
Several processes may share the file; the loser of a race gets `SessionConflictError`. Every call
runs in a worker thread, never on the event loop (`await SQLiteSessionStore.open(path)` opens
the file there too; the constructor opens it on the caller's thread).

The schema's version is the database's `user_version` (4: logs in encoded chunks, and the record
no longer stores the session's status, derived from its turn's). A file written by an earlier eve-py
is refused with `StoreSchemaError` rather than read wrongly.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal, TypeVar

import anyio.to_thread

from eve_py.errors import SessionConflictError, SessionNotFoundError, StoreSchemaError
from eve_py.events import Event, dump_event, load_event
from eve_py.models.messages import Message, dump_message, load_messages
from eve_py.sessions.codec import decode, encode
from eve_py.sessions.record import SessionRecord

__all__ = ("SCHEMA_VERSION", "SQLiteSessionStore")

_T = TypeVar("_T")

SCHEMA_VERSION = 4
"""The database's `user_version` this store writes and reads."""

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS sessions (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    version INTEGER NOT NULL,
    status TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    record BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    session INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    chunk BLOB NOT NULL,
    PRIMARY KEY (session, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events (
    session INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    chunk BLOB NOT NULL,
    PRIMARY KEY (session, idx)
) WITHOUT ROWID;
PRAGMA user_version = {SCHEMA_VERSION};
"""


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
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=timeout_s, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise StoreSchemaError(f"cannot open {self.path} as a session store: {exc}") from exc
        self._synchronous: Literal["FULL", "NORMAL"] = "FULL" if synchronous == "FULL" else "NORMAL"
        self._mode = self._synchronous
        """The connection's `synchronous` setting now."""
        try:
            _check_schema(self._db, self.path)  # before anything writes: a refused file stays as it was
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={self._mode}")
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as exc:  # "file is not a database", read-only, locked, ...
            self._db.close()
            raise StoreSchemaError(
                f"cannot use {self.path} as a session store ({exc}); name a new file or an eve-py store (--store)"
            ) from exc
        except BaseException:
            self._db.close()
            raise
        self._rowids: dict[str, int] = {}

    @classmethod
    async def open(
        cls, path: str | Path, *, timeout_s: float = 30.0, synchronous: Literal["FULL", "NORMAL"] = "FULL"
    ) -> SQLiteSessionStore:
        """Open the store from async code: the file is opened and its schema set up off the event loop."""
        return await anyio.to_thread.run_sync(
            functools.partial(cls, path, timeout_s=timeout_s, synchronous=synchronous)
        )

    async def _run(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        def locked() -> _T:
            with self._lock:
                return fn(self._db)

        return await anyio.to_thread.run_sync(locked)

    async def _write(self, fn: Callable[[sqlite3.Connection], None], *, durable: bool = True) -> None:
        """Run `fn` in one `BEGIN IMMEDIATE` transaction: committed whole, or rolled back whole.

        `durable=False` commits without syncing when the store syncs every commit (`FULL`).
        """
        mode = self._synchronous if durable else "NORMAL"

        def transaction(db: sqlite3.Connection) -> None:
            if mode != self._mode:  # a connection setting, changed between transactions only
                db.execute(f"PRAGMA synchronous={mode}")
                self._mode = mode
            db.execute("BEGIN IMMEDIATE")
            try:
                fn(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

        await self._run(transaction)

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

    async def create(self, record: SessionRecord, events: Sequence[Event]) -> SessionRecord:
        """See `SessionStore.create`."""
        stored = record.created(len(events))

        def write(db: sqlite3.Connection) -> None:
            try:
                cursor = db.execute(
                    "INSERT INTO sessions (id, version, status, updated_at, record) VALUES (?, ?, ?, ?, ?)",
                    (stored.id, stored.version, stored.status, stored.updated_at, encode(_dump(stored))),
                )
            except sqlite3.IntegrityError:
                raise SessionConflictError(f"A session with id {record.id!r} already exists.") from None
            assert cursor.lastrowid is not None
            _append(db, "events", cursor.lastrowid, 0, _chunk([dump_event(e) for e in events]))

        await self._write(write)
        return stored

    async def load(self, session_id: str) -> SessionRecord:
        """See `SessionStore.load`."""

        def read(db: sqlite3.Connection) -> bytes:
            row = db.execute("SELECT record FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise SessionNotFoundError(session_id)
            return bytes(row[0])

        return SessionRecord.model_validate_json(decode(await self._run(read)))

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
        # JSON here; compressed in the worker thread, where zlib lets the event loop run meanwhile.
        record_json = _dump(stored)
        event_rows = [dump_event(e) for e in events]
        message_rows = [dump_message(m) for m in messages]

        def write(db: sqlite3.Connection) -> None:
            row = (stored.version, stored.status, stored.updated_at, encode(record_json), record.id, record.version)
            event_chunk, message_chunk = _chunk(event_rows), _chunk(message_rows)
            cursor = db.execute(
                "UPDATE sessions SET version = ?, status = ?, updated_at = ?, record = ? WHERE id = ? AND version = ?",
                row,
            )
            if cursor.rowcount != 1:
                found = db.execute("SELECT version FROM sessions WHERE id = ?", (record.id,)).fetchone()
                if found is None:
                    raise SessionNotFoundError(record.id)
                raise SessionConflictError(
                    f"Session {record.id!r} was changed by another writer (version {found[0]}, "
                    f"this write was based on {record.version}); nothing was written."
                )
            rowid = self._rowid(db, record.id)
            _append(db, "events", rowid, record.event_count, event_chunk)
            _append(db, "messages", rowid, record.message_count, message_chunk)

        await self._write(write, durable=durable)
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

    async def aclose(self) -> None:
        """Close the database connection."""
        await self._run(lambda db: db.close())


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


def _check_schema(db: sqlite3.Connection, path: Path) -> None:
    """Refuse a file of another schema version (a new or empty file passes).

    Raises:
        StoreSchemaError: The file holds sessions of another eve-py version.
    """
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "sessions" in tables and version != SCHEMA_VERSION:
        raise StoreSchemaError(
            f"{path} holds sessions in store schema {version}, written by another eve-py version; this one "
            f"reads schema {SCHEMA_VERSION}. Use a new file (--store), or finish those sessions with the "
            "eve-py that wrote them."
        )
