"""What the tests of the SQLite-source formats (OpenCode, Cursor's editor, Zed, Goose, Crush,
OpenClaw's store) and the benchmarks that build their databases share: the tool's side (a
writer connection held open in WAL mode), a sync followed by indexing, a conversation's
history, the bytes an agent's database holds (so a test proves backscroll wrote none of them),
the databases a sync opens, and a sync while the tool holds its database locked."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import pytest

from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR

from .fakehome import hits, sync

__all__ = ["history", "only_session", "opened_by", "sync", "sync_locked", "sync_reading_only",
           "tools_not_indexed", "unchanged_then_grown", "wal_writer", "files_bytes"]


def wal_writer(path: Path, schema: str, checkpoints: bool = False) -> sqlite3.Connection:
    """The tool's side: its database at ``path`` (the folder made), with ``schema``, and a
    writer connection it keeps open in WAL mode, as the tools keep theirs. Without
    ``checkpoints`` every write stays in the ``-wal`` (a test sees the reader take it there)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    if not checkpoints:
        conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.executescript(schema)
    return conn



def history(state: StateDir, key: str, tools: bool = False) -> list[dict[str, Any]]:
    return sessions_history(state, HistoryRequest(key, include_tools=tools), OPERATOR).messages


def only_session(state: StateDir, agent: str) -> tuple[Any, list[dict[str, Any]]]:
    """The agent's one session and its stored events."""
    with state.open(agent) as db:
        [session] = db.sessions()
        return session, [e for _, e in db.events(session.pk)]


def sync_reading_only(state: StateDir, path: Path) -> Any:
    """A sync (then indexing) that reads the tool's database at ``path``: its report; the
    database and its ``-wal`` are as they were (nothing written, nothing checkpointed)."""
    before = files_bytes(path)
    report = sync(state)
    assert files_bytes(path) == before
    return report


def files_bytes(path: Path) -> dict[str, bytes]:
    """The database and its -wal (the -shm is the readers' shared index: every WAL reader
    takes a read mark there)."""
    return {p.name: p.read_bytes() for p in (path, Path(f"{path}-wal"))}


def opened_by(monkeypatch: pytest.MonkeyPatch, *also: ModuleType) -> list[Path]:
    """The databases the SQLite source's readers open from now on (``read_snapshot``), and
    those ``also`` modules open with their own ``open_readonly`` (Cursor's workspace
    databases), in order."""
    from backscroll.core.importers import sqlite_source

    opened: list[Path] = []
    for module in (sqlite_source, *also):
        real = module.open_readonly
        monkeypatch.setattr(module, "open_readonly",
                            lambda path, real=real: opened.append(path) or real(path))
    return opened


def unchanged_then_grown(state: StateDir, monkeypatch: pytest.MonkeyPatch,
                         grow: Callable[[], object], *also: ModuleType) -> Any:
    """A sync with nothing new opens no database (``opened_by``, ``also``); after ``grow``
    (the tool writes), a sync reads the database once, without a problem: its report."""
    opened = opened_by(monkeypatch, *also)
    again = sync(state)  # no change: stat'ed, never opened
    assert (again.read, again.events, opened) == (0, 0, [])
    grow()
    grown = sync(state)
    assert (grown.read, grown.problems, len(opened)) == (1, [], 1)
    return grown


def sync_locked(state: StateDir, conn: sqlite3.Connection, change: str,
                monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str]]:
    """A sync while the tool holds its database in an exclusive transaction (``change``
    written in it), then one after it let go: the problems of each."""
    from backscroll.core.importers import sqlite_source

    monkeypatch.setattr(sqlite_source, "BUSY_TIMEOUT_MS", 20)
    conn.execute("PRAGMA locking_mode=EXCLUSIVE")
    conn.execute("BEGIN EXCLUSIVE")
    conn.execute(change)
    locked = sync(state).problems
    conn.execute("COMMIT")
    conn.execute("PRAGMA locking_mode=NORMAL")
    conn.execute("SELECT 1 FROM sqlite_master").fetchall()  # gives the lock back
    return locked, sync(state).problems


def tools_not_indexed(state: StateDir, key: str, shown: str,
                      hidden: tuple[str, ...] = ()) -> str:
    """The tests write a tool result with ``toolpangolin`` and reasoning with
    ``thinkingokapi``: both stored, neither searchable, nor any word of ``hidden``, while
    ``shown`` is; the history shows both with tools only. Returns that history (JSON)."""
    for word in ("thinkingokapi", "toolpangolin", *hidden):
        assert hits(state, word) == [], word
    assert hits(state, shown)
    with_tools = json.dumps(history(state, key, tools=True), ensure_ascii=False)
    assert "toolpangolin" in with_tools and "thinkingokapi" in with_tools
    assert "toolpangolin" not in json.dumps(history(state, key))
    return with_tools
