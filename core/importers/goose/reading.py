"""Reading Goose's sessions: the SQLite database ``sessions.db`` (through the SQLite source
kind) and the older ``<name>.jsonl`` files beside it, which Goose keeps after importing them
into the database (each conversation once: both are stored under the session's id, and each
message's entry id is derived from its content, so a message read from both is one entry).

Shapes, from block/goose ``crates/goose/src/session/session_manager.rs`` (``create_schema``,
``add_message``, ``replace_conversation``), ``migrations.rs`` (columns added by version:
``messages.metadata_json`` at 3, ``sessions.name`` at 4, ``provider_name`` and
``model_config_json`` at 6, ``messages.message_id`` at 7; before 4 the title is
``description``) and ``legacy.rs`` (a metadata line, then one ``Message`` per line):
``messages(id, session_id, role, content_json, created_timestamp, metadata_json)``,
``content_json`` a list of ``MessageContent`` tagged by ``type`` (``text``, ``toolRequest``,
``toolResponse``, ``thinking``, ``redactedThinking``, ``image``, …), times in seconds. A
tool's response sits in a user-role message: stored as a tool result, never as the user's
words; a message with ``metadata.userVisible: false`` is stored, not indexed.

Change detection: the sessions whose ``updated_at`` moved and those with ``messages`` rows
past the highest rowid read (``replace_conversation`` deletes and inserts again: new rowids).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...storage import SessionMeta
from ..common import ImportReport, label_of
from ..sqlite_source import SchemaUnknown, SessionRead, json_value, read_snapshot

SOURCE = "goose"
VERSION = 1
TABLES = {
    "sessions": ("id", "working_dir", "created_at", "updated_at"),
    "messages": ("session_id", "role", "content_json", "created_timestamp"),
}


def read_new(path: Path, watermark: dict[str, Any] | None, agent: str,
             report: ImportReport) -> tuple[list[SessionRead], dict[str, Any]]:
    """Each session of ``path`` (the database or a legacy ``.jsonl``) with something new."""
    if path.suffix == ".jsonl":
        return read_legacy(path, agent, report), {"v": VERSION}
    mark = watermark if watermark and watermark.get("v") == VERSION else {}
    with read_snapshot(path, TABLES) as (conn, columns):
        scols, mcols = columns["sessions"], columns["messages"]
        if "name" not in scols and "description" not in scols:
            raise SchemaUnknown(f"{path}: table 'sessions' has neither 'name' nor 'description':"
                                " not a database schema backscroll knows")
        return _read(conn, path, mark, agent, report, scols, mcols)


def _read(conn: Any, path: Path, mark: dict[str, Any], agent: str, report: ImportReport,
          scols: set[str], mcols: set[str]) -> tuple[list[SessionRead], dict[str, Any]]:
    seen: dict[str, Any] = mark.get("sessions") or {}
    bad = set(mark.get("bad") or ())
    last = int(mark.get("message") or 0)
    top = conn.execute("SELECT max(rowid) FROM messages").fetchone()[0] or 0
    title = "name" if "name" in scols else "description"
    if "name" in scols and "description" in scols:
        title = "coalesce(nullif(name, ''), description)"
    model = "model_config_json" if "model_config_json" in scols else "NULL"
    sessions = {r[0]: r for r in conn.execute(
        f"SELECT id, updated_at, {title}, working_dir, created_at, {model} FROM sessions")}
    changed = {sid for sid, r in sessions.items() if seen.get(sid) != r[1]}
    if top < last:
        changed |= set(sessions)
    else:
        changed |= {r[0] for r in conn.execute(
            "SELECT DISTINCT session_id FROM messages WHERE rowid > ?", (last,))}
    meta_col = "metadata_json" if "metadata_json" in mcols else "NULL"
    reads = []
    for sid in sorted(changed):
        row = sessions.get(sid)
        if row is None:
            continue
        rows = conn.execute(
            f"SELECT rowid, role, content_json, created_timestamp, {meta_col} FROM messages "
            "WHERE session_id = ? ORDER BY rowid", (sid,)).fetchall()
        messages = []
        for rowid, role, content, created, metadata in rows:
            items = json_value(content)
            if not isinstance(items, list):
                if f"{sid}:{rowid}" not in bad:
                    bad.add(f"{sid}:{rowid}")
                    report.skip(path, None, f"message {rowid} of session {sid}: its content_json"
                                " is not a JSON list; skipped")
                continue
            messages.append({"role": role, "created": created, "content": items,
                             "metadata": json_value(metadata) or {}})
        model_name = (json_value(row[5]) or {}).get("model_name") if row[5] else None
        read = convert(sid, row[2], row[3], _seconds(row[4]), messages, agent,
                       model_name if isinstance(model_name, str) else None)
        if read is not None:
            reads.append(read)
    after = {"v": VERSION, "message": top, "sessions": {s: r[1] for s, r in sessions.items()},
             "bad": sorted(bad)}
    return reads, after


def read_legacy(path: Path, agent: str, report: ImportReport) -> list[SessionRead]:
    """A legacy ``<name>.jsonl``: its metadata line (``working_dir``, ``description``), then
    one message per line; the session's id is the file's name (legacy.rs)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as err:
        report.skip(path, None, f"cannot be read ({err.strerror or err})")
        return []
    meta: dict[str, Any] = {}
    messages = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        value = json_value(line)
        if number == 1 and isinstance(value, dict) and "role" not in value:
            meta = value
            continue
        if not isinstance(value, dict) or not isinstance(value.get("content"), list):
            report.skip(path, number, "not a Goose message (a JSON object with a content list);"
                        " skipped")
            continue
        messages.append(value)
    created = min((m["created"] for m in messages if isinstance(m.get("created"), int)),
                  default=None)
    if created is None:
        try:
            created = int(os.stat(path).st_mtime)
        except OSError:
            created = None
    read = convert(path.stem, meta.get("description") or meta.get("name"),
                   meta.get("working_dir"), created, messages, agent, None)
    return [read] if read is not None else []


