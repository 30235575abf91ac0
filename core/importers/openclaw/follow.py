"""Reading on in OpenClaw transcripts being written (``backscroll sync`` / ``watch``).

OpenClaw lines are stored verbatim, so the lines after the last sync are the new events: they
go through the live write path into the session the file fed (found by its session id, so a
key ``sessions.json`` gave it later still finds it). The first read of a file is an import of
it. A changed ``sessions.json`` creates the sessions it names that are not stored yet and
brings the links and labels of stored ones up to date.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from ...keys import normalize_key
from ...storage import AgentWriter, SessionMeta
from ..common import RESTART, Followed, ImportReport, NumberedLines, note_rekeyed, store_live
from . import StoreView, import_transcript, read_events


def follow_openclaw(
    db: AgentWriter,
    view: Callable[[], StoreView],
    file: Path,
    lines: NumberedLines,
    carry: str | None,
    report: ImportReport,
) -> Followed:
    """Store what ``lines`` add: the whole file when ``carry`` is None (``view`` gives the
    folder's session store, read only then), else the lines after the ones read before."""
    if carry is None:
        session_id = import_transcript(db, view(), file, report, lines)
        return Followed(json.dumps({"sessionId": session_id}))
    try:
        session_id = json.loads(carry)["sessionId"]
    except (ValueError, TypeError, KeyError):
        return RESTART
    key = db.session_key_of(session_id)
    if key is None:  # deleted meanwhile: read again, without the lines it was read from
        return RESTART  # (``sources/deleted.py``), so the session opens on what is new
    texts, events, _header = read_events(file, report, lines)
    store_live(db, SessionMeta(key, session_id, source="openclaw"), texts, events, report)
    return Followed(carry)


def follow_store(db: AgentWriter, view: StoreView, report: ImportReport,
                 deleted: frozenset[str] = frozenset()) -> None:
    """The folder's ``sessions.json`` changed: sessions it names and the database lacks are
    created (without messages until their transcript is read), but not those ``deleted``
    (their transcript's next line opens them again); stored ones follow its links, labels,
    and its key for one stored under a placeholder."""
    for key, entry in view.store.items():
        meta = view.meta_of(key, entry)
        if meta.session_id and db.session_key_of(meta.session_id) is not None:
            if db.relink_session(meta):
                report.notes.append(f"{meta.key}: links or label updated from sessions.json")
            continue
        if normalize_key(meta.key) in deleted:
            continue
        stored_as, added, messages = db.import_session(meta, [])
        note_rekeyed(report, meta.key, stored_as)
        report.add(stored_as, added, messages)
