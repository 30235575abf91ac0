"""The SQLite source kind: an agent that keeps its conversations in a SQLite database
(OpenCode, Kilo; later Cursor's editor, Goose, Crush, Zed, OpenClaw's own store) plugs in
here through its ``Doors.database`` (``format.Database``), and the sync machinery does the
rest alike for every one of them.

- **Read-only, always.** The database is opened through a ``file:…?mode=ro`` URI (never
  ``immutable=1`` while a ``-wal`` file exists: it would miss what sits there), with a busy
  timeout; nothing is written, nothing checkpointed, no file is created (``mode=ro`` refuses
  to make a missing database; a WAL database whose agent is closed, with no ``-wal``, is
  opened ``immutable`` so that no ``-wal``/``-shm`` is made beside it). The agent keeps
  writing while backscroll reads.
- **Change detection.** A database found by a scan carries a *combined* stat: its size and
  the ``-wal`` file's added, the later of their times (``combined_stat``). ``sync`` compares it
  with the file's state as for any transcript, so a database whose ``-wal`` alone grew is
  changed, and an unchanged one is only stat'ed (nothing opened, nothing read).
- **Watermarks.** What the last read got to is the format's own JSON (per table or per
  session), kept as the file's carry in its ``FileState.context``; ``read_new(path,
  watermark, report)`` returns each changed session's entries and the new watermark.
  Entries are stored by id (an entry stored before is not stored again).
- **Problems.** A locked, busy or half-written database is one sentence and is retried at the
  next sync (its state is not saved, ``DatabaseBusy``); a schema the reader does not know (a
  missing table or column) is one sentence naming it (``SchemaUnknown``), and the database is
  read again when it changes.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from ..errors import StoreError, ValidationError
from ..keys import normalize_key
from ..state import StateDir
from ..storage import AgentWriter
from .common import (
    Followed,
    ImportReport,
    NumberedLines,
    import_agent_id,
    import_path,
    store_converted,
)
from .format import Database, Doors, FollowedFile, SessionRead

__all__ = ["SessionRead", "follow_database", "open_readonly", "require_columns"]

BUSY_TIMEOUT_MS = 2000  # how long a read waits for the agent's writer before giving up


class DatabaseBusy(StoreError):
    """The database is locked or being written; read again at the next sync."""


class SchemaUnknown(ValidationError):
    """The database lacks a table or column its reader needs."""


def wal_path(path: Path | str) -> Path:
    return Path(f"{path}-wal")


def combined_stat(path: str, st: os.stat_result) -> os.stat_result:
    """``st`` (the database's own stat) with the ``-wal`` file's size added and the later of
    the two modification times: what the sync compares, so a write that lands only in the
    ``-wal`` makes the database changed."""
    try:
        wal = os.stat(wal_path(path))
    except OSError:
        return st
    size = st.st_size + wal.st_size
    mtime_ns = max(st.st_mtime_ns, wal.st_mtime_ns)
    fields = list(st[:10])
    fields[6] = size
    fields[8] = mtime_ns // 1_000_000_000
    return os.stat_result((*fields, st.st_atime, mtime_ns / 1e9, st.st_ctime, st.st_atime_ns,
                           mtime_ns, st.st_ctime_ns))


def tree_stat(storage: str, st: os.stat_result) -> os.stat_result:
    """A folder read like a database (``Database.trees``: files rewritten whole), as the
    sync compares it: the folder's identity, the total size of its files and the latest of
    their times (a file rewritten or added is a change; one removed leaves nothing to read)."""
    size, latest = 0, st.st_mtime_ns
    for folder, _dirs, names in os.walk(storage):
        for name in names:
            try:
                one = os.stat(os.path.join(folder, name), follow_symlinks=False)
            except OSError:
                continue
            size += one.st_size
            latest = max(latest, one.st_mtime_ns)
    fields = list(st[:10])
    fields[6] = size
    fields[8] = latest // 1_000_000_000
    return os.stat_result((*fields, st.st_atime, latest / 1e9, st.st_ctime, st.st_atime_ns,
                           latest, st.st_ctime_ns))


def open_readonly(path: Path | str) -> sqlite3.Connection:
    """A read-only connection to an agent's database (never created, never written)."""
    uri = "file:" + _uri_path(str(path)) + "?mode=ro"
    if _wal_mode(path) and not wal_path(path).exists():
        # The agent is closed and its -wal checkpointed away: everything is in the file. A
        # plain read-only open would make a -wal and a -shm beside it (and leave them);
        # ``immutable`` opens none. Should the agent start writing meanwhile, its writes go
        # to a new -wal (the next sync reads them: the -wal is part of the stat), and a
        # checkpoint under the read is a database "malformed" now: read again next sync.
        uri += "&immutable=1"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                               isolation_level=None, check_same_thread=False)
    except sqlite3.Error as err:
        raise busy_or_bad(path, err) from err
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error as err:
        conn.close()
        raise busy_or_bad(path, err) from err
    return conn


