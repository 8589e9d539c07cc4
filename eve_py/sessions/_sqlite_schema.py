"""The SQLite store's file: its tables, its schema version, upgrading an older file, opening a connection.

The version is the database's `user_version` (8: a write's events and messages in one `log`
row; 7: keys used once; 6: each waiting session's first deadline beside its record, and the
store's secrets; 5: records stored against a base record). A file of schema 4 to 7 is upgraded
in place, in one transaction, when opened (columns and tables are added, and the `events` and
`messages` tables' rows move to `log`); one of an earlier schema is refused with
`StoreSchemaError` rather than read wrongly.
"""

from __future__ import annotations

import functools
import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from eve_py.errors import StoreSchemaError
from eve_py.sessions._codec import decode

__all__ = ("SCHEMA_VERSION", "check_schema", "connect", "create_tables", "immediate")

_T = TypeVar("_T")

SCHEMA_VERSION = 8
"""The database's `user_version` this store writes and reads."""

_UPGRADES = {
    4: ("ALTER TABLE sessions ADD COLUMN base BLOB", "ALTER TABLE sessions ADD COLUMN deadline REAL"),
    5: ("ALTER TABLE sessions ADD COLUMN deadline REAL",),
    6: (),
    7: (),
}
"""What brings a file of an older schema to this one, by its version (its records read as they are:
no session of an older eve-py has a deadline); `_merge_logs` then moves their logs. Other new tables
and indexes come with `create_tables`."""

