"""What the tests of the SQLite-source formats (OpenCode, Cursor's editor, Zed, Goose, Crush)
share: a sync followed by indexing, a conversation's history, and the bytes an agent's database
holds (so a test proves backscroll wrote none of them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.reconcile import reconcile_all
from backscroll.core.sources.sync import sync_sources
from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR


def sync(state: StateDir):
    report = sync_sources(state)
    reconcile_all(state)
    return report


def history(state: StateDir, key: str, tools: bool = False) -> list[dict[str, Any]]:
    return sessions_history(state, HistoryRequest(key, include_tools=tools), OPERATOR).messages


def files_bytes(path: Path) -> dict[str, bytes]:
    """The database and its -wal (the -shm is the readers' shared index: every WAL reader
    takes a read mark there)."""
    return {p.name: p.read_bytes() for p in (path, Path(f"{path}-wal"))}
