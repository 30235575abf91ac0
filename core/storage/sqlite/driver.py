"""Connections to one agent's SQLite file: writers migrate it, readers never write to it.

A writer connection creates the folder (0700) and the file, sets WAL and brings the schema up
to date. A reader connection is opened ``mode=ro``: it never creates, migrates or changes a
file, and refuses one it cannot read in one sentence (empty, older or newer schema, not
SQLite). Every SQLite failure becomes a ``StoreError`` naming the file (``sqlite_errors``).
The same job as PostgreSQL's ``driver.py``; the per-agent handle that holds a connection is
``handle.py`` on both backends.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator
from urllib.parse import quote

from ...errors import StoreError
from ..interface import SchemaBehind
from .schema import check, is_readable, migrate, recorded

BUSY_TIMEOUT_S = 30.0
SECURE_DELETE = True  # writers zero what they free (docs/architecture.md; bench_delete.py)


@contextmanager
def sqlite_errors(path: Path) -> Iterator[None]:
    """Turn SQLite failures into one sentence naming the database."""
    try:
        yield
    except sqlite3.OperationalError as err:
        text = str(err)
        if "locked" in text or "busy" in text:
            raise StoreError(f"{path} stayed locked by another process; try again") from None
        if "unable to open" in text or "readonly" in text or "read-only" in text:
            raise StoreError(f"cannot open {path} for writing ({text})") from None
        if "disk I/O" in text or "full" in text:
            raise StoreError(f"cannot write {path}: {text}") from None
        raise StoreError(f"{path}: {text}") from None
    except sqlite3.DatabaseError as err:
        raise StoreError(f"{path} is not a usable backscroll database ({err})") from None


WRITER_CACHE_KIB = 64 * 1024


def connect(path: Path, write: bool) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), checked or migrated."""
    with sqlite_errors(path):
        if write:
            conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        else:
            uri = f"file:{quote(str(path))}?mode=ro"
            conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            if write:
                if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                # A rebuild's transaction dirties more than SQLite's default 2 MB of pages (FTS5
                # segments and their merges): spilled mid-transaction, they were written and read
                # back; 64 MB took a quarter off reconciling a million messages. It is a
                # ceiling: a writer that touches few pages holds few.
                conn.execute(f"PRAGMA cache_size = -{WRITER_CACHE_KIB}")
                conn.execute("PRAGMA foreign_keys = ON")
                # Freed pages are overwritten with zeros, so words of a deleted session (or
                # of index rows a rebuild replaced) never linger in free space.
                conn.execute(f"PRAGMA secure_delete = {'ON' if SECURE_DELETE else 'OFF'}")
                migrate(conn, str(path))
            else:
                check_readable(conn, path)
        except BaseException:
            conn.close()
            raise
    return conn


def check_readable(conn: sqlite3.Connection, path: Path) -> None:
    state = recorded(conn)
    done = check(state, str(path))
    if state.version == 0:
        raise StoreError(f"{path} holds no backscroll data yet (an empty or foreign database)")
    if not is_readable(done):
        raise SchemaBehind(
            f"{path} was written by an older backscroll (schema {state.version}); the next write "
            "or `backscroll reindex` upgrades it"
        )