def convert(sid: str, title: Any, cwd: Any, created: int | None, messages: list[dict[str, Any]],
            agent: str, model: str | None) -> SessionRead | None:
    """One Goose conversation as entries in the Claude Code / Codex shapes."""
    key = f"agent:{agent}:{SOURCE}:{sid}"
    header: dict[str, Any] = {"type": "session", "version": 3, "id": sid}
    if iso(created):
        header["timestamp"] = iso(created)
    if isinstance(cwd, str) and cwd:
        header["cwd"] = cwd
    events: list[dict[str, Any]] = [header]
    seen: dict[str, int] = {}
    first_prompt = None
    updated = created
    for message in messages:
        role = message.get("role")
        when = message.get("created") if isinstance(message.get("created"), int) else None
        if when is not None:
            updated = max(updated or when, when)
        items = [i for i in message.get("content") or [] if isinstance(i, dict)]
        digest = hashlib.sha1(json.dumps([role, when, [_salient(i) for i in items]],
                                         ensure_ascii=False).encode()).hexdigest()[:20]
        seen[digest] = seen.get(digest, 0) + 1
        base_id = f"g{digest}-{seen[digest]}"
        metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
        visible = metadata.get("userVisible", True) is not False
        for n, entry in enumerate(_entries(items, role, when, model, visible)):
            entry["id"] = f"{base_id}.{n}"
            entry["parentId"] = events[-1]["id"] if len(events) > 1 else None
            events.append(entry)
        if first_prompt is None and role == "user" and visible:
            first_prompt = next((i["text"] for i in items if i.get("type") == "text"
                                 and isinstance(i.get("text"), str) and i["text"].strip()), None)
    if len(events) == 1:
        return None
    project = Path(cwd).name if isinstance(cwd, str) and cwd else ""
    name = title if isinstance(title, str) and title.strip() else (first_prompt or sid)
    meta = SessionMeta(key=key, session_id=sid, spawned_by=None, parent_key=None,
                       label=label_of(project, name),
                       created_at=created * 1000 if created else None,
                       updated_at=updated * 1000 if updated else None, source=SOURCE)
    return SessionRead(meta, events)