def _wal_mode(path: Path | str) -> bool:
    """The database's header says WAL mode (file format versions 2 at bytes 18 and 19)."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(20)
    except OSError:
        return False
    return len(header) == 20 and header[18] == 2 and header[19] == 2


def _uri_path(path: str) -> str:
    """A path as a ``file:`` URI's path (``?``, ``#`` and ``%`` escaped)."""
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")


def busy_or_bad(path: Path | str, err: sqlite3.Error) -> StoreError | ValidationError:
    """A SQLite error met reading ``path`` as one sentence: locked or busy (retried at the
    next sync) or a file that is not (yet) a readable database."""
    text = str(err)
    if isinstance(err, sqlite3.OperationalError) and ("locked" in text or "busy" in text
                                                       or "unable to open" in text):
        return DatabaseBusy(f"{path}: the database is busy or cannot be opened now ({text}); "
                            "read again at the next sync")
    if isinstance(err, sqlite3.DatabaseError) and ("malformed" in text or "not a database" in text
                                                   or "disk I/O" in text):
        return DatabaseBusy(f"{path}: the database cannot be read now ({text}: half-written "
                            "or damaged); read again at the next sync")
    return ValidationError(f"{path}: cannot be read as the agent's database ({text})")


@contextmanager
def read_snapshot(path: Path | str, tables: dict[str, tuple[str, ...]]
                  ) -> Iterator[tuple[sqlite3.Connection, dict[str, set[str]]]]:
    """A read-only connection to an agent's database (``open_readonly``) whose schema has the
    ``tables`` and columns its reader needs (``require_columns``), inside one read
    transaction: one snapshot while the agent may write meanwhile. Yields it with the columns
    each of ``tables`` has (optional ones are read where they exist)."""
    conn = open_readonly(path)
    try:
        columns = require_columns(conn, path, tables)
        conn.execute("BEGIN")
        try:
            yield conn, columns
        finally:
            conn.execute("COMMIT")
    finally:
        conn.close()


def require_columns(conn: sqlite3.Connection, path: Path | str,
                    tables: dict[str, tuple[str, ...]]) -> dict[str, set[str]]:
    """Raise ``SchemaUnknown`` naming the first table or column the reader needs that the
    database lacks; else the columns each table has."""
    found = {}
    for table, columns in tables.items():
        have = found[table] = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if not have:
            raise SchemaUnknown(f"{path}: no table {table!r}: not a database schema "
                                "backscroll knows")
        missing = [c for c in columns if c not in have]
        if missing:
            raise SchemaUnknown(f"{path}: table {table!r} has no column {missing[0]!r}: not a "
                                "database schema backscroll knows")
    return found


def load_watermark(carry: str | None) -> dict[str, Any] | None:
    """The watermark a file's carry holds (None: read from the start)."""
    if carry is None:
        return None
    try:
        value = json.loads(carry)
    except ValueError:
        return None  # written by another version: read again (entries match by id)
    return value if isinstance(value, dict) else None


