"""Zed's doors in the format registry (``core/formats.py``): its agent threads are one
SQLite database, ``threads.db``, read from a watermark (the SQLite source kind)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...storage import AgentWriter
from ..common import Followed, ImportReport, NumberedLines
from ..format import Database, Doors, FollowedFile
from ..opencode.importer import importer
from .reading import read_new


def _read(path: Path, watermark: dict[str, Any] | None, agent: str,
          report: ImportReport) -> Any:
    return read_new(path, watermark, agent, report)


def _follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
            report: ImportReport, memo: dict[str, Any]) -> Followed:
    raise AssertionError("a database is read from its watermark, not followed by lines")


DOORS = Doors(
    import_path=importer(("threads.db",), (), _read, "Zed", "zed"),
    follow=_follow,
    transcript=lambda name: name == "threads.db",
    database=Database(("threads.db",), _read),
)
