"""Reading Cursor's editor database (``globalStorage/state.vscdb``) from a watermark.

The table is ``cursorDiskKV(key TEXT UNIQUE, value BLOB)``: ``composerData:<composerId>`` is
one conversation (a composer) and ``bubbleId:<composerId>:<bubbleId>`` one of its messages.
The database is large (hundreds of MB, most of it other keys) and the editor writes it while
backscroll reads, so every read goes by key range on the table's unique index: the
composers' keys page by page, each changed composer's bubbles by their key prefix; nothing
else is read.

The watermark keeps each composer's ``lastUpdatedAt`` and the length of its record (taken in
SQL, the record not decoded): only a composer whose pair moved is read. A composer Cursor
marks as still generating is taken up to its last user message and read again next time, so
an answer written in place is stored whole. The project folder of a composer is found once
(kept in the watermark) from the workspace that lists it: ``workspaceStorage/<hash>/
workspace.json`` (``folder``, a ``file://`` URI) and that workspace's own ``state.vscdb``
(``ItemTable`` key ``composer.composerData``: ``allComposers[{composerId}]``).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import unquote, urlparse

from ..common import ImportReport
from ..format import SessionRead
from ..sqlite_source import json_object, open_readonly, read_snapshot
from .convert import convert_composer

TABLES = {"cursorDiskKV": ("key", "value")}
VERSION = 1
PAGE = 500  # composer keys read at once
_COMPOSERS = ("composerData:", "composerData;")  # ';' follows ':': the prefix's key range


def read_new(path: Path, watermark: dict[str, Any] | None, agent: str, report: ImportReport,
             source: str = "cursor-editor") -> tuple[list[SessionRead], dict[str, Any]]:
    """Each composer of ``path`` changed since ``watermark``, and the new watermark."""
    mark = watermark if watermark and watermark.get("v") == VERSION else {}
    seen: dict[str, list[Any]] = mark.get("composers") or {}
    folders: dict[str, str] = dict(mark.get("folders") or {})
    bad = set(mark.get("bad") or ())
    with read_snapshot(path, TABLES) as (conn, _columns):
        now = dict(_composer_marks(conn))
        changed = sorted(c for c, sig in now.items() if seen.get(c) != sig)
        records = {}
        for cid in changed:
            composer = json_object(_value(conn, "composerData:" + cid))
            if composer is None:
                _bad(report, path, bad, cid, f"composer {cid}: its record is not a JSON "
                     "object; skipped")
                continue
            records[cid] = composer
        if any(cid not in folders for cid in records):
            folders.update({c: f for c, f in _workspace_folders(path).items()
                            if c in records})
        reads: list[SessionRead] = []
        still_open: list[str] = []
        for cid, composer in records.items():
            bubbles = _bubbles(conn, path, cid, composer, report, bad)
            if composer.get("status") == "generating":
                while bubbles and bubbles[-1][1].get("type") != 1:
                    bubbles.pop()  # the answer being written: taken when whole
                still_open.append(cid)
            one = convert_composer(cid, composer, bubbles, folders.get(cid), agent, source)
            if one is not None:
                reads.append(one)
    after = {cid: sig for cid, sig in now.items() if cid not in still_open}
    return reads, {"v": VERSION, "composers": after, "folders": folders, "bad": sorted(bad)}


def _composer_marks(conn: sqlite3.Connection) -> Iterator[tuple[str, list[Any]]]:
    """(composer id, [lastUpdatedAt, length of its record]) for every composer, by key
    range, a page at a time."""
    last = _COMPOSERS[0]
    while True:
        rows = conn.execute(
            "SELECT key, CASE WHEN json_valid(CAST(value AS TEXT)) THEN "
            "json_extract(CAST(value AS TEXT), '$.lastUpdatedAt') END, length(value) "
            "FROM cursorDiskKV WHERE key > ? AND key < ? ORDER BY key LIMIT ?",
            (last, _COMPOSERS[1], PAGE)).fetchall()
        for key, updated, size in rows:
            if isinstance(key, str):
                yield key[len(_COMPOSERS[0]):], [updated, size]
        if len(rows) < PAGE:
            return
        last = rows[-1][0]


def _value(conn: sqlite3.Connection, key: str) -> Any:
    row = conn.execute("SELECT value FROM cursorDiskKV WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def _bad(report: ImportReport, path: Path, bad: set[str], key: str, sentence: str) -> None:
    """A record that cannot be read: said once (the watermark remembers it)."""
    if key not in bad:
        bad.add(key)
        report.skip(path, None, sentence)


def _bubbles(conn: sqlite3.Connection, path: Path, cid: str, composer: dict[str, Any],
             report: ImportReport, bad: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """The composer's bubbles in the conversation's order (its header list; the older
    inline ``conversation`` when there is no header list)."""
    headers = composer.get("fullConversationHeadersOnly")
    if not isinstance(headers, list):
        inline = composer.get("conversation")
        return [(b["bubbleId"], b) for b in (inline if isinstance(inline, list) else [])
                if isinstance(b, dict) and isinstance(b.get("bubbleId"), str)]
    prefix = f"bubbleId:{cid}:"
    stored = {key[len(prefix):]: value for key, value in conn.execute(
        "SELECT key, value FROM cursorDiskKV WHERE key > ? AND key < ?",
        (prefix, f"bubbleId:{cid};"))}
    out = []
    for header in headers:
        bid = header.get("bubbleId") if isinstance(header, dict) else None
        if not isinstance(bid, str) or bid not in stored:
            continue
        bubble = json_object(stored[bid])
        if bubble is None:
            _bad(report, path, bad, f"{cid}:{bid}", f"composer {cid}: bubble {bid} is not a "
                 "JSON object; skipped")
            continue
        if "type" not in bubble and isinstance(header, dict):
            bubble["type"] = header.get("type")
        out.append((bid, bubble))
    return out


def _workspace_folders(path: Path) -> dict[str, str]:
    """Each composer listed by a workspace of this Cursor install: that workspace's folder."""
    found: dict[str, str] = {}
    root = path.parent.parent / "workspaceStorage"
    try:
        workspaces = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return found
    for workspace in workspaces:
        folder = _workspace_folder(workspace / "workspace.json")
        database = workspace / "state.vscdb"
        if folder is None or not database.is_file():
            continue
        try:
            conn = open_readonly(database)
        except Exception:  # noqa: BLE001 - a workspace that cannot be read names no folder
            continue
        try:
            row = conn.execute("SELECT value FROM ItemTable WHERE key = "
                               "'composer.composerData'").fetchone()
        except sqlite3.Error:
            row = None
        finally:
            conn.close()
        data = json_object(row[0]) if row else None
        listed = data.get("allComposers") if data else None
        for one in listed if isinstance(listed, list) else []:
            if isinstance(one, dict) and isinstance(one.get("composerId"), str):
                found.setdefault(one["composerId"], folder)
    return found


def _workspace_folder(file: Path) -> str | None:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    uri = data.get("folder") if isinstance(data, dict) else None
    if not isinstance(uri, str):
        return None
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None  # a remote workspace (vscode-remote://…): no local folder
    return unquote(parsed.path) or None
