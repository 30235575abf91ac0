"""Goose's doors in the format registry (``core/formats.py``): the sessions folder holds the
database ``sessions.db`` (the SQLite source kind) and the older ``<name>.jsonl`` files, each
read whole when it changes (``Database.locate`` finds them all)."""

from __future__ import annotations

from pathlib import Path

from ...errors import ValidationError
from ...state import StateDir
from ...storage import AgentWriter
from ..common import Followed, ImportReport, NumberedLines, import_agent_id, import_path
from ..format import Database, Doors, FollowedFile
from ..sqlite_source import import_whole_files
from .reading import read_new

DATABASE = "sessions.db"


def locate(folder: Path) -> list[tuple[Path, str | None]]:
    """The database and the legacy ``.jsonl`` files at the top of the sessions folder."""
    found = [folder / DATABASE] if (folder / DATABASE).is_file() else []
    found += sorted(p for p in folder.glob("*.jsonl") if p.is_file())
    return [(p, None) for p in found]


def import_goose(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
    """``backscroll import goose PATH``: the sessions folder, ``sessions.db`` or one
    ``.jsonl``, read whole (read-only); what was stored before is recognised by id."""
    path = import_path(path)
    files = [p for p, _ in locate(path)] if path.is_dir() else [path]
    if not files:
        raise ValidationError(f"{path} holds no Goose sessions (expected {DATABASE} or "
                              "*.jsonl in it, or one of them itself)")
    agent_id = import_agent_id(agent, "goose")
    return import_whole_files(state, agent_id, files, read_new)


def follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
           report: ImportReport, memo: dict) -> Followed:
    raise AssertionError("Goose's files are read whole from the SQLite source kind")


def same_family(key: str, path: str, holder: str) -> bool:
    """The database and the legacy files beside it hold the same sessions (Goose imports the
    files and keeps them): entries are matched by a content-derived id, never stored twice."""
    return Path(path).parent == Path(holder).parent


DOORS = Doors(
    import_path=import_goose,
    follow=follow,
    transcript=lambda name: False,  # everything is found by ``locate``
    same_family=same_family,
    database=Database((DATABASE,), read_new, locate=locate),
)
