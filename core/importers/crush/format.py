"""Crush's doors in the format registry (``core/formats.py``): one SQLite database per
project, ``<project>/.crush/crush.db``, found through the list Crush keeps in its data folder
(``projects.json``: ``{"projects": [{"path", "data_dir", "last_accessed"}]}``,
charmbracelet/crush ``internal/projects/projects.go``). Only listed projects are read; no
folder is walked to find others."""

from __future__ import annotations

import json
from pathlib import Path

from ...errors import ValidationError
from ...state import StateDir
from ...storage import AgentWriter
from ..common import Followed, ImportReport, NumberedLines, import_agent_id, import_path
from ..format import Database, Doors, FollowedFile
from ..sqlite_source import import_whole_files
from .reading import read_new

DATABASE = "crush.db"
PROJECTS = "projects.json"


def locate(folder: Path) -> list[tuple[Path, str | None]]:
    """The databases of the projects ``projects.json`` lists (an unreadable list: none)."""
    try:
        listing = json.loads((folder / PROJECTS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    projects = listing.get("projects") if isinstance(listing, dict) else None
    found: list[tuple[Path, str | None]] = []
    for project in projects if isinstance(projects, list) else []:
        if not isinstance(project, dict) or not isinstance(project.get("data_dir"), str):
            continue
        data_dir = Path(project["data_dir"]).expanduser()
        if data_dir.is_absolute() and (data_dir / DATABASE).is_file():
            found.append((data_dir / DATABASE, None))
    return sorted(set(found))


def import_crush(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
    """``backscroll import crush PATH``: a ``crush.db``, a project's ``.crush`` folder or the
    project itself, or Crush's data folder (its listed projects), read whole (read-only)."""
    path = import_path(path)
    if path.is_file():
        files = [path]
    else:
        files = [f for f in (path / DATABASE, path / ".crush" / DATABASE) if f.is_file()]
        files += [p for p, _ in locate(path)]
    if not files:
        raise ValidationError(f"{path} holds no Crush database (expected {DATABASE}, "
                              f".crush/{DATABASE} or {PROJECTS} in it, or the database itself)")
    agent_id = import_agent_id(agent, "crush")
    return import_whole_files(state, agent_id, files, read_new)


def follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
           report: ImportReport, memo: dict) -> Followed:
    raise AssertionError("Crush's databases are read from their watermark")


DOORS = Doors(
    import_path=import_crush,
    follow=follow,
    transcript=lambda name: False,  # the databases are found by ``locate``
    database=Database((DATABASE,), read_new, locate=locate, outside=True),
)
