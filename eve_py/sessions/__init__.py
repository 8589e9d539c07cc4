"""Session storage: the `SessionStore` protocol, its record, and the memory and SQLite stores."""

from eve_py.sessions.memory import MemorySessionStore
from eve_py.sessions.record import Lease, SessionRecord, SessionStatus, TurnState
from eve_py.sessions.sqlite import SQLiteSessionStore
from eve_py.sessions.store import SessionStore

__all__ = (
    "Lease",
    "MemorySessionStore",
    "SQLiteSessionStore",
    "SessionRecord",
    "SessionStatus",
    "SessionStore",
    "TurnState",
)
