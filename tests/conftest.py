"""Shared test fixtures: the anyio backend, and the fixture apps' paths."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from eve_py.sessions import MemorySessionStore, SessionStore, SQLiteSessionStore
from eve_py.sessions.postgres import PostgresSessionStore
from tests.clock import clock as clock  # the fixture, for every test
from tests.postgres import PostgresServer, own_server

REPO = Path(__file__).resolve().parent.parent
HITL_APP = REPO / "fixtures" / "agent-tools-hitl"


PROVIDER_ENV = (
    "EVE_MODEL",
    "AI_GATEWAY_API_KEY",
    "AI_GATEWAY_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "EVE_IMPORT_TIMEOUT",
)
"""Variables that choose a real model or its key; no test may see the developer's own values."""


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove model keys and overrides, so no test reaches a real provider or depends on the shell."""
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One real PostgreSQL server for the session (Debian's `postgresql` package; scripts/test.sh installs it)."""
    with own_server() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A new database of its own for the test, migrated to eve-py's schema."""
    return postgres_server.database()


STORE_KINDS = ("memory", "sqlite", "postgres")


@pytest.fixture(params=STORE_KINDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    """A fresh session store of each kind: memory, a SQLite file, a PostgreSQL database."""
    made: SessionStore
    if request.param == "memory":
        made = MemorySessionStore()
    elif request.param == "sqlite":
        made = SQLiteSessionStore(tmp_path / "s.db")
    else:
        url = request.getfixturevalue("postgres_url")
        made = await PostgresSessionStore.open(url, max_size=2)
    try:
        yield made
    finally:
        await made.aclose()
