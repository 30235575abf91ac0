"""Continue's doors in the format registry (``core/formats.py``): its session files are
rewritten whole (``Doors.whole``): each change is read whole, entries recognised by derived id."""

from __future__ import annotations

from typing import Any

from ...storage import AgentWriter
from ..common import Followed, ImportReport, NumberedLines
from ..format import Doors, FollowedFile
from ..whole import dump_carry, load_carry
from . import import_continue, import_session, is_transcript_name


def _follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
            report: ImportReport, memo: dict[str, Any]) -> Followed:
    done = import_session(db, found.agent, found.file, report, live=carry is not None,
                          mark=load_carry(carry).get("mark"))
    return Followed(None if done is None else dump_carry({"session": done[0], "mark": done[1]}))


DOORS = Doors(import_path=import_continue, follow=_follow, transcript=is_transcript_name,
              whole=True)
