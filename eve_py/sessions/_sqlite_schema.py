"""The SQLite store's file: its tables, its schema version, upgrading an older file, opening a connection.

The version is the database's `user_version` (7: keys used once; 6: each waiting session's first
deadline beside its record, and the store's secrets; 5: records stored against a base record). A
file of schema 4, 5 or 6 is upgraded in place when opened (columns and tables are added); one of
an earlier schema is refused with `StoreSchemaError` rather than read wrongly.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from eve_py.errors import StoreSchemaError

__all__ = ("SCHEMA_VERSION", "check_schema", "connect", "create_tables")

SCHEMA_VERSION = 7
"""The database's `user_version` this store writes and reads."""

_UPGRADES = {
    4: ("ALTER TABLE sessions ADD COLUMN base BLOB", "ALTER TABLE sessions ADD COLUMN deadline REAL"),
    5: ("ALTER TABLE sessions ADD COLUMN deadline REAL",),
    6: (),
}
"""What brings a file of an older schema to this one, by its version (its records read as they are:
no session of an older eve-py has a deadline). New tables and indexes come with `create_tables`."""

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS sessions (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    version INTEGER NOT NULL,
    status TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    record BLOB NOT NULL,
    base BLOB,
    deadline REAL
);
CREATE INDEX IF NOT EXISTS sessions_deadline ON sessions (deadline) WHERE deadline IS NOT NULL;
CREATE TABLE IF NOT EXISTS secrets (
    name TEXT PRIMARY KEY,
    value BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS once (
    key TEXT PRIMARY KEY,
    expires_at REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS once_expires_at ON once (expires_at);
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


def create_tables(db: sqlite3.Connection) -> None:
    """Create the tables a new file lacks (an existing file's are kept as they are)."""
    db.executescript(_SCHEMA)


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


def check_schema(db: sqlite3.Connection, path: Path) -> None:
    """Upgrade a file of an older schema this one can read; refuse any other (a new or empty file passes).

    Raises:
        StoreSchemaError: The file holds sessions of another eve-py version.
    """
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "sessions" in tables and version in _UPGRADES:
        db.execute("BEGIN IMMEDIATE")
        for statement in _UPGRADES[version]:
            db.execute(statement)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
        version = SCHEMA_VERSION
    if "sessions" in tables and version != SCHEMA_VERSION:
        raise StoreSchemaError(
            f"{path} holds sessions in store schema {version}, written by another eve-py version; this one "
            f"reads schema {SCHEMA_VERSION}. Use a new file (--store), or finish those sessions with the "
            "eve-py that wrote them."
        )
