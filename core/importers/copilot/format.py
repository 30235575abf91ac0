"""Copilot CLI's doors in the format registry (``core/formats.py``)."""

from __future__ import annotations

from typing import Any

from ...storage import AgentWriter
from ..common import Followed, ImportReport, NumberedLines
from ..format import Doors, FollowedFile
from .importer import import_copilot, import_session_file, is_session_file


def _follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
            report: ImportReport, memo: dict[str, Any]) -> Followed:
    """Every change is read from the start (no carry, so ``sync`` hands the whole file): the
    entry ids are the events' own, made unique in file order, and what is stored already is
    recognised by id."""
    whole = found.file.name.endswith(".json") or carry is not None
    import_session_file(db, found.agent, found.file, report, None if whole else lines, live=True)
    return Followed()


DOORS = Doors(
    import_path=import_copilot,
    follow=_follow,
    transcript=is_session_file,
)
