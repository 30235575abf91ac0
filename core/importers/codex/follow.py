"""Reading on in a rollout that grows (``backscroll sync`` / ``watch``): the lines after the
last sync are converted with the ``Carry`` the previous read left (the entry they hang from,
the model in force, line numbers going on), so a grown rollout is read from its offset and
yields exactly the entries a whole-file import gives them. The first read of a file is an
import of it."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from ...storage import AgentWriter, SessionMeta
from ..common import RESTART, Followed, ImportReport, NumberedLines, store_converted
from .convert import Carry, convert
from .importer import import_rollout
from .reading import Rollout, read_records
from .store import SOURCE


def follow_rollout(
    db: AgentWriter,
    agent_id: str,
    file: Path,
    lines: NumberedLines,
    carry: str | None,
    report: ImportReport,
) -> Followed:
    """Store what ``lines`` add: the whole file when ``carry`` is None, else the lines after
    the ones the carry was made from."""
    if carry is None:
        done = import_rollout(db, agent_id, file, report, lines)
        if done is None:
            return Followed()
        rollout, converted = done
        return Followed(_dumps(rollout.session_id, converted.carry))
    try:
        state = json.loads(carry)
        session_id = state.pop("sessionId")
        before = Carry(**state)
    except (ValueError, TypeError, KeyError, AttributeError):
        return RESTART  # written by another version: read the file again
    records = read_records(file, report, lines)
    converted = convert(Rollout(file, session_id, records, {}), before)
    meta = SessionMeta(key=f"agent:{agent_id}:codex:{session_id}", session_id=session_id,
                       source=SOURCE)
    store_converted(db, meta, converted.entries, report, file, live=True)
    return Followed(_dumps(session_id, converted.carry))


def _dumps(session_id: str, carry: Carry | None) -> str:
    return json.dumps({"sessionId": session_id, **asdict(carry or Carry())}, ensure_ascii=False,
                      separators=(",", ":"))
