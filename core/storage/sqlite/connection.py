"""Opening one agent's SQLite file: writers migrate it, readers never write to it.

A writer connection creates the folder (0700) and the file, sets WAL and brings the schema up
to date. A reader connection is opened ``mode=ro``: it never creates, migrates or changes a
file, and refuses one it cannot read in one sentence (empty, older or newer schema, not
SQLite). Every SQLite failure becomes a ``StoreError`` naming the file. ``KeptReaders`` keeps
reader connections open between uses for long-lived processes.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator
from urllib.parse import quote

from ...errors import StoreError
from .schema import SCHEMA_VERSION, migrate, refuse_newer

BUSY_TIMEOUT_S = 30.0
SECURE_DELETE = True  # writers zero what they free (docs/architecture.md; bench_delete.py)


class SchemaBehind(StoreError):
    """A reader met a database written by an older backscroll: a writer upgrades it."""


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
                conn.execute("PRAGMA foreign_keys = ON")
                # Freed pages are overwritten with zeros, so words of a deleted session (or
                # of index rows a rebuild replaced) never linger in free space.
                conn.execute(f"PRAGMA secure_delete = {'ON' if SECURE_DELETE else 'OFF'}")
                migrate(conn, str(path))
            else:
                _check_readable(conn, path)
        except BaseException:
            conn.close()
            raise
    return conn


def _check_readable(conn: sqlite3.Connection, path: Path) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    refuse_newer(version, str(path))
    if version == 0:
        raise StoreError(f"{path} holds no backscroll data yet (an empty or foreign database)")
    if version < SCHEMA_VERSION:
        raise SchemaBehind(
            f"{path} was written by an older backscroll (schema {version}); the next write "
            "or `backscroll reindex` upgrades it"
        )


@dataclass
class _Kept:
    conn: sqlite3.Connection
    identity: tuple[int, int]  # (device, inode) of the file it was opened on
    in_use: bool = False


class KeptReaders:
    """Read-only connections kept open between uses, one per thread and database.

    A long-lived process (the MCP server) then pays the open and its schema check once, not
    per call. A kept connection is used again only while nothing else in its thread uses it,
    its file is the same file (not deleted and made again), and its schema is still current;
    otherwise a fresh one is opened. Connections never cross threads; a thread's connections
    close when the thread ends. A copy sent to another process starts empty.
    """

    def __init__(self) -> None:
        self._local = threading.local()

    def __reduce__(self) -> tuple[type, tuple]:
        return (KeptReaders, ())

    def take(self, path: Path) -> tuple[sqlite3.Connection, Callable[[], None]]:
        """A reader connection for ``path`` and the function that gives it back."""
        kept: dict[Path, _Kept] = self._local.__dict__.setdefault("kept", {})
        entry = kept.get(path)
        if entry is not None and entry.in_use:  # a nested open: a connection of its own
            conn = connect(path, write=False)
            return conn, conn.close
        identity = _identity(path)
        if entry is not None and not (entry.identity == identity and _current(entry.conn)):
            del kept[path]
            entry.conn.close()
            entry = None
        if entry is None:
            entry = kept[path] = _Kept(connect(path, write=False), identity)
        entry.in_use = True
        return entry.conn, lambda: self._give_back(path, entry)

    def _give_back(self, path: Path, entry: _Kept) -> None:
        entry.in_use = False
        if entry.conn.in_transaction:  # left mid-read by an error: never keep a snapshot open
            try:
                entry.conn.execute("ROLLBACK")
            except sqlite3.Error:
                entry.conn.close()
                self._local.kept.pop(path, None)


def _identity(path: Path) -> tuple[int, int]:
    try:
        info = os.stat(path)
    except OSError as err:
        raise StoreError(f"cannot open {path}: {err.strerror or err}") from None
    return info.st_dev, info.st_ino


def _current(conn: sqlite3.Connection) -> bool:
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    except sqlite3.Error:
        return False
