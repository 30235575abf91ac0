"""OpenCode's doors in the format registry (``core/formats.py``): its transcripts are one
SQLite database, ``opencode.db``, read from a watermark (the SQLite source kind)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...storage import AgentWriter
from ..common import Followed, ImportReport, NumberedLines
from ..format import Database, Doors, FollowedFile
from .importer import importer
from .reading import read_new


def doors(database: str, source: str, label: str, default_agent: str) -> Doors:
    """The doors of a format with OpenCode's schema, its database named ``database``."""

    def read(path: Path, watermark: dict[str, Any] | None, agent: str,
             report: ImportReport) -> Any:
        return read_new(path, watermark, agent, report, source)

    def follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
               report: ImportReport, memo: dict[str, Any]) -> Followed:
        raise AssertionError("a database is read from its watermark, not followed by lines")

    return Doors(
        import_path=importer((database,), source, label, default_agent),
        follow=follow,
        transcript=lambda name: name == database,
        database=Database((database,), read),
    )


DOORS = doors("opencode.db", "opencode", "OpenCode", "opencode")
