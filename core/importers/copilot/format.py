"""Copilot CLI's doors in the format registry (``core/formats.py``)."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from ...storage import AgentWriter, SessionMeta
from ..common import RESTART, Followed, ImportReport, NumberedLines, store_converted
from ..format import Doors, FollowedFile
from .convert import Carry, convert_events
from .importer import SOURCE, import_copilot, import_session_file, is_session_file, read_events


def _follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
            report: ImportReport, memo: dict[str, Any]) -> Followed:
    """``events.jsonl`` is appended to: its new lines are converted with the ``Carry`` the
    last read left (a first read imports the file). An older ``<id>.json`` is rewritten
    whole: read whole at each change, what is stored recognised by id."""
    file = found.file
    if file.name.endswith(".json"):
        import_session_file(db, found.agent, file, report, live=True)
        return Followed()
    if carry is None:
        done = import_session_file(db, found.agent, file, report, lines)
        return Followed(_dumps(*done)) if done and done[1] else Followed()
    try:
        state = json.loads(carry)
        session_id = state.pop("sessionId")
        before = Carry(**state)
    except (ValueError, TypeError, KeyError, AttributeError):
        return RESTART  # written by another version: read the file again
    converted, after = convert_events(session_id, read_events(file, report, lines), before)
    meta = SessionMeta(key=f"agent:{found.agent}:copilot:{session_id}", session_id=session_id,
                       source=SOURCE)
    store_converted(db, meta, converted.entries, report, file, live=True)
    return Followed(_dumps(session_id, after))


def _dumps(session_id: str, carry: Carry | None) -> str:
    return json.dumps({"sessionId": session_id, **asdict(carry or Carry())}, ensure_ascii=False,
                      separators=(",", ":"))


DOORS = Doors(
    import_path=import_copilot,
    follow=_follow,
    transcript=is_session_file,
)
