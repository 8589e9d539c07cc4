"""Which store a command uses: `--store`, else `EVE_STORE`, else the app's SQLite file.

A store is named by one string: a `postgresql://` (or `postgres://`) URL picks the
`PostgresSessionStore` (the `postgres` extra), `memory` a `MemorySessionStore`, and a path a
SQLite file. A URL of any other scheme (`mysql://...`) is refused, not taken for a path.

A command's PostgreSQL store notifies other processes of its commits (`feed=True`): a command
that answers or continues a session shares the database with servers whose streams follow it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from eve_py.errors import UsageError
from eve_py.sessions._memory import MemorySessionStore
from eve_py.sessions._sqlite import SQLiteSessionStore
from eve_py.sessions._store import SessionStore

if TYPE_CHECKING:
    from eve_py.sessions.postgres import PostgresSessionStore

__all__ = ("STORE_ENV", "build_store", "is_postgres_url", "open_store", "store_spec", "url_scheme")

STORE_ENV = "EVE_STORE"

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def store_spec(given: str | Path | None, app_dir: Path) -> str:
    """The store a command uses: `given` (`--store`), else `$EVE_STORE`, else `APP_DIR/.eve/sessions.db`."""
    if given is not None and str(given):
        return str(given)
    return os.environ.get(STORE_ENV) or str(app_dir / ".eve" / "sessions.db")


def url_scheme(spec: str) -> str | None:
    """The scheme of `spec` if it is a URL (`postgresql`, `mysql`, ...), else None (a file's path)."""
    found = _URL.match(spec)
    return None if found is None else found.group(1)


def is_postgres_url(spec: str) -> bool:
    """Whether `spec` names a PostgreSQL database."""
    return spec.startswith(("postgresql://", "postgres://"))


def build_store(spec: str) -> SessionStore:
    """The store `spec` names, built without connecting (a PostgreSQL pool opens on first use).

    Raises:
        UsageError: A PostgreSQL URL without the `postgres` extra installed, or a URL of another scheme.
    """
    if is_postgres_url(spec):
        return _postgres()(spec, feed=True)
    if spec == "memory":
        return MemorySessionStore()
    _refuse_other_urls(spec)
    return SQLiteSessionStore(spec)


async def open_store(spec: str) -> SessionStore:
    """Open the store `spec` names and check its schema (SQLite's file is opened off the event loop).

    Raises:
        UsageError: A PostgreSQL URL without the `postgres` extra installed, or a URL of another scheme.
        StoreSchemaError: The database has no eve-py schema (run `eve-py store migrate URL`) or
            another version of it.
    """
    if is_postgres_url(spec):
        return await _postgres().open(spec, feed=True)
    if spec == "memory":
        return MemorySessionStore()
    _refuse_other_urls(spec)
    return await SQLiteSessionStore.open(spec)


def _refuse_other_urls(spec: str) -> None:
    """Refuse a URL of a scheme eve-py has no store for (it would otherwise become a file's path).

    Raises:
        UsageError: It is one; the message names the scheme only (the URL may hold a password).
    """
    scheme = url_scheme(spec)
    if scheme is not None:
        raise UsageError(
            f"no session store for URLs of scheme {scheme!r}: use a postgresql:// (or postgres://) URL, "
            "'memory', or a SQLite file's path"
        )


def _postgres() -> type[PostgresSessionStore]:
    try:
        from eve_py.sessions.postgres import PostgresSessionStore
    except ImportError as exc:
        raise UsageError(
            f"a PostgreSQL store needs the postgres extra: pip install 'eve-py[postgres]' ({exc})"
        ) from None
    return PostgresSessionStore
