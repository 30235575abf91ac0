"""OpenCode's older JSON storage tree (before 1.2, and left on disk after the migration to
``opencode.db``): ``storage/session/<projectID>/<sessionID>.json`` (``Session.Info``),
``storage/message/<sessionID>/<messageID>.json`` (``MessageV2.Info``) and
``storage/part/<messageID>/<partID>.json`` (``MessageV2.Part``), each file rewritten whole
(anomalyco/opencode ``packages/opencode/src/storage/storage.ts`` before 1.2,
``session/index.ts``, ``session/message-v2.ts``).

The tree is read like a database (the SQLite source kind's ``read_new``): the watermark keeps
each session's signature (the latest modification time and the number of its files); a
session whose signature moved is read whole and converted as the database's sessions are,
so entries are matched by id: one the database holds too (migrated) is not stored twice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..common import ImportReport
from ..sqlite_source import SessionRead
from .convert import convert_session

VERSION = 1


def read_tree(storage: Path, watermark: dict[str, Any] | None, agent: str,
              report: ImportReport, source: str) -> tuple[list[SessionRead], dict[str, Any]]:
    mark = watermark if watermark and watermark.get("v") == VERSION else {}
    seen: dict[str, list[int]] = mark.get("sessions") or {}
    bad = set(mark.get("bad") or ())
    after: dict[str, list[int]] = {}
    reads: list[SessionRead] = []
    for file in _session_files(storage):
        info = _load(file, report, bad)
        sid = info.get("id") if info is not None else None
        if not isinstance(sid, str) or not sid:
            continue
        messages = _files(storage / "message" / sid)
        parts = {m.stem: _files(storage / "part" / m.stem) for m in messages}
        signature = _signature([file, *messages, *(p for ps in parts.values() for p in ps)])
        after[sid] = signature
        if seen.get(sid) == signature:
            continue
        times = info.get("time") if isinstance(info.get("time"), dict) else {}
        row = (sid, times.get("updated"), info.get("title"), info.get("directory"),
               times.get("created"), info.get("parentID"))
        message_rows = []
        part_rows = []
        for message in messages:
            data = _text(message, report)
            if data is None:
                continue
            message_rows.append((message.stem, _created(data), data))
            for part in parts[message.stem]:
                part_data = _text(part, report)
                if part_data is not None:
                    part_rows.append((part.stem, message.stem, part_data))
        message_rows.sort(key=lambda r: (r[1], r[0]))
        part_rows.sort(key=lambda r: (r[1], r[0]))
        converted = convert_session(storage, row, message_rows, part_rows, agent, source, report,
                                    bad)
        if converted.open:
            after[sid] = [0, 0]  # its last reply is being written: read again next time
        if converted.events:
            reads.append(SessionRead(converted.meta, converted.events))
    return reads, {"v": VERSION, "sessions": {**seen, **after}, "bad": sorted(bad)}


def _session_files(storage: Path) -> list[Path]:
    root = storage / "session"
    try:
        projects = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []
    return [f for project in projects for f in _files(project)]


def _files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir()
                      if p.suffix == ".json" and p.is_file() and not p.is_symlink())
    except OSError:
        return []


def _signature(files: list[Path]) -> list[int]:
    latest = 0
    for file in files:
        try:
            latest = max(latest, file.stat().st_mtime_ns)
        except OSError:
            continue
    return [latest, len(files)]


def _text(file: Path, report: ImportReport) -> str | None:
    try:
        return file.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        report.skip(file, None, f"cannot be read ({err.strerror or err})")
        return None


def _load(file: Path, report: ImportReport, bad: set[str]) -> dict[str, Any] | None:
    text = _text(file, report)
    try:
        value = json.loads(text) if text is not None else None
    except ValueError:
        value = None
    if not isinstance(value, dict):
        if text is not None and str(file) not in bad:
            bad.add(str(file))
            report.skip(file, None, "not a JSON object; skipped")
        return None
    return value


def _created(data: str) -> int:
    try:
        info = json.loads(data)
        created = info["time"]["created"]
    except (ValueError, TypeError, KeyError):
        return 0
    return created if isinstance(created, int) else 0
