"""`copy_sessions`: move every session of a SQLite store into another store (`eve-py store copy`).

Each session is copied whole: its record (status, parked step, answers, lease) and both logs,
event for event and message for message, so a parked session copied to PostgreSQL resumes
there as it would have in the file. Sessions the destination already holds are left as they
are and reported, so a copy that stopped halfway can simply be run again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio.to_thread

from eve_py.errors import SessionConflictError, UsageError
from eve_py.sessions._sqlite import SQLiteSessionStore
from eve_py.sessions._store import SessionStore

__all__ = ("CopyReport", "copy_sessions")


@dataclass
class CopyReport:
    """What a copy did: session ids copied, and those the destination held already."""

    copied: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


async def _session_ids(path: Path) -> list[str]:
    def read() -> list[str]:
        if not path.is_file():
            raise UsageError(f"{path} is not a SQLite store file")
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                return [str(row[0]) for row in db.execute("SELECT id FROM sessions ORDER BY rowid")]
        except sqlite3.DatabaseError as exc:
            raise UsageError(f"{path} is not a SQLite store file ({exc})") from None

    return await anyio.to_thread.run_sync(read)


async def copy_sessions(source: Path, destination: SessionStore) -> CopyReport:
    """Copy every session of the SQLite file `source` into `destination`.

    Each session takes two writes on the destination (its record with its events, then its
    messages); its version there starts again from 2.

    Raises:
        UsageError: `source` is not a SQLite store file.
        StoreSchemaError: `source` holds sessions of another eve-py version.
    """
    session_ids = await _session_ids(source)
    store = await SQLiteSessionStore.open(source)
    report = CopyReport()
    try:
        async for session_id, copied in _copy_each(store, destination, session_ids):
            (report.copied if copied else report.skipped).append(session_id)
    finally:
        await store.aclose()
    return report


async def _copy_each(
    source: SessionStore, destination: SessionStore, session_ids: list[str]
) -> AsyncIterator[tuple[str, bool]]:
    for session_id in session_ids:
        record = await source.load(session_id)
        events = await source.read_events(session_id)
        messages = await source.read_messages(session_id)
        try:
            created = await destination.create(record.model_copy(update={"message_count": 0}), events)
        except SessionConflictError:
            yield session_id, False
            continue
        await destination.commit(
            record.model_copy(update={"version": created.version, "event_count": len(events), "message_count": 0}),
            [],
            messages,
        )
        yield session_id, True
