"""Continue's doors in the format registry (``core/formats.py``): its session files are
rewritten whole (``Doors.whole``): each change is read whole, entries recognised by derived id."""

from __future__ import annotations

from typing import Any

from ...storage import AgentWriter
from ..common import Followed, ImportReport, NumberedLines
from ..format import Doors, FollowedFile
from . import import_continue, import_session, is_transcript_name


def _follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
            report: ImportReport, memo: dict[str, Any]) -> Followed:
    return Followed(import_session(db, found.agent, found.file, report, live=carry is not None))


DOORS = Doors(import_path=import_continue, follow=_follow, transcript=is_transcript_name,
              whole=True)
