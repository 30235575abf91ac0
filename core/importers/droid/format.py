"""Factory Droid's doors in the format registry (``core/formats.py``)."""

from __future__ import annotations

from typing import Any

from ...storage import AgentWriter
from ..appended import follow_file
from ..common import Followed, ImportReport, NumberedLines
from ..format import Doors, FollowedFile
from .importer import READER, import_droid


def _follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
            report: ImportReport, memo: dict[str, Any]) -> Followed:
    return follow_file(db, found.agent, READER, found.file, lines, carry, report)


DOORS = Doors(
    import_path=import_droid,
    follow=_follow,
    transcript=lambda name: name.endswith(".jsonl"),
)
