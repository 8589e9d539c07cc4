"""A real PostgreSQL server for the tests: Debian's binaries, a throwaway data folder, a free loopback port.

`PostgresServer.start()` runs `initdb` and `pg_ctl start` (as the `postgres` user when the
tests run as root: PostgreSQL refuses to run as root) with settings for tests: no fsync, a
small shared memory, few connections' worth of everything. `database()` creates a database
from a template already migrated to eve-py's schema, so each test gets its own in a few ms.

Tests that take the server down (`restart`, `halt`, `resume`) start one of their own with
`own_server()`, never the session's shared one.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path

import anyio
import psycopg
import pytest

from eve_py.sessions.postgres import PostgresSessionStore, migrate

__all__ = ("PostgresServer", "fill", "free_port", "own_server", "postgres_bin")

TEMPLATE = "eve_migrated"


def postgres_bin() -> Path | None:
    """The newest `/usr/lib/postgresql/*/bin` holding `pg_ctl`, or None when PostgreSQL is not installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    """A loopback port nothing listens on (as of now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PostgresServer:
    """One PostgreSQL server on 127.0.0.1 for the whole test session."""

    bin: Path
    root: Path
    port: int = field(default_factory=free_port)
    _names: count[int] = field(default_factory=count)

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        # Output to a file, never a pipe: the server pg_ctl starts must not hold our pipe open.
        with open(self.root / "commands.log", "ab") as log:
            subprocess.run([*prefix, *command], check=True, stdout=log, stderr=log)

    def start(self) -> None:
        self.data.mkdir(parents=True)
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            for path in (self.root, self.data):
                os.chown(path, user.pw_uid, user.pw_gid)
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        self.resume()
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {TEMPLATE} TEMPLATE template0")
        # In a thread of its own: the fixture may be set up from inside a test's event loop.
        with ThreadPoolExecutor(1) as thread:
            thread.submit(anyio.run, migrate, self.url(TEMPLATE)).result()  # what every test database copies

    def database(self, *, migrated: bool = True) -> str:
        """A new, empty database's URL: migrated (copied from the template) or without any schema."""
        name = f"t{next(self._names)}"
        template = TEMPLATE if migrated else "template0"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
        return self.url(name)

    def resume(self) -> None:
        """Start the server (again, after `halt`); returns once it accepts connections."""
        options = f"-h 127.0.0.1 -p {self.port} -k {self.root} -F -c max_connections=60 -c shared_buffers=16MB"
        options += " -c full_page_writes=off -c synchronous_commit=off"
        self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w", "start"
        )

    def halt(self) -> None:
        """Stop the server as an operator does (`pg_ctl stop -m fast`): every connection is ended."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def restart(self) -> None:
        """`pg_ctl restart -m fast`: every connection is ended; returns once the server accepts new ones."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "restart")

    def password_role(self, name: str, password: str) -> None:
        """Create a login role that must give `password` over TCP (the other roles stay trusted)."""
        hba = self.data / "pg_hba.conf"
        hba.write_text(f"host all {name} 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(
                psycopg.sql.SQL("CREATE ROLE {} LOGIN SUPERUSER PASSWORD {}").format(
                    psycopg.sql.Identifier(name), psycopg.sql.Literal(password)
                )
            )
            conn.execute("SELECT pg_reload_conf()")

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    @classmethod
    def create(cls) -> PostgresServer | None:
        """A server in a new temporary folder (not started), or None without PostgreSQL's binaries."""
        found = postgres_bin()
        if found is None:
            return None
        root = Path(tempfile.mkdtemp(prefix="eve-pg-"))
        os.chmod(root, 0o755)
        return cls(found, root)


@contextmanager
def own_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server of the caller's own, stopped and removed afterwards; skips without the binaries."""
    server = PostgresServer.create()
    if server is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is not installed (apt-get install postgresql); scripts/test.sh installs it")
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def fill(store: PostgresSessionStore, count: int) -> None:
    """Check out `count` connections at once (so the pool holds that many), then give them all back."""
    out = 0
    all_out = anyio.Event()

    async def hold() -> None:
        nonlocal out
        async with store.connection() as conn:
            await conn.execute("SELECT 1")
            out += 1
            if out == count:
                all_out.set()
            await all_out.wait()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            for _ in range(count):
                group.start_soon(hold)
