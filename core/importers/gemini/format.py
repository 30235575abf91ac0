"""Gemini CLI's doors in the format registry (``core/formats.py``)."""

from __future__ import annotations

from typing import Any

from ...storage import AgentWriter
from ..common import Followed, ImportReport, NumberedLines
from ..format import Doors, FollowedFile
from .importer import import_chat, import_gemini, is_chat, same_chat


def _follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
            report: ImportReport, memo: dict[str, Any]) -> Followed:
    """Every change is read from the start (no carry): a ``.json`` chat is rewritten whole, and
    a ``.jsonl`` record may patch or rewind any message before it; what is stored already is
    recognised by id, so only what is new is added."""
    whole = found.file.name.endswith(".json") or carry is not None  # lines not from the start
    import_chat(db, found.agent, found.file, report, None if whole else lines, live=True)
    return Followed()


DOORS = Doors(
    import_path=import_gemini,
    follow=_follow,
    transcript=is_chat,
    same_family=same_chat,
)
