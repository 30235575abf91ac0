"""Cursor CLI's doors in the format registry (``core/formats.py``). Its transcripts sit in
``projects/<project>/agent-transcripts/<session id>/`` (and ``…/subagents/``): those are its
session folders, so the rest of Cursor's folder is never walked."""

from __future__ import annotations

from ..appended import follow_door
from ..format import Doors
from .importer import READER, import_cursor_cli, transcript_folders

DOORS = Doors(
    import_path=import_cursor_cli,
    follow=follow_door(READER),
    transcript=lambda name: name.endswith(".jsonl"),
    session_folders=transcript_folders,
)
