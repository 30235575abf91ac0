"""One agent's handle on its SQLite file: the connection the reader and writer classes use.

A reader's connection is kept by its thread when closed and handed to the next reader of the
same file (still that file, still readable); opening and checking a connection is
``driver.py``'s. The same role as PostgreSQL's ``handle.py``.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from .driver import check_readable, connect, sqlite_errors


class _Idle(threading.local):
    """Read-only connections this thread finished with, by path, with the file they opened."""

    def __init__(self) -> None:
        self.readers: dict[str, tuple[tuple[int, ...], sqlite3.Connection]] = {}


_idle = _Idle()
READERS_KEPT = 8


def _identity(path: Path) -> tuple[int, ...]:
    """The file as last written outside SQLite's own log: another file, or this one
    rewritten (a checkpoint, a copy over it), is not the file a kept connection opened."""
    try:
        found = os.stat(path)
    except OSError:
        return (-1,)
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)


class Handle:
    """One connection to one agent's database; the reader and writer classes add methods.

    A reader's connection is kept by its thread when closed, and handed to the next reader of
    the same file (if it is still that file and still readable): searching again finds
    SQLite's page cache and prepared statements warm instead of opening the file anew.
    """

    def __init__(self, path: Path, agent_id: str, write: bool) -> None:
        self.path = path
        self.agent_id = agent_id
        self.write = write
        self.closed = False
        self.identity = _identity(path)
        kept = None if write else _idle.readers.pop(str(path), None)
        if kept is not None and kept[0] == self.identity:
            try:
                with sqlite_errors(path):
                    check_readable(kept[1], path)
            except BaseException:
                kept[1].close()
                raise
            self.conn = kept[1]
            return
        if kept is not None:
            kept[1].close()
        self.conn = connect(path, write)

    @property
    def location(self) -> str:
        return str(self.path)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.write or self.conn.in_transaction:
            self.conn.close()
            return
        readers = _idle.readers
        if len(readers) >= READERS_KEPT:
            readers.pop(next(iter(readers)))[1].close()
        previous = readers.pop(str(self.path), None)
        if previous is not None and previous[1] is not self.conn:
            previous[1].close()
        readers[str(self.path)] = (self.identity, self.conn)

    def __enter__(self):  # noqa: ANN204 - returns the concrete class
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
