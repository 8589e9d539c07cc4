"""Session storage: the `SessionStore` protocol, its record, the memory and SQLite stores, and a base for wrappers.

`PostgresSessionStore` lives in `eve_py.sessions.postgres` (the `postgres` extra).
"""

from eve_py.sessions.forwarding import ForwardingStore
from eve_py.sessions.memory import MemorySessionStore
from eve_py.sessions.record import Lease, SessionRecord, SessionStatus, TurnState
from eve_py.sessions.sqlite import SQLiteSessionStore
from eve_py.sessions.store import SessionStore

__all__ = (
    "ForwardingStore",
    "Lease",
    "MemorySessionStore",
    "SQLiteSessionStore",
    "SessionRecord",
    "SessionStatus",
    "SessionStore",
    "TurnState",
)
