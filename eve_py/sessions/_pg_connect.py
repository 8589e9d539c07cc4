"""Reaching PostgreSQL: the first connection's check, the pool's own check, and what a lost connection means.

Opening a store connects once, directly and with a deadline (`connect`), the way `eve-py store
migrate` does: a missing database, a wrong password or nothing listening is one line within
seconds, never psycopg_pool's retries for half a minute. The pool (`make_pool`) checks each
connection before handing it out (psycopg_pool's `check_connection`), so connections the server
closed meanwhile (a restart, an operator, an idle timeout) are replaced instead of failing a
request each. What no working connection comes of is `StoreUnavailableError` (`unavailable`).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import anyio
import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from eve_py.errors import StoreUnavailableError, UsageError

__all__ = (
    "CONNECT_S",
    "RETRIED",
    "connect",
    "connection_lost",
    "make_pool",
    "redact",
    "unavailable",
    "unreachable",
)

CONNECT_S = 4.0
"""How long opening a store waits for its first connection (an unanswered host, a slow TLS handshake)."""

RETRIED: ContextVar[bool] = ContextVar("eve_py_pg_retried", default=False)
"""True while a connection is checked out for a statement that is run again on a lost connection.

Such a statement finds a dead connection itself, at no extra cost (its caller drains the pool and
runs it once more), so the pool skips its check, a round trip to the server, for it."""

# SQLSTATEs of a connection the server ended: class 08 (connection exception), 57P01 admin
# shutdown (a fast stop or restart), 57P02 crash shutdown, 57P03 cannot connect now (starting up).
_LOST_STATES = ("08", "57P01", "57P02", "57P03")


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "the database"
    host, port, name, user = (str(info.get(k) or "") for k in ("host", "port", "dbname", "user"))
    return f"postgresql://{user + '@' if user else ''}{host}{':' + port if port else ''}/{name}"


def _cause(exc: BaseException, url: str) -> str:
    """psycopg's message on one line, with the URL's password (should libpq ever quote it) masked."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    try:
        password = str(psycopg.conninfo.conninfo_to_dict(url).get("password") or "")
    except psycopg.ProgrammingError:
        password = ""
    return text.replace(password, "***") if password else text


async def connect(url: str) -> psycopg.AsyncConnection[Any]:
    """One autocommit connection, outside any pool, within `CONNECT_S` seconds.

    Raises:
        UsageError: It cannot be made: one line naming the cause and the URL without its password.
    """
    try:
        with anyio.fail_after(CONNECT_S):
            return await psycopg.AsyncConnection.connect(url, autocommit=True)
    except TimeoutError:
        raise UsageError(f"cannot connect to {redact(url)}: no answer within {CONNECT_S:.0f} s") from None
    except psycopg.Error as exc:  # OperationalError, or a malformed URL's ProgrammingError
        raise UsageError(f"cannot connect to {redact(url)}: {_cause(exc, url)}") from None


def make_pool(url: str, *, min_size: int, max_size: int, timeout_s: float) -> AsyncConnectionPool[Any]:
    """An autocommit pool (not open yet) that checks each connection before handing it out.

    A connection that fails its check usually means the server restarted, and then every idle
    connection from before is dead too. psycopg_pool checks the next one after a growing pause
    (1 s, 2 s, ...), so a pool full of them would make the first request wait seconds or time
    out: the check drains the pool instead (`drain()`, psycopg_pool's own), which replaces them
    all at once, and the request waits only for the first new connection.

    While the server is down, the pool retries each connection with a growing pause too; it
    gives up after `timeout_s` (`reconnect_timeout`), and the next request asks for a new one at
    once. So once the server is back, a request waits at most a pause of a few seconds, never
    the minute an outage of minutes would have grown it to.

    A connection checked out while `RETRIED` is set is handed out unchecked.
    """
    pool: AsyncConnectionPool[Any]

    async def check(conn: psycopg.AsyncConnection[Any]) -> None:
        if RETRIED.get():
            return
        try:
            await AsyncConnectionPool.check_connection(conn)
        except psycopg.OperationalError:
            await pool.drain()
            raise

    pool = AsyncConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        open=False,
        kwargs={"autocommit": True},
        check=check,
        timeout=timeout_s,
        reconnect_timeout=timeout_s,
    )
    return pool


def connection_lost(exc: psycopg.OperationalError) -> bool:
    """Whether `exc` says the connection itself died (the server went away), not that a statement failed."""
    if isinstance(exc, PoolTimeout):
        return False
    state = exc.sqlstate
    return state is None or state.startswith(_LOST_STATES)


def unreachable(exc: psycopg.OperationalError) -> bool:
    """Whether `exc` means the database cannot be reached now: no connection came, or it died."""
    return isinstance(exc, PoolTimeout) or connection_lost(exc)


def unavailable(url: str, exc: BaseException) -> StoreUnavailableError:
    """The `StoreUnavailableError` for `exc`, naming the database without its password."""
    return StoreUnavailableError(f"cannot reach {redact(url)} (down or restarting?): {_cause(exc, url)}")
