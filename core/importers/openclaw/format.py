"""OpenClaw's doors in the format registry (``core/formats.py``).

Its transcripts sit in each agent's ``agents/<id>/sessions/`` folder beside the folder's
session store, ``sessions.json`` (keys, labels, links), which is read whole when it changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...storage import AgentWriter
from ..common import Followed, ImportReport, NumberedLines
from ..format import Doors, FollowedFile
from . import (
    StoreView,
    folder_agent_id,
    import_openclaw,
    is_transcript_name,
    read_store,
    session_folders,
)
from .follow import follow_openclaw, follow_store

STORE_NAME = "sessions.json"
DATABASES = ("*/agent/*.sqlite", "*/*.sqlite")  # under agents/: newer OpenClaw


def _view(found: FollowedFile, memo: dict[str, Any],
          report: ImportReport | None = None) -> StoreView:
    """The folder's session store, read once per sync of the folder; what reading it says (a
    key re-keyed to this agent, an unreadable store) goes to ``report``: the store's own
    sync, the time it changed."""
    views: dict[Path | None, StoreView] = memo.setdefault("openclaw.views", {})
    if found.folder not in views:
        report = report if report is not None else ImportReport()
        assert found.folder is not None  # found in a session folder
        store = read_store(found.folder / STORE_NAME, report, follow=False)
        views[found.folder] = StoreView.of(found.agent, store, report, found.folder)
    return views[found.folder]


def _follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
            report: ImportReport, memo: dict[str, Any]) -> Followed:
    return follow_openclaw(db, lambda: _view(found, memo), found.file, lines, carry, report)


def _follow_store(db: AgentWriter, found: FollowedFile, report: ImportReport,
                  deleted: frozenset[str], memo: dict[str, Any]) -> None:
    """``sessions.json`` changed: read whole, every time (and what it says, said then)."""
    memo.setdefault("openclaw.views", {}).pop(found.folder, None)
    follow_store(db, _view(found, memo, report), report, deleted)


def _source_notes(path: Path, found_files: bool) -> list[str]:
    """Newer OpenClaw keeps transcripts in a SQLite store backscroll does not read yet."""
    databases = sorted(p for pattern in DATABASES for p in (path / "agents").glob(pattern))
    if not databases:
        return []
    where = ", ".join(str(p) for p in databases[:3]) + (" …" if len(databases) > 3 else "")
    held = "also keeps" if found_files else "keeps"
    return [f"{path} {held} transcripts in OpenClaw's SQLite store ({where}), which "
            "backscroll does not read yet" + ("; its JSONL files are read" if found_files else "")]


DOORS = Doors(
    import_path=import_openclaw,
    # lines are stored verbatim: a helper process reads a big folder's files
    import_options={"read_ahead": True},
    follow=_follow,
    transcript=is_transcript_name,
    session_folders=session_folders,
    folder_agent=folder_agent_id,
    store_name=STORE_NAME,
    follow_store=_follow_store,
    source_notes=_source_notes,
)
