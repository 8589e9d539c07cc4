"""The PostgreSQL store's connections: the pool, one permit per connection, and the connections kept between statements.

A statement of the store's own takes a connection (`take`) and gives it back (`give`). Between
statements the store keeps it, with its cursor, instead of checking it into the pool and out
again: that costs a statement 20-40 µs of CPU (the pool's lock and bookkeeping, the connection's
`commit` on leaving its block), and a new cursor 10-40 more. A kept connection goes back to the
pool after `KEEP_S` (the pool's lifetime and idle rules then apply to it), when it broke or is
left in a transaction, and before the pool drains or closes. Callers beyond `max_size` queue on
a semaphore, at the cost of a future each, instead of in the pool, whose waiting clients cost a
task, a timer and a condition each (a sixth of the client's CPU with 64 sessions at once).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import psycopg
from psycopg_pool import PoolTimeout

from eve_py.sessions._pg_connect import make_pool

__all__ = ("KEEP_S", "Connections", "Held")

KEEP_S = 30.0
"""How long the store keeps a connection it took from the pool, from one statement to the next."""

_IDLE = psycopg.pq.TransactionStatus.IDLE

Held = tuple[psycopg.AsyncConnection[Any], psycopg.AsyncCursor[Any], float]
"""A connection `take` handed out, its cursor, and when it goes back to the pool (`time.monotonic`)."""


class Connections:
    """An autocommit pool (opened on first use) with at most `max_size` connections out at once."""

    def __init__(self, url: str, *, min_size: int, max_size: int, timeout_s: float) -> None:
        self.pool = make_pool(url, min_size=min_size, max_size=max_size, timeout_s=timeout_s)
        self._opened = False
        self._timeout_s = timeout_s
        self._free = anyio.Semaphore(max_size, fast_acquire=True)
        self._idle: list[Held] = []

    @asynccontextmanager
    async def checked_out(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A connection checked by the pool as it is handed out, within `timeout_s` (`PoolTimeout` otherwise)."""
        timeout_s = await self._permit()
        try:
            if self._idle:  # the pool may have none left but the ones kept here
                await self.pool.putconn(self._idle.pop()[0])
            async with self.pool.connection(timeout=timeout_s) as conn:
                yield conn
        finally:
            self._free.release()

    async def take(self) -> Held:
        """A connection for one of the store's statements, unchecked (see `RETRIED`): a kept one, or the pool's.

        Raises:
            PoolTimeout: None came free within `timeout_s`.
        """
        timeout_s = await self._permit()
        if self._idle:
            return self._idle.pop()
        try:
            conn = await self.pool.getconn(timeout=timeout_s)
        except BaseException:
            self._free.release()
            raise
        return conn, conn.cursor(), time.monotonic() + KEEP_S

    async def give(self, held: Held) -> None:
        """Keep a connection `take` handed out for the next statement, or give it back to the pool
        (broken, left in a transaction, or kept `KEEP_S`)."""
        conn, _, until = held
        try:
            if conn.broken or conn.pgconn.transaction_status != _IDLE or time.monotonic() > until:
                await self.pool.putconn(conn)
            else:
                self._idle.append(held)
        finally:
            self._free.release()

    async def drain(self) -> None:
        """Replace every connection (the server went away, so every idle one from before is dead too)."""
        await self._give_back_idle()
        await self.pool.drain()

    async def close(self) -> None:
        """Close every connection, if the pool was ever opened."""
        if self._opened:
            await self._give_back_idle()
            await self.pool.close()

    async def _give_back_idle(self) -> None:
        idle, self._idle = self._idle, []
        for conn, _, _ in idle:
            await self.pool.putconn(conn)

    async def _permit(self) -> float:
        """Wait for one of the `max_size` permits; returns what is left of `timeout_s` (`PoolTimeout` if nothing)."""
        if not self._opened:
            self._opened = True
            await self.pool.open()  # without waiting: a request waits for its connection, up to timeout_s
        timeout_s = self._timeout_s
        try:
            self._free.acquire_nowait()
        except anyio.WouldBlock:
            started = time.monotonic()
            with anyio.move_on_after(timeout_s) as waiting:
                await self._free.acquire()
            if waiting.cancelled_caught:
                raise PoolTimeout(f"no connection came free within {timeout_s:.2f} s") from None
            timeout_s = max(timeout_s - (time.monotonic() - started), 0.001)  # the pool refuses 0
        return timeout_s
