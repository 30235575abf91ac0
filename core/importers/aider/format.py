"""Aider's doors in the format registry (``core/formats.py``). The chat history grows by
appends, but it is read whole each time it changes (``Doors.whole``): a run and its entries
have ids derived from position and content, so what is stored is recognised."""

from __future__ import annotations

from typing import Any

from ...storage import AgentWriter
from ..common import Followed, ImportReport, NumberedLines
from ..format import Doors, FollowedFile
from ..whole import dump_carry, load_carry
from . import import_aider, import_history, is_transcript_name


def _follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
            report: ImportReport, memo: dict[str, Any]) -> Followed:
    marks = load_carry(carry).get("runs")
    done = import_history(db, found.agent, found.file, report, live=carry is not None,
                          marks=marks if isinstance(marks, dict) else None)
    return Followed(dump_carry({"runs": done}))


DOORS = Doors(import_path=import_aider, follow=_follow, transcript=is_transcript_name,
              whole=True)
