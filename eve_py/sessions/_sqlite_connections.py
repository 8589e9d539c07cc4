"""`Connections`: the SQLite store's connections to its file, and which thread runs each call.

Nothing here makes the event loop wait for a sync or a lock. A durable write is queued to the
store's writer thread (`eve_py.sessions._sqlite_writer`), which commits every write queued by
then in one transaction with one sync (group commit) and answers each caller after that sync.
What cannot wait runs on the loop at once, on a second connection that never waits for a lock,
never syncs and never checkpoints: loading a record, reading a short stretch of a log, and a
write that need not be synced (`durable=False`, or any write with `synchronous="NORMAL"`) when
the writer is idle; a busy writer gets the write queued instead, to ride with its next
transaction. Long log reads run in a worker thread on a connection of their own.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar

import anyio.to_thread

from eve_py.errors import StoreSchemaError
from eve_py.sessions._sqlite_schema import check_schema, connect, create_tables, immediate
from eve_py.sessions._sqlite_writer import GroupWriter

__all__ = ("Connections",)

_T = TypeVar("_T")

_CHECKPOINT_EVERY = 512
"""After this many writes on the loop's connection (which never checkpoints), the writer checkpoints."""


class Connections:
    """A SQLite store file's connections: the writer thread's, the loop's, and long readers'.

    Args:
        path: The database file; created (with its folder) if missing, upgraded if older.
        timeout_s: How long a write waits for another process's lock, in seconds.
        synchronous: `FULL` syncs every durable write; `NORMAL` syncs nothing.

    Raises:
        StoreSchemaError: The file is not a SQLite database, holds another eve-py's schema, or
            cannot be opened; it is left as it was.
    """

    def __init__(self, path: Path, timeout_s: float, synchronous: Literal["FULL", "NORMAL"]) -> None:
        self.path = path
        self._synchronous = synchronous
        self._timeout_s = timeout_s
        self._lock = threading.Lock()
        """Held by whoever writes: the writer thread for a batch, the loop for a write of its own."""
        self._db = connect(path, timeout_s)
        try:
            check_schema(self._db, path)  # before anything writes: a refused file stays as it was
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={synchronous}")
            create_tables(self._db)
            # The loop's connection: it never waits for a lock (timeout 0), never syncs, and
            # leaves checkpoints (which sync) to the worker connection's writes.
            self._quick = connect(path, 0.0)
        except sqlite3.Error as exc:  # "file is not a database", read-only, locked, ...
            self._db.close()
            raise StoreSchemaError(
                f"cannot use {path} as a session store ({exc}); name a new file or an eve-py store (--store)"
            ) from exc
        except BaseException:
            self._db.close()
            raise
        self._quick.execute("PRAGMA synchronous=NORMAL")
        self._quick.execute("PRAGMA wal_autocheckpoint=0")
        self._quick_lock = threading.Lock()
        self._quick_writes = 0
        self._writer = GroupWriter(self._db, self._lock, synchronous, f"eve-py sqlite writer {path.name}")
        self._readers: list[sqlite3.Connection] = []
        """Connections for long reads in worker threads, each used by one thread at a time."""

    async def read(self, fn: Callable[[sqlite3.Connection], _T], *, quick: bool = True) -> _T:
        """`fn(connection)` for a read: on the loop's connection if free (and `quick`), else in a worker thread.

        `fn` may be run twice (on the loop, then in the thread when it found the file locked):
        what it changes outside the database must be harmless to repeat, as the caches are.
        """
        if quick and self._quick_lock.acquire(blocking=False):
            try:
                return fn(self._quick)
            except sqlite3.OperationalError as exc:
                if not _busy(exc):
                    raise
            finally:
                self._quick_lock.release()

        def read() -> _T:
            db = self._readers.pop() if self._readers else connect(self.path, self._timeout_s)
            try:
                return fn(db)
            finally:
                self._readers.append(db)

        return await anyio.to_thread.run_sync(read)

    async def write(self, fn: Callable[[sqlite3.Connection], _T], *, durable: bool = True) -> _T:
        """Run `fn` in a `BEGIN IMMEDIATE` transaction: committed whole, or rolled back whole.

        A write that need not be synced runs on the loop when nobody else writes; any other is
        queued to the writer thread, which returns once its transaction is committed (and synced,
        when `durable` with `synchronous="FULL"`).
        """
        if (not durable or self._synchronous == "NORMAL") and self._lock.acquire(blocking=False):
            try:
                if self._quick_lock.acquire(blocking=False):
                    try:
                        return self._write_quick(fn)
                    except sqlite3.OperationalError as exc:
                        if not _busy(exc):  # locked by another process: queue it
                            raise
                    finally:
                        self._quick_lock.release()
            finally:
                self._lock.release()
        return await self._writer.run(fn, durable=durable)  # type: ignore[no-any-return]

    def _write_quick(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        result = immediate(self._quick, fn)
        self._quick_writes += 1
        if self._quick_writes % _CHECKPOINT_EVERY == 0:  # this connection never checkpoints: the writer does
            self._writer.post(_checkpoint)
        return result

    def close(self) -> None:
        """Finish the queued writes, then close every connection (blocking: call off the loop)."""
        self._writer.close()
        with self._lock, self._quick_lock:
            for db in (self._quick, self._db, *self._readers):
                db.close()


def _busy(exc: sqlite3.OperationalError) -> bool:
    """Whether `exc` says the file is locked (by another connection) rather than broken."""
    return exc.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _checkpoint(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA wal_checkpoint(PASSIVE)")
