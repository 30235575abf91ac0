"""Gemini CLI's doors in the format registry (``core/formats.py``)."""

from __future__ import annotations

import json
from typing import Any

from ...storage import AgentWriter, SessionMeta
from ..common import RESTART, Followed, ImportReport, NumberedLines, store_converted
from ..format import Doors, FollowedFile
from .convert import convert
from .importer import SOURCE, import_chat, import_gemini, is_chat, read_records, same_chat


def _follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
            report: ImportReport, memo: dict[str, Any]) -> Followed:
    """A ``.json`` chat is rewritten whole: read whole at each change (no carry), what is
    stored recognised by id. A ``.jsonl`` log is appended to (the CLI rewrites it whole only
    when it could not read it; then the sync reads it from the start): its new lines are
    converted with the carry the last read left, the current message list with each
    message's last entry."""
    file = found.file
    if file.name.endswith(".json"):
        import_chat(db, found.agent, file, report, live=True, whole=True)
        return Followed()
    if carry is None:
        done = import_chat(db, found.agent, file, report, lines, live=True)
        return Followed(_dumps(*done)) if done else Followed()
    try:
        state = json.loads(carry)
        session_id = state["sessionId"]
        listed = state["current"]
        if not isinstance(session_id, str) or not isinstance(listed, dict):
            raise TypeError("carry")
    except (ValueError, TypeError, KeyError):
        return RESTART  # written by another version: read the file again
    converted, after = convert(read_records(file, report, lines), listed)
    meta = SessionMeta(key=f"agent:{found.agent}:gemini:{session_id}", session_id=session_id,
                       source=SOURCE)
    store_converted(db, meta, converted.entries, report, file, live=True)
    return Followed(_dumps(session_id, after))


def _dumps(session_id: str, current: dict[str, str | None]) -> str:
    return json.dumps({"sessionId": session_id, "current": current}, ensure_ascii=False,
                      separators=(",", ":"))


DOORS = Doors(
    import_path=import_gemini,
    follow=_follow,
    transcript=is_chat,
    same_family=same_chat,
)