def follow_database(db: AgentWriter, found: FollowedFile, carry: str | None,
                    report: ImportReport, door: Database,
                    deleted: frozenset[str] = frozenset()) -> Followed:
    """Take in what is new in a changed database: ``door.read_new`` from the watermark the
    last read left (``carry``), each session's entries stored (the first read like an
    import; later ones through the live path, searchable at once); the new watermark is the
    file's carry. A session deleted in backscroll (its key in ``deleted``) is not taken in
    again from this database, whatever the agent adds to it."""
    file = found.file
    watermark = load_watermark(carry)
    try:
        if door.store is not None:  # the format stores what it reads (and skips ``deleted``)
            report.deleted = deleted
            after = door.store(db, file, watermark, found.agent, report)
            return Followed(json.dumps(after, ensure_ascii=False, separators=(",", ":")))
        assert door.read_new is not None
        sessions, after = door.read_new(file, watermark, found.agent, report)
    except sqlite3.Error as err:
        raise busy_or_bad(file, err) from err
    for read in sessions:
        if normalize_key(read.meta.key) in deleted:
            continue
        store_converted(db, read.meta, read.events, report, file, live=watermark is not None)
    return Followed(json.dumps(after, ensure_ascii=False, separators=(",", ":")))


def import_whole_files(state: StateDir, agent_id: str, files: list[Path],
                       read_new: Callable[..., tuple[list, Any]]) -> ImportReport:
    """Read each file whole with ``read_new(file, None, agent_id, report)`` and store its
    sessions; a busy or unreadable file is skipped with its reason (a schema backscroll does
    not know: one sentence)."""
    report = ImportReport()
    with state.open(agent_id, write=True) as db, db.importing():
        for file in files:
            try:
                sessions, _after = read_new(file, None, agent_id, report)
            except sqlite3.Error as err:
                report.skip(file, None, str(busy_or_bad(file, err)))
                continue
            except ValidationError as err:
                report.skip(file, None, str(err).removeprefix(f"{file}: "))
                continue
            for one in sessions:
                store_converted(db, one.meta, one.events, report, file)
    return report


def database_importer(names: tuple[str, ...], trees: tuple[str, ...], read: Any, label: str,
                      default_agent: str) -> Callable[..., ImportReport]:
    """``backscroll import`` of a format whose transcripts are a database named one of
    ``names`` (or older trees of files, ``trees``) in a folder: the database (or the folder
    holding it) read whole with ``read``, its ``Database.read_new``, and stored."""

    def import_database(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
        path = import_path(path)
        databases = [path] if path.is_file() else [path / n for n in names
                                                    if (path / n).is_file()]
        if path.is_dir():
            databases += [path / t for t in trees if (path / t / "session").is_dir()]
        if not databases:
            raise ValidationError(f"{path} holds no {label} database (expected "
                                  f"{' or '.join(names + trees)} in it, or the database file itself)")
        return import_whole_files(state, import_agent_id(agent, default_agent), databases, read)

    return import_database


def database_doors(name: str, read: Any, label: str, default_agent: str,
                   trees: tuple[str, ...] = (), **more: Any) -> Doors:
    """The doors of a format whose transcripts are one SQLite database named ``name``, read
    from a watermark by ``read`` (its ``Database.read_new``); ``more``: its other doors."""
    return Doors(
        import_path=database_importer((name,), trees, read, label, default_agent),
        follow=not_followed,
        transcript=lambda file_name: file_name == name,
        database=Database((name,), read, trees),
        **more,
    )


def not_followed(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
                 report: ImportReport, memo: dict[str, Any]) -> Followed:
    """The ``follow`` door of a database format: never called (Cursor editor, Zed, OpenCode)."""
    raise AssertionError("a database is read from its watermark, not followed by lines")


def json_value(value: Any) -> Any:
    """A column's JSON (text or bytes) decoded, or None when it is not JSON."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None


def json_object(value: Any) -> dict[str, Any] | None:
    """A column's JSON object (text or bytes), or None when it is not one (OpenCode's ``data``,
    Cursor editor's ``cursorDiskKV`` values)."""
    data = json_value(value)
    return data if isinstance(data, dict) else None


def iso_ms(ms: Any) -> str | None:
    """A column's epoch milliseconds as an ISO time with milliseconds, ``Z`` for UTC; None
    for anything else (OpenCode, Crush)."""
    if not isinstance(ms, (int, float)) or isinstance(ms, bool) or not 0 < ms < 32503680000000:
        return None
    return datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat(
        timespec="milliseconds").replace("+00:00", "Z")
