"""OpenClaw's doors in the format registry (``core/formats.py``).

Its transcripts sit in each agent's ``agents/<id>/sessions/`` folder beside the folder's
session store, ``sessions.json`` (keys, labels, links), which is read whole when it changes.
Since release 2026.8 each agent keeps them in one SQLite store instead,
``agents/<id>/agent/openclaw-agent.sqlite`` (``store.py``): a database of the SQLite source
kind, read from the watermark its last read left (per window: the last ``seq``, its update
times, the cold archive read). A home with both layouts gives each conversation once: a
window and the JSONL file of the same session id are one session (found by its id, its
events by their entry ids).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...storage import AgentWriter
from ..common import Followed, ImportReport, NumberedLines
from ..format import Database, Doors, FollowedFile
from . import (
    StoreView,
    folder_agent_id,
    import_openclaw,
    is_transcript_name,
    read_store,
    session_folders,
    transcript_session_id,
)
from .follow import follow_openclaw, follow_store
from .store import STORE_NAME as DATABASE_NAME
from .store import find_stores, store_database, window_key

STORE_NAME = "sessions.json"


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


def _same_family(key: str, path: str, holder: str) -> bool:
    """An agent's SQLite store and a JSONL transcript in the same agent's ``sessions/``
    folder feed one session by design when the store holds that transcript's session under
    ``key``: a home migrated to the store keeps the transcripts it came from
    (``<id>.jsonl.deleted.<ts>``), whose entries the store's events repeat by id. Any other
    file naming a session the store holds is a claim (docs/sources.md)."""
    paths = [Path(path), Path(holder)]
    stores = [p for p in paths if p.name == DATABASE_NAME and p.parent.name == "agent"]
    files = [p for p in paths if is_transcript_name(p.name)]
    if len(stores) != 1 or len(files) != 1 or stores[0].parent.parent != files[0].parent.parent:
        return False
    session_id = transcript_session_id(files[0].name)
    node = window_key(stores[0], session_id)
    if node is None:
        return False
    agent = node.split(":")[1]
    return key in (node, *(f"agent:{agent}:{kind}:{session_id}".lower()
                           for kind in ("reset", "deleted", "import")))


def _locate(path: Path) -> list[tuple[Path, str | None]]:
    """Each agent's SQLite transcript store under a state dir (OpenClaw 2026.8 and later),
    with the agent its folder names."""
    return [(store, agent) for agent, store in find_stores(path)]


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
    same_family=_same_family,
    database=Database(names=(DATABASE_NAME,), locate=_locate, store=store_database),
)
