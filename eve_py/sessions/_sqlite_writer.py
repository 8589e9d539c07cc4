"""`GroupWriter`: one thread that runs a SQLite store's writes, many at a time (group commit).

A durable write must not return before the WAL is synced, and the event loop must never wait
for a sync. So writes are queued to one thread per store. The thread takes every write queued
by the time it is free, runs them in one `BEGIN IMMEDIATE` transaction (each in a savepoint, so
that one write's conflict leaves the others standing), commits once, and only then answers each
caller: concurrent commits share one transaction and one sync, as in PostgreSQL's group commit,
and none is acknowledged before the sync that keeps it. While the thread syncs one batch, the
next one queues up behind it, so the busier the store, the more writes share a sync.

The thread holds the store's lock while it runs a batch; a write on the event loop (one that
need not be synced) takes that lock only if it is free, and queues otherwise. A batch's callers
are woken with one call into their event loop, not one each (each is a write to the loop's
wake-up pipe).
"""

from __future__ import annotations

import functools
import queue
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import anyio.lowlevel

__all__ = ("GroupWriter",)

_MAX_BATCH = 256
"""The most writes one transaction takes (a bound on how long the lock is held)."""


@dataclass(slots=True)
class _Job:
    fn: Callable[[sqlite3.Connection], Any]
    durable: bool
    transaction: bool
    call_soon: Callable[[Callable[[], object]], object] | None
    """The waiting loop's thread-safe `call_soon` (None: nobody waits)."""
    wake: Callable[[], object] | None
    """Called in the waiting loop once `outcome` is set."""
    outcome: tuple[Any, BaseException | None] = field(default=(None, None))


class GroupWriter:
    """Runs writes on `db` in a thread of its own, those queued together in one transaction.

    Args:
        db: The connection the thread owns (autocommit mode; nothing else may use it).
        lock: Held by the thread while it runs a batch (the store's lock on writing).
        synchronous: The store's setting: `FULL` syncs a batch that holds a durable write.
        name: The thread's name.
    """

    def __init__(
        self, db: sqlite3.Connection, lock: threading.Lock, synchronous: Literal["FULL", "NORMAL"], name: str
    ) -> None:
        self._db = db
        self._lock = lock
        self._synchronous = synchronous
        self._mode = synchronous
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._name = name
        self._started = threading.Lock()
        self.batches = 0
        """Transactions committed so far (with `writes`: how well writes are grouped)."""
        self.writes = 0

    async def run(self, fn: Callable[[sqlite3.Connection], Any], *, durable: bool, transaction: bool = True) -> Any:
        """`fn(connection)` in the writer thread, inside a transaction shared with other queued writes.

        Returns once the transaction is committed (and synced, when `durable` on a `FULL` store);
        a cancelled caller still waits for that (cancellation takes effect right after), so a
        write is never left running behind a caller that gave up on it. `fn`'s
        exception is raised here, and rolls back `fn`'s own changes only. `transaction=False`
        runs `fn` alone, outside any transaction (a checkpoint).
        """
        native = anyio.lowlevel.current_token().native_token  # asyncio: the loop; trio: its token
        call_soon = getattr(native, "call_soon_threadsafe", None) or native.run_sync_soon  # type: ignore[attr-defined]
        done = anyio.Event()
        job = _Job(fn, durable, transaction, call_soon, done.set)
        self._submit(job)
        with anyio.CancelScope(shield=True):  # the write may be committing: let it finish first
            await done.wait()
        result, error = job.outcome
        if error is not None:
            raise error
        return result

    def post(self, fn: Callable[[sqlite3.Connection], Any]) -> None:
        """Queue `fn(connection)` to run alone, outside any transaction, with nobody waiting (a checkpoint)."""
        self._submit(_Job(fn, False, False, None, None))

    def close(self) -> None:
        """Stop the thread once the writes queued before this call are done (blocking: call off the loop)."""
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join()

    def _submit(self, job: _Job) -> None:
        if self._thread is None:
            with self._started:
                if self._thread is None:
                    thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
                    thread.start()
                    self._thread = thread
        self._queue.put(job)

    def _serve(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            jobs = [job]
            stop = False
            while len(jobs) < _MAX_BATCH and job.transaction:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                if not more.transaction:  # run alone, after this batch
                    self._run_batch(jobs)
                    jobs = [more]
                    break
                jobs.append(more)
            self._run_batch(jobs)
            if stop:
                return

    def _run_batch(self, jobs: list[_Job]) -> None:
        with self._lock:
            try:
                if not jobs[0].transaction:
                    jobs[0].outcome = (jobs[0].fn(self._db), None)
                else:
                    self._transaction(jobs)
            except BaseException as exc:  # nothing of the batch was committed
                for job in jobs:
                    job.outcome = (None, exc)
        _answer(jobs)

    def _transaction(self, jobs: list[_Job]) -> None:
        """Run `jobs` in one transaction; each job's outcome is set (the batch's error is raised)."""
        db = self._db
        mode = self._synchronous if any(job.durable for job in jobs) else "NORMAL"
        if mode != self._mode:  # a connection setting, changed between transactions only
            db.execute(f"PRAGMA synchronous={mode}")
            self._mode = mode
        db.execute("BEGIN IMMEDIATE")
        try:
            if len(jobs) == 1:  # no savepoint needed: a failed write rolls the transaction back
                try:
                    jobs[0].outcome = (jobs[0].fn(db), None)
                except Exception as exc:
                    jobs[0].outcome = (None, exc)
            else:
                for job in jobs:
                    db.execute("SAVEPOINT write")
                    try:
                        job.outcome = (job.fn(db), None)
                    except Exception as exc:
                        db.execute("ROLLBACK TO write")
                        job.outcome = (None, exc)
                    db.execute("RELEASE write")
            failed = len(jobs) == 1 and jobs[0].outcome[1] is not None
            if db.in_transaction:
                db.execute("ROLLBACK" if failed else "COMMIT")
        except BaseException:
            if db.in_transaction:  # a failed COMMIT (busy, I/O) leaves it open, holding the lock
                db.execute("ROLLBACK")
            raise
        self.batches += 1
        self.writes += len(jobs)


def _answer(jobs: list[_Job]) -> None:
    """Wake each job's caller: one call into each waiting loop for all of its jobs."""
    waiting: dict[Callable[[Callable[[], object]], object], list[Callable[[], object]]] = {}
    for job in jobs:
        if job.call_soon is not None and job.wake is not None:
            waiting.setdefault(job.call_soon, []).append(job.wake)
    for call_soon, wakes in waiting.items():
        try:
            call_soon(wakes[0] if len(wakes) == 1 else functools.partial(_call_each, wakes))
        except RuntimeError:  # the loop was closed: nobody waits any more
            pass


def _call_each(wakes: list[Callable[[], object]]) -> None:
    for wake in wakes:
        wake()