_LOG = (
    """CREATE TABLE IF NOT EXISTS log (
    session INTEGER NOT NULL,
    event INTEGER NOT NULL,
    message INTEGER NOT NULL,
    messages INTEGER NOT NULL,
    chunk BLOB NOT NULL,
    PRIMARY KEY (session, event, message)
) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS log_messages ON log (session, message) WHERE messages > 0",
)
"""The logs: a row per write, its chunk the write's events then its last `messages` lines, its
messages. `event` and `message` are the indexes of its first event and first message (the logs'
lengths before the write); both only grow from one write to the next, so the key orders a
session's rows as written, and only rows that hold messages are in the index that finds them."""

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS sessions (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    version INTEGER NOT NULL,
    status TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    record BLOB NOT NULL,
    base BLOB,
    deadline REAL
)""",
    "CREATE INDEX IF NOT EXISTS sessions_deadline ON sessions (deadline) WHERE deadline IS NOT NULL",
    "CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS once (key TEXT PRIMARY KEY, expires_at REAL NOT NULL) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS once_expires_at ON once (expires_at)",
    *_LOG,
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)
"""A new file's tables and indexes, and its schema version."""


def create_tables(db: sqlite3.Connection) -> None:
    """Create the tables a new file lacks (an existing file's are kept as they are), in one transaction.

    One transaction, so that another process opening the file meanwhile, or this one after a
    crash halfway, finds either no tables or all of them with their `user_version`, never a
    `sessions` table of schema 0, which it would refuse.
    """

    def create(db: sqlite3.Connection) -> None:
        for statement in _SCHEMA:
            db.execute(statement)

    immediate(db, create)


def immediate(db: sqlite3.Connection, fn: Callable[[sqlite3.Connection], _T]) -> _T:
    """`fn(db)` in a `BEGIN IMMEDIATE` transaction on `db` (autocommit): committed whole, or rolled back whole."""
    db.execute("BEGIN IMMEDIATE")
    try:
        result = fn(db)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:  # a failed COMMIT (busy) leaves it open, holding the lock
            db.execute("ROLLBACK")
        raise
    return result


def connect(path: Path, timeout_s: float) -> sqlite3.Connection:
    """A connection to the file (autocommit: transactions are begun explicitly).

    Raises:
        StoreSchemaError: The file (or its folder) cannot be opened.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return sqlite3.connect(path, timeout=timeout_s, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise StoreSchemaError(f"cannot open {path} as a session store: {exc}") from exc


UPGRADE_WAIT_S = 3600.0
"""How long opening a file waits for another process's upgrade of it to end, in seconds."""

_log = logging.getLogger("eve_py.sessions")
_RETRY_S = 0.1


def check_schema(db: sqlite3.Connection, path: Path) -> None:
    """Upgrade a file of an older schema this one can read; refuse any other (a new or empty file passes).

    Another process upgrading the file holds its write lock for as long as the upgrade takes: this
    one waits for it (saying so, once), up to `UPGRADE_WAIT_S`, then finds the file upgraded.

    Raises:
        StoreSchemaError: The file holds sessions of another eve-py version, or stayed locked
            past `UPGRADE_WAIT_S`.
    """
    version, tables = _version(db)
    if "sessions" in tables and version in _UPGRADES:
        version, tables = _upgrade_when_free(db, path)
    if "sessions" in tables and version != SCHEMA_VERSION:
        raise StoreSchemaError(
            f"{path} holds sessions in store schema {version}, written by another eve-py version; this one "
            f"reads schema {SCHEMA_VERSION}. Use a new file (--store), or finish those sessions with the "
            "eve-py that wrote them."
        )


def _upgrade_when_free(db: sqlite3.Connection, path: Path) -> tuple[int, set[str]]:
    """`_upgrade` in one transaction (a failed upgrade keeps nothing), once no other process holds the file."""
    waited_since: float | None = None
    while True:
        tried = time.monotonic()
        try:
            return immediate(db, functools.partial(_upgrade, path=path))
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            now = time.monotonic()
            if now - tried < _RETRY_S:  # a connection with no busy timeout: pace the attempts
                time.sleep(_RETRY_S)
            if waited_since is None:
                waited_since = now
                _log.warning(
                    "%s is locked by another process, which may be upgrading it to store schema %d; waiting for it",
                    path,
                    SCHEMA_VERSION,
                )
            elif now - waited_since > UPGRADE_WAIT_S:
                raise StoreSchemaError(
                    f"{path} stayed locked by another process for {UPGRADE_WAIT_S:g} s while this one waited to "
                    f"upgrade it to store schema {SCHEMA_VERSION}; stop the other process, or try again"
                ) from exc


def _upgrade(db: sqlite3.Connection, path: Path) -> tuple[int, set[str]]:
    """Bring a file of a schema in `_UPGRADES` to this one, in the caller's transaction: (version, tables) then."""
    version, tables = _version(db)  # again, under the lock: another process may have upgraded it
    if version in _UPGRADES:
        for statement in _UPGRADES[version]:
            db.execute(statement)
        if "events" in tables:
            _merge_logs(db, path)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        version = SCHEMA_VERSION
    return version, tables


def _version(db: sqlite3.Connection) -> tuple[int, set[str]]:
    """The file's schema version and the names of its tables."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    return version, {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _merge_logs(db: sqlite3.Connection, path: Path) -> None:
    """Move the rows of schema 4-7's `events` and `messages` tables (a chunk per write and log) to `log`.

    An events chunk becomes a row without messages, its `message` -1; a messages chunk a row of
    messages only, its `event` below zero (`-1 - idx`): event reads start at the first event's row.

    Raises:
        StoreSchemaError: A stored chunk cannot be read (the caller rolls the upgrade back).
    """
    for statement in _LOG:
        db.execute(statement)
    insert = "INSERT INTO log (session, event, message, messages, chunk)"
    db.execute(f"{insert} SELECT session, idx, -1, 0, chunk FROM events")
    chunks = db.execute("SELECT session, idx, chunk FROM messages")  # read as they are moved: not all in memory
    try:
        db.executemany(
            f"{insert} VALUES (?, ?, ?, ?, ?)",
            ((session, -1 - idx, idx, decode(chunk).count("\n") + 1, chunk) for session, idx, chunk in chunks),
        )
    except ValueError as exc:  # a damaged chunk: the file is left as it was
        raise StoreSchemaError(
            f"cannot upgrade {path} to store schema {SCHEMA_VERSION}: a stored message chunk is unreadable ({exc})"
        ) from exc
    db.execute("DROP TABLE events")
    db.execute("DROP TABLE messages")
