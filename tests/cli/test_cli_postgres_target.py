"""A PostgreSQL `--store` that cannot be reached is one `error:` line within seconds, without its password.

A missing database, a wrong password or nothing listening: `eve-py serve`, `eve-py chat` and
`eve-py store copy` (run as real processes) say why at once and exit 2; they do not sit through
the connection pool's retries for half a minute, printing each of them.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import RunEve
from tests.postgres import PostgresServer, free_port, own_server

PASSWORD = "pw-right-4d2b"
WRONG = "pw-wrong-81fe"

COMMANDS = {
    "serve": ["serve", "{app}", "--model", "mock", "--port", "0", "--store", "{url}"],
    "chat": ["chat", "{app}", "--model", "mock", "--store", "{url}"],
    "store copy": ["store", "copy", "{sqlite}", "{url}"],
}


@pytest.fixture(scope="module")
def server() -> Iterator[PostgresServer]:
    with own_server() as server:
        server.password_role("eve_pw", PASSWORD)
        yield server


def target(server: PostgresServer, kind: str) -> tuple[str, str]:
    """A URL that cannot be used, and the cause the error line must name."""
    if kind == "missing database":
        return f"postgresql://postgres:{WRONG}@127.0.0.1:{server.port}/no_such_db", '"no_such_db" does not exist'
    if kind == "wrong password":
        return f"postgresql://eve_pw:{WRONG}@127.0.0.1:{server.port}/postgres", "password authentication failed"
    return f"postgresql://postgres:{WRONG}@127.0.0.1:{free_port()}/eve", "Connection refused"


def _starting_up(app: Path) -> float:
    """Seconds a process takes to start, import the CLI, the server and the PostgreSQL store, and load `app`."""
    script = (
        "import eve_py.cli, eve_py.server, eve_py.sessions.postgres, eve_py.agent as a, sys; a.load_agent(sys.argv[1])"
    )
    began = time.monotonic()
    subprocess.run([sys.executable, "-c", script, str(app)], check=True, capture_output=True, timeout=30)
    return time.monotonic() - began


@pytest.mark.parametrize("kind", ["missing database", "wrong password", "nothing listening"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_unusable_postgresql_store_is_one_error_line_within_seconds(
    command: str, kind: str, server: PostgresServer, eve: RunEve, hitl_app: Path, tmp_path: Path
) -> None:
    url, cause = target(server, kind)
    args = [a.format(app=hitl_app, url=url, sqlite=tmp_path / "sessions.db") for a in COMMANDS[command]]

    began = time.monotonic()
    done = eve(*args, input="")
    elapsed = time.monotonic() - began

    # What the command spends before it touches the store (the interpreter, the imports, loading the
    # app) is measured on its own: a loaded machine can take seconds over that alone. What is left
    # must stay under the store's 5 s wait for a connection, so waiting it out fails the test.
    giving_up = elapsed - _starting_up(hitl_app)
    assert giving_up < 4, f"{command} took {giving_up:.1f} s (of {elapsed:.1f} s) to give up"
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: cannot connect to postgresql://") and cause in lines[0]
    assert WRONG not in done.stderr + done.stdout


def test_the_right_password_is_accepted_and_never_shown(
    server: PostgresServer, eve: RunEve, hitl_app: Path, tmp_path: Path
) -> None:
    database = server.database(migrated=False).rsplit("/", 1)[1]
    url = f"postgresql://eve_pw:{PASSWORD}@127.0.0.1:{server.port}/{database}"
    sqlite = tmp_path / "sessions.db"
    assert eve("run", hitl_app, "hello", "--model", "mock", "--store", sqlite).returncode == 0

    migrated = eve("store", "migrate", url)
    copied = eve("store", "copy", sqlite, url)

    assert migrated.returncode == 0, migrated.stderr
    assert copied.returncode == 0, copied.stderr
    assert "copied 1 session(s)" in copied.stdout
    assert PASSWORD not in migrated.stdout + migrated.stderr + copied.stdout + copied.stderr
