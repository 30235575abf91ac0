"""Reading Crush's per-project database ``<project>/.crush/crush.db`` from a watermark.

Shapes, from charmbracelet/crush (commit 37f36e93824e) ``internal/db/migrations/``
(``20250424200609_initial.sql``: ``sessions(id, parent_session_id, title, …, updated_at,
created_at)``, ``messages(id, session_id, role, parts, model, created_at, updated_at,
finished_at)``; ``provider`` added in ``20250627000000_add_provider_to_messages.sql``) and
``internal/message/content.go`` (``parts``: a JSON list of ``{type, data}``: ``text``,
``reasoning``, ``tool_call``, ``tool_result``, ``finish``, …). ``created_at`` is written in
milliseconds, but the triggers rewrite ``updated_at`` in seconds: the watermark never
orders one against the other, it keeps each session's own figures and compares them for
equality. ``role: tool`` rows hold tool results (stored, not indexed); reasoning is stored,
not indexed, and so is a compaction's summary (``is_summary_message``,
``20250810000000_add_is_summary_message.sql``); a message is matched by its id, its parts
by their place in it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...storage import SessionMeta
from ..common import ImportReport, label_of
from ..sqlite_source import SessionRead, iso_ms, json_value, read_snapshot

SOURCE = "crush"
VERSION = 1
TABLES = {
    "sessions": ("id", "title", "created_at", "updated_at"),
    "messages": ("id", "session_id", "role", "parts", "created_at", "updated_at"),
}


def read_new(path: Path, watermark: dict[str, Any] | None, agent: str,
             report: ImportReport) -> tuple[list[SessionRead], dict[str, Any]]:
    mark = watermark if watermark and watermark.get("v") == VERSION else {}
    with read_snapshot(path, TABLES) as (conn, columns):
        return _read(conn, path, mark, agent, report, columns["messages"], columns["sessions"])


def _read(conn: Any, path: Path, mark: dict[str, Any], agent: str, report: ImportReport,
          mcols: set[str], scols: set[str]) -> tuple[list[SessionRead], dict[str, Any]]:
    seen: dict[str, Any] = mark.get("sessions") or {}
    bad = set(mark.get("bad") or ())
    open_ones = set(mark.get("open") or ())
    parent = "parent_session_id" if "parent_session_id" in scols else "NULL"
    sessions = {r[0]: r for r in conn.execute(
        f"SELECT id, title, created_at, updated_at, {parent} FROM sessions")}
    figures = {r[0]: list(r[1:]) for r in conn.execute(
        "SELECT session_id, count(*), max(rowid), total(updated_at), max(created_at) "
        "FROM messages GROUP BY session_id")}
    now = {sid: [row[3], *(figures.get(sid) or [])] for sid, row in sessions.items()}
    changed = {sid for sid in sessions if seen.get(sid) != now[sid]} | open_ones
    provider = "provider" if "provider" in mcols else "NULL"
    finished = "finished_at" if "finished_at" in mcols else "NULL"
    summary = "is_summary_message" if "is_summary_message" in mcols else "0"
    reads, still_open = [], []
    for sid in sorted(changed):
        row = sessions.get(sid)
        if row is None:
            continue
        rows = conn.execute(
            f"SELECT id, role, parts, model, {provider}, created_at, {finished}, {summary} "
            "FROM messages "
            "WHERE session_id = ? ORDER BY created_at, rowid", (sid,)).fetchall()
        read, is_open = convert(path, row, rows, agent, report, bad)
        if is_open:
            still_open.append(sid)
        if read is not None:
            reads.append(read)
    after = {"v": VERSION, "sessions": now, "open": still_open, "bad": sorted(bad)}
    return reads, after


def convert(path: Path, row: tuple, rows: list[tuple], agent: str, report: ImportReport,
            bad: set[str]) -> tuple[SessionRead | None, bool]:
    sid, title, created, _updated, parent = row
    prefix = f"agent:{agent}:{SOURCE}:"
    parent_key = prefix + parent if isinstance(parent, str) and parent else None
    header: dict[str, Any] = {"type": "session", "version": 3, "id": sid}
    if iso_ms(created):
        header["timestamp"] = iso_ms(created)
    if parent_key:
        header["parentSession"] = parent
    cwd = str(path.parent.parent)  # <project>/.crush/crush.db
    if path.parent.name == ".crush":
        header["cwd"] = cwd
    events: list[dict[str, Any]] = [header]
    first_prompt = None
    last_ms = created if isinstance(created, int) else None
    is_open = False
    for index, (mid, role, parts_json, model, provider, when, finished,
                summary) in enumerate(rows):
        parts = json_value(parts_json)
        if not isinstance(parts, list):
            if mid not in bad:
                bad.add(mid)
                report.skip(path, None, f"message {mid} of session {sid}: its parts are not a "
                            "JSON list; skipped")
            continue
        kinds = {p.get("type") for p in parts if isinstance(p, dict)}
        if role == "assistant" and index == len(rows) - 1 and "finish" not in kinds \
                and finished is None:
            is_open = True  # still streaming: taken when whole
            break
        if isinstance(when, int):
            last_ms = max(last_ms or when, when)
        for n, entry in enumerate(_entries(parts, role, model, provider, when, bool(summary))):
            entry["id"] = f"{mid}:{n}"
            entry["parentId"] = events[-1]["id"] if len(events) > 1 else None
            events.append(entry)
        if first_prompt is None and role == "user":
            first_prompt = next((p["data"]["text"] for p in parts if isinstance(p, dict)
                                 and p.get("type") == "text" and isinstance(p.get("data"), dict)
                                 and isinstance(p["data"].get("text"), str)), None)
    if len(events) == 1:
        return None, is_open
    project = Path(cwd).name if "cwd" in header else ""
    name = title if isinstance(title, str) and title.strip() else (first_prompt or sid)
    meta = SessionMeta(key=prefix + sid, session_id=sid, spawned_by=parent_key,
                       parent_key=parent_key, label=label_of(project, name),
                       created_at=created if isinstance(created, int) else None,
                       updated_at=last_ms, source=SOURCE)
    return SessionRead(meta, events), is_open


def _entries(parts: list[Any], role: Any, model: Any, provider: Any, when: Any,
             summary: bool) -> list[dict[str, Any]]:
    stamp = iso_ms(when)
    out: list[dict[str, Any]] = []

    def message(content: list[dict[str, Any]], as_role: str) -> dict[str, Any]:
        body: dict[str, Any] = {"role": as_role, "content": content}
        if as_role == "assistant":
            body["api"] = "crush"
            if isinstance(model, str) and model:
                body["model"] = model
            if isinstance(provider, str) and provider:
                body["provider"] = provider
        if isinstance(when, int):
            body["timestamp"] = when
        entry: dict[str, Any] = {"type": "message", "message": body}
        if stamp:
            entry["timestamp"] = stamp
        return entry

    texts = []
    for part in parts:
        if not isinstance(part, dict) or not isinstance(part.get("data"), dict):
            continue
        kind, data = part.get("type"), part["data"]
        if kind == "text" and isinstance(data.get("text"), str):
            texts.append({"type": "text", "text": data["text"]})
    if texts and summary:  # the summary a compaction wrote: stored, not indexed
        out.append({"type": "custom_message", "customType": "crush.summary", "content": texts,
                    "display": False, "details": {"role": role},
                    **({"timestamp": stamp} if stamp else {})})
    elif texts and role in ("user", "assistant"):
        out.append(message(texts, role))
    for part in parts:
        if not isinstance(part, dict) or not isinstance(part.get("data"), dict):
            continue
        kind, data = part.get("type"), part["data"]
        if kind == "text":
            continue
        if kind == "reasoning" and isinstance(data.get("thinking"), str):
            out.append(message([{"type": "thinking", "thinking": data["thinking"]}], "assistant"))
        elif kind == "tool_call":
            args = json_value(data.get("input")) if isinstance(data.get("input"), str) else None
            out.append(message([{"type": "toolCall", "id": str(data.get("id") or ""),
                                 "name": str(data.get("name") or "tool"),
                                 "arguments": args if isinstance(args, dict) else {}}],
                               "assistant"))
        elif kind == "tool_result":
            out.append({"type": "message", **({"timestamp": stamp} if stamp else {}),
                        "message": {"role": "toolResult",
                                    "toolCallId": str(data.get("tool_call_id") or ""),
                                    "toolName": str(data.get("name") or "tool"),
                                    "content": [{"type": "text",
                                                 "text": str(data.get("content") or "")}],
                                    "isError": bool(data.get("is_error"))}})
        else:
            out.append({"type": "custom", "customType": f"crush.{kind}", "data": data,
                        **({"timestamp": stamp} if stamp else {})})
    return out
