"""The PostgreSQL store's statements and their parameters: each write is one statement.

`CREATE` inserts a session's row, `COMMIT` updates it where its `version` is still the write's
base (the compare-and-set); either one's returned key feeds the `INSERT`s of the write's events
and messages, and the statement notifies the `eve_events` channel when its `notify` parameter
is not empty. `RECORD` reads a session's record, `READ` (formatted with a log's table and
column) a range of its log.
"""

from __future__ import annotations

from typing import Any

from eve_py.sessions._feed import EVENTS_CHANNEL
from eve_py.sessions._record import SessionRecord

__all__ = ("COMMIT", "CREATE", "READ", "RECORD", "lazy_params", "log_params", "row_params")

# The events and messages of a write go in as one text each, their JSON joined by U+001E, which
# the server splits: one statement, whatever their number, and no array for psycopg to dump
# element by element in Python. JSON text never holds a raw U+001E (a control character is
# escaped inside strings and not allowed outside them). The text goes in binary (`%b`):
# psycopg's text format would escape every quote of it, in Python.
_SEPARATOR = "\x1e"
_APPEND = """
    {table}_rows AS (
        INSERT INTO eve_{table} (session, idx, {column})
        SELECT w.key, %({table}_first)s + t.n - 1, t.v
        FROM written w, unnest(string_to_array(%({table})b::text, E'\\x1e')) WITH ORDINALITY AS t (v, n)
    )"""
_NOTIFY = f"CASE WHEN %(notify)s <> '' THEN pg_notify('{EVENTS_CHANNEL}', %(notify)s) END"
# A write that need not wait for its WAL flush says so for its own transaction (the statement's):
# PostgreSQL reads the setting at commit, so no BEGIN, SET LOCAL and COMMIT of their own.
_LAZY = "CASE WHEN %(lazy)s THEN set_config('synchronous_commit', 'off', true) END"
CREATE = f"""
WITH written AS (
    INSERT INTO eve_sessions (id, version, status, updated_at, record, input_deadline)
    VALUES (%(id)s, %(version)s, %(status)s, %(updated_at)s, %(record)b, %(input_deadline)s)
    ON CONFLICT (id) DO NOTHING RETURNING key
), {_APPEND.format(table="events", column="event").strip()}
SELECT key, {_NOTIFY}, {_LAZY} FROM written
"""
COMMIT = f"""
WITH written AS (
    UPDATE eve_sessions SET version = %(version)s, status = %(status)s, updated_at = %(updated_at)s,
        record = %(record)b, input_deadline = %(input_deadline)s
    WHERE id = %(id)s AND version = %(base)s RETURNING key
), {_APPEND.format(table="events", column="event").strip()},
{_APPEND.format(table="messages", column="message").strip()}
SELECT key, {_NOTIFY}, {_LAZY} FROM written
"""
READ = """
SELECT l.{column} FROM eve_sessions s
LEFT JOIN eve_{table} l ON l.session = s.key AND l.idx >= %(start)s AND l.idx < %(stop)s
WHERE s.id = %(id)s ORDER BY l.idx
"""
RECORD = "SELECT record FROM eve_sessions WHERE id = %(id)s"


def row_params(record: SessionRecord) -> dict[str, Any]:
    """The session row's columns of `record`, for `CREATE` and `COMMIT`."""
    return {
        "id": record.id,
        "version": record.version,
        "status": record.status,
        "updated_at": record.updated_at,
        "record": record.to_json(),
        "input_deadline": record.input_deadline,
    }


def log_params(table: str, first: int, rows: list[str]) -> dict[str, Any]:
    """A log's new rows (`events` or `messages`, their JSON) from index `first` on."""
    return {table: _SEPARATOR.join(rows), f"{table}_first": first}


def lazy_params(durable: bool) -> dict[str, Any]:
    """Whether the write may be acknowledged before its WAL is flushed."""
    return {"lazy": not durable}
