"""Qwen Code's doors in the format registry (``core/formats.py``). Its chats sit in
``chats`` folders under the Qwen Code home (``projects/*/chats``, ``tmp/*/chats``): those are
its session folders, so nothing else under the home is walked."""

from __future__ import annotations

from typing import Any

from ...storage import AgentWriter
from ..appended import follow_file
from ..common import Followed, ImportReport, NumberedLines
from ..format import Doors, FollowedFile
from .importer import READER, chat_folders, import_qwen_code


def _follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
            report: ImportReport, memo: dict[str, Any]) -> Followed:
    return follow_file(db, found.agent, READER, found.file, lines, carry, report)


DOORS = Doors(
    import_path=import_qwen_code,
    follow=_follow,
    transcript=lambda name: name.endswith(".jsonl"),
    session_folders=chat_folders,
)