def _entries(items: list[dict[str, Any]], role: Any, when: int | None, model: str | None,
             visible: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    stamp = iso(when)

    def message(content: list[dict[str, Any]], as_role: str) -> dict[str, Any]:
        body: dict[str, Any] = {"role": as_role, "content": content}
        if as_role == "assistant":
            body["api"] = "goose"
            if model:
                body["model"] = model
        if when is not None:
            body["timestamp"] = when * 1000
        entry: dict[str, Any] = {"type": "message", "message": body}
        if stamp:
            entry["timestamp"] = stamp
        return entry

    texts: list[dict[str, Any]] = []

    def flush() -> None:  # the texts so far, as one message of the role (in order)
        if texts and role in ("user", "assistant"):
            if visible:
                out.append(message(list(texts), role))
            else:  # shown to the agent only (a summary, an injected instruction)
                out.append({"type": "custom_message", "customType": "goose.context",
                            "content": list(texts), "display": False,
                            "details": {"role": role}, **({"timestamp": stamp} if stamp else {})})
        texts.clear()

    for item in items:
        kind = item.get("type")
        if kind == "text":
            if isinstance(item.get("text"), str):
                texts.append({"type": "text", "text": item["text"]})
            continue
        flush()
        if kind == "thinking" and isinstance(item.get("thinking"), str):
            out.append(message([{"type": "thinking", "thinking": item["thinking"]}], "assistant"))
        elif kind in ("toolRequest", "frontendToolRequest"):
            call = _ok(item.get("toolCall"))
            name = call.get("name") if isinstance(call.get("name"), str) else "tool"
            args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
            out.append(message([{"type": "toolCall", "id": str(item.get("id") or ""),
                                 "name": name, "arguments": args}], "assistant"))
        elif kind == "toolResponse":
            result = item.get("toolResult")
            error = _failed(result)
            out.append({"type": "message", **({"timestamp": stamp} if stamp else {}),
                        "message": {"role": "toolResult",
                                    "toolCallId": str(item.get("id") or ""),
                                    "toolName": "tool", "content": [
                                        {"type": "text", "text": _result_text(result)}],
                                    "isError": error}})
        else:
            out.append({"type": "custom", "customType": f"goose.{kind}",
                        "data": {k: v for k, v in item.items() if k != "data"},
                        **({"timestamp": stamp} if stamp else {})})
    flush()
    return out


def _salient(item: dict[str, Any]) -> list[Any]:
    """What identifies a content item whichever Goose wrote it: its type and its text (or
    thinking, or tool call id). Optional fields a version writes and another omits (``null``
    annotations, signatures) do not change a message's derived id."""
    kind = item.get("type")
    for name in ("text", "thinking", "id", "data"):
        if isinstance(item.get(name), str):
            return [kind, item[name]]
    return [kind]


def _ok(value: Any) -> dict[str, Any]:
    """A Rust ``Result`` as serde writes it (``{"status": "success", "value": …}``)."""
    if isinstance(value, dict) and "value" in value and isinstance(value["value"], dict):
        return value["value"]
    return value if isinstance(value, dict) else {}


def _failed(result: Any) -> bool:
    """A tool's ``Result`` that failed: an ``error`` (the tool could not run), or a
    ``success`` whose MCP ``CallToolResult`` says ``isError`` (it ran and reported a failure,
    as an extension's tool does)."""
    if not isinstance(result, dict):
        return False
    value = result.get("value")
    return result.get("status") == "error" or (
        isinstance(value, dict) and value.get("isError") is True)


def _result_text(result: Any) -> str:
    if isinstance(result, dict):
        if result.get("status") == "error":
            return str(result.get("error") or "")
        value = result.get("value", result)
        if isinstance(value, dict):
            value = value.get("content", [])
        if isinstance(value, list):
            return "\n".join(i["text"] for i in value
                             if isinstance(i, dict) and isinstance(i.get("text"), str))
    return "" if result is None else str(result)


_SQL_TIME = re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d")


def _seconds(value: Any) -> int | None:
    """A ``TIMESTAMP`` column: SQLite's ``CURRENT_TIMESTAMP`` text (UTC), RFC 3339 text as
    sqlx writes a ``DateTime<Utc>``, or a number of seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and _SQL_TIME.match(value):
        text = value.replace(" ", "T", 1).replace("Z", "+00:00")
        try:
            when = datetime.fromisoformat(text)
        except ValueError:
            try:
                when = datetime.fromisoformat(text[:19])
            except ValueError:
                return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return int(when.timestamp())
    return None


def iso(seconds: Any) -> str | None:
    if not isinstance(seconds, int) or isinstance(seconds, bool) or not 0 < seconds < 32503680000:
        return None
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat().replace("+00:00", "Z")
