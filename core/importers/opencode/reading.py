"""Reading OpenCode's SQLite database (``opencode.db``, 1.2+; Kilo's ``kilo.db`` has the
same schema) from a watermark: the sessions with something new, each converted whole into
OpenClaw entries (``convert.py``); entries stored before are recognised by id.

The schema is OpenCode's own (anomalyco/opencode ``packages/opencode/src/session/
session.sql.ts``): ``session(id, project_id, parent_id, directory, title, time_created,
time_updated, …)``, ``message(id, session_id, time_created, time_updated, data)`` and
``part(id, message_id, session_id, time_created, time_updated, data)``, ``data`` being the
JSON of ``session/message-v2.ts``'s ``Info`` and ``Part`` without their id fields.

What changed since the last read is found without reading the big tables: the sessions whose
``time_updated`` moved, and those of the ``message`` and ``part`` rows past the highest rowid
read (rows are appended; their ``rowid`` grows). A session whose last assistant message is
still being written (no ``time.completed``) is taken up to it and read again next time, so a
text streamed in place is stored when it is whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..common import ImportReport
from ..sqlite_source import SessionRead, read_snapshot
from .convert import convert_session

TABLES = {
    "session": ("id", "directory", "title", "time_created", "time_updated"),
    "message": ("id", "session_id", "time_created", "data"),
    "part": ("id", "message_id", "session_id", "data"),
}
VERSION = 1


def read_new(path: Path, watermark: dict[str, Any] | None, agent: str, report: ImportReport,
             source: str = "opencode") -> tuple[list[SessionRead], dict[str, Any]]:
    """Each session of ``path`` with something new since ``watermark``, and the new one."""
    mark = watermark if watermark and watermark.get("v") == VERSION else {}
    with read_snapshot(path, TABLES) as (conn, columns):
        return _read(conn, path, mark, agent, report, source, "parent_id" in columns["session"])


def _read(conn: Any, path: Path, mark: dict[str, Any], agent: str, report: ImportReport,
          source: str, has_parent: bool) -> tuple[list[SessionRead], dict[str, Any]]:
    seen: dict[str, int] = mark.get("sessions") or {}
    open_ones = set(mark.get("open") or ())
    bad = set(mark.get("bad") or ())
    last_message, last_part = int(mark.get("message") or 0), int(mark.get("part") or 0)
    top_message = conn.execute("SELECT max(rowid) FROM message").fetchone()[0] or 0
    top_part = conn.execute("SELECT max(rowid) FROM part").fetchone()[0] or 0
    parent = "parent_id" if has_parent else "NULL"
    sessions = {row[0]: row for row in conn.execute(
        f"SELECT id, time_updated, title, directory, time_created, {parent} FROM session")}
    changed = {sid for sid, row in sessions.items() if seen.get(sid) != row[1]} | open_ones
    if top_message < last_message or top_part < last_part:
        changed |= set(sessions)  # rows were deleted below the mark: look at everything
    else:
        changed |= {r[0] for r in conn.execute(
            "SELECT DISTINCT session_id FROM message WHERE rowid > ?", (last_message,))}
        changed |= {r[0] for r in conn.execute(
            "SELECT DISTINCT session_id FROM part WHERE rowid > ?", (last_part,))}
    reads: list[SessionRead] = []
    still_open: list[str] = []
    for sid in sorted(changed):
        row = sessions.get(sid)
        if row is None:  # deleted in the agent: what backscroll holds of it stays
            continue
        messages = conn.execute(
            "SELECT id, time_created, data FROM message WHERE session_id = ? "
            "ORDER BY time_created, id", (sid,)).fetchall()
        parts = conn.execute(
            "SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id",
            (sid,)).fetchall()
        converted = convert_session(
            path, row, messages, parts, agent, source, report, bad)
        if converted.open:
            still_open.append(sid)
        if converted.events:
            reads.append(SessionRead(converted.meta, converted.events))
    after = {
        "v": VERSION,
        "message": top_message,
        "part": top_part,
        "sessions": {sid: row[1] for sid, row in sessions.items()},
        "open": still_open,
        "bad": sorted(bad),
    }
    return reads, after
