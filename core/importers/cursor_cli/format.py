"""Cursor CLI's doors in the format registry (``core/formats.py``). Its transcripts sit in
``projects/<project>/agent-transcripts/<session id>/`` (and ``…/subagents/``): those are its
session folders, so the rest of Cursor's folder is never walked."""

from __future__ import annotations

from typing import Any

from ...storage import AgentWriter
from ..appended import follow_file
from ..common import Followed, ImportReport, NumberedLines
from ..format import Doors, FollowedFile
from .importer import READER, import_cursor_cli, transcript_folders


def _follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
            report: ImportReport, memo: dict[str, Any]) -> Followed:
    return follow_file(db, found.agent, READER, found.file, lines, carry, report)


DOORS = Doors(
    import_path=import_cursor_cli,
    follow=_follow,
    transcript=lambda name: name.endswith(".jsonl"),
    session_folders=transcript_folders,
)
