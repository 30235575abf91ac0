"""Reading on in a Pi / Oh My Pi session being written (``backscroll sync`` / ``watch``): the
new lines are converted with the ``Carry`` the last read left (the entry a v1 line hangs from,
the derived ids of Pi's latest ids) and go through the live write path. A line whose parent
the carry does not hold (a branch from far back), and a rewritten file, are read whole again:
the derived ids recognise what is stored."""

from __future__ import annotations

import json
from pathlib import Path

from ...storage import AgentWriter
from ..common import RESTART, Followed, ImportReport, NumberedLines, store_converted
from ..openclaw import read_events
from . import Carry, convert, import_file, session_meta


def follow_pi(db: AgentWriter, agent_id: str, source: str, file: Path, lines: NumberedLines,
              carry: str | None, report: ImportReport) -> Followed:
    if carry is None:
        done = import_file(db, agent_id, source, file, report, lines)
        return Followed() if done is None else Followed(_dumps(*done))
    try:
        state = json.loads(carry)
        session_id = state["sessionId"]
        before = Carry(state.get("prev"), dict(state.get("ids") or {}))
    except (ValueError, TypeError, KeyError, AttributeError):
        return RESTART  # written by another version: read the file again
    meta = session_meta(agent_id, source, session_id, None, [])
    if db.session_key_of(session_id) is None:
        return RESTART  # deleted meanwhile
    _texts, events, _header = read_events(file, report, lines)
    converted = convert(events, before, file.parent)
    if not converted.complete:
        return RESTART
    store_converted(db, meta._replace(label=None, created_at=None, updated_at=None),
                    converted.entries, report, file, live=True)
    return Followed(_dumps(session_id, converted.carry))


def _dumps(session_id: str, carry: Carry) -> str:
    return json.dumps({"sessionId": session_id, "prev": carry.prev, "ids": carry.ids},
                      ensure_ascii=False, separators=(",", ":"))
