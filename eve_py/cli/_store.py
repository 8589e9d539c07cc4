"""`eve-py store`: create or upgrade a PostgreSQL store's schema, and copy sessions into it.

```
eve-py store migrate URL      create or upgrade the eve-py schema (explicit, never implicit)
eve-py store copy FROM TO     copy every session of the SQLite file FROM into the store TO
```
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import anyio

from eve_py.errors import UsageError
from eve_py.sessions._copying import copy_sessions
from eve_py.sessions._opening import is_postgres_url, open_store, url_scheme

__all__ = ("add_store_parser", "run_store_command")


def add_store_parser(commands: Any) -> None:
    """Add the `store` subcommand (`migrate`, `copy`) to the CLI's subparsers."""
    store: argparse.ArgumentParser = commands.add_parser("store", help="set up a PostgreSQL store; copy sessions")
    actions = store.add_subparsers(dest="store_command", required=True, metavar="ACTION")
    migrate = actions.add_parser("migrate", help="create or upgrade the eve-py schema of a PostgreSQL database")
    migrate.add_argument("url", help="postgresql://user@host:5432/db")
    copy = actions.add_parser("copy", help="copy every session of a SQLite store into another store")
    copy.add_argument("source", help="the SQLite file to copy from")
    copy.add_argument("destination", help="the store to copy into: a postgresql:// URL (migrated) or a SQLite file")


def run_store_command(args: argparse.Namespace) -> int:
    """Run `eve-py store ...`; returns the exit code.

    Raises:
        UsageError: Not a PostgreSQL URL, the postgres extra is missing, the database is unreachable.
        StoreSchemaError: The destination's schema is missing or of another version.
    """
    if args.store_command == "migrate":
        return anyio.run(_migrate, args.url)
    return anyio.run(_copy, args.source, args.destination)


async def _migrate(url: str) -> int:
    if not is_postgres_url(url):
        raise UsageError(f"store migrate takes a postgresql:// URL (a SQLite file needs no migration), got {url!r}")
    try:
        from eve_py.sessions.postgres import migrate
    except ImportError as exc:
        raise UsageError(
            f"a PostgreSQL store needs the postgres extra: pip install 'eve-py[postgres]' ({exc})"
        ) from None
    import psycopg

    try:
        before, after = await migrate(url)
    except psycopg.OperationalError as exc:
        raise UsageError(f"cannot migrate the database: {exc}") from None
    if before == after:
        print(f"eve-py store schema {after}: up to date", flush=True)
    else:
        print(f"eve-py store schema {'none' if before is None else before} -> {after}", flush=True)
    return 0


async def _copy(source: str, destination: str) -> int:
    scheme = url_scheme(source)
    if scheme is not None:
        # Never taken as a path (it would name a file "postgresql:/..."); only the scheme is named,
        # as the URL may hold a password.
        raise UsageError(
            f"store copy reads from a SQLite file, and FROM is a {scheme}:// URL; "
            "copy out of PostgreSQL with pg_dump, or give the SQLite file to copy from"
        )
    store = await open_store(destination)
    try:
        report = await copy_sessions(Path(source), store)
    finally:
        await store.aclose()
    print(f"copied {len(report.copied)} session(s) from {source}", flush=True)
    if report.skipped:
        print(f"skipped {len(report.skipped)} the destination already holds: {', '.join(report.skipped)}", flush=True)
    return 0
