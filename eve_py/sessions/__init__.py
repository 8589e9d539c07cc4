"""Session storage: the `SessionStore` protocol, its record, the memory and SQLite stores, and a base for wrappers.

`PostgresSessionStore` lives in `eve_py.sessions.postgres` (the `postgres` extra).
"""

from eve_py.protocol.turns import SessionStatus, TurnState
from eve_py.sessions._forwarding import ForwardingStore
from eve_py.sessions._memory import MemorySessionStore
from eve_py.sessions._record import Lease, SessionRecord
from eve_py.sessions._sqlite import SQLiteSessionStore
from eve_py.sessions._store import SessionStore

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
