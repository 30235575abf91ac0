"""Finding Gemini CLI chats under PATH, reading one (the whole-file ``.json`` or the ``.jsonl``
upsert log), and storing it as one session with its header, project folder and label."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from ...bounds import MAX_LINE_BYTES, decode_json, open_regular
from ...errors import ValidationError
from ...state import StateDir
from ...storage import AgentWriter, SessionMeta
from ...transcript import iso_to_ms
from ..common import (
    ImportReport,
    NumberedLines,
    deleted_here,
    files_under,
    import_each,
    import_start,
    json_lines,
    label_of,
    store_converted,
)
from .convert import Converted, convert, str_or_none

DEFAULT_AGENT = "gemini"
SOURCE = "gemini"
MAX_JSON_BYTES = 256 * 1024 * 1024  # a whole-file chat (the CLI keeps them far smaller)
_SUBAGENT = re.compile(r"^[A-Za-z0-9_-]{1,128}\.jsonl$")


def is_chat(name: str) -> bool:
    """A chat file's name: ``session-<time>-<id8>.json`` / ``.jsonl``, or a subagent's
    ``<session id>.jsonl`` (under ``chats/<parent id>/``)."""
    return (name.startswith("session-") and name.endswith((".json", ".jsonl"))) or bool(
        _SUBAGENT.match(name))


def same_chat(key: str, path: str, holder: str) -> bool:
    """A ``.json`` chat the CLI migrated on resume to ``<same name>.jsonl`` is one session."""
    return path.rstrip("l") == holder.rstrip("l") and path.endswith(".json") != holder.endswith(
        ".json")


def import_gemini(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
    """Import a Gemini CLI folder (``~/.gemini`` or ``~/.gemini/tmp``, searched recursively
    for chats under ``chats/``) or one chat file."""
    path, agent_id, report = import_start(path, agent, DEFAULT_AGENT)
    files = files_under(path, "*.json*", report, lambda p: is_chat(p.name) and "chats" in p.parts)
    return import_each(
        state, agent_id, files, report,
        f"{path} holds no Gemini CLI chats (expected ~/.gemini/tmp/<project>/chats/"
        "session-*.json or .jsonl, or one chat file)",
        lambda db, file: import_chat(db, agent_id, file, report))


def read_records(file: Path, report: ImportReport,
                 lines: NumberedLines | None = None) -> list[tuple[int, dict[str, Any]]]:
    """The chat's records in file order, numbered: a ``.json`` file is one record (read
    whole: the CLI rewrites it whole, pretty-printed); a ``.jsonl`` file one per line."""
    if file.name.endswith(".json"):
        try:
            with open_regular(file) as handle:
                raw = handle.read(MAX_JSON_BYTES + 1)
        except OSError as err:
            report.skip(file, None, f"cannot read ({err.strerror or err})")
            return []
        if len(raw) > MAX_JSON_BYTES:
            report.skip(file, None, f"over {MAX_JSON_BYTES:,} bytes; not read")
            return []
        try:
            value = decode_json(raw, max_bytes=max(MAX_LINE_BYTES, len(raw)))
        except ValidationError as err:
            report.skip(file, None, f"not a whole JSON chat ({err}); skipped (read again "
                        "when it changes)")
            return []
        if not isinstance(value, dict):
            report.skip(file, None, "a Gemini chat must be a JSON object")
            return []
        return [(1, value)]
    records = []
    for lineno, _text, value in json_lines(file, report, lines):
        if isinstance(value, dict):
            records.append((lineno, value))
        else:
            report.skip(file, lineno, "a Gemini chat record must be a JSON object")
    return records


def import_chat(db: AgentWriter, agent_id: str, file: Path, report: ImportReport,
                lines: NumberedLines | None = None, live: bool = False,
                whole: bool = False) -> tuple[str, dict[str, str | None]] | None:
    """Read, convert and store one chat file; its session id and the carry to read on from,
    or None. ``live``: a sync reading a chat being written (a session already stored takes
    the live write path). ``whole``: a ``.json`` chat read whole, not taken in when its
    conversation was deleted in backscroll."""
    records = read_records(file, report, lines)
    if not records:
        return None
    converted, carry = convert(records)
    meta = converted.meta
    session_id = str_or_none(meta.get("sessionId"))
    if session_id is None:
        report.notes.append(f"{file}: no sessionId; not a Gemini CLI chat, skipped")
        return None
    if whole and deleted_here(report, f"agent:{agent_id}:gemini:{session_id}", file):
        return None
    live = live and db.session_key_of(session_id) is not None
    store_chat(db, agent_id, file, session_id, converted, report, live)
    return session_id, carry


def project_folder(file: Path, project_hash: str | None) -> str | None:
    """The folder the chat was held in: ``<slug>/.project_root`` (newer CLIs), else the
    entry of ``~/.gemini/projects.json`` whose slug is the folder's name or whose path hashes
    (sha256) to the chat's ``projectHash``."""
    chats = next((p for p in file.parents if p.name == "chats"), None)
    if chats is None:
        return None
    project = chats.parent
    try:
        marker = (project / ".project_root").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        marker = ""
    if marker:
        return marker
    registry = project.parent.parent / "projects.json"  # <home>/.gemini/projects.json
    try:
        projects = json.loads(registry.read_text(encoding="utf-8")).get("projects")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(projects, dict):
        return None
    for folder, slug in projects.items():
        if not isinstance(folder, str):
            continue
        if slug == project.name or (
                project_hash and hashlib.sha256(folder.encode()).hexdigest() == project_hash):
            return folder
    return None


def store_chat(db: AgentWriter, agent_id: str, file: Path, session_id: str,
               converted: Converted, report: ImportReport, live: bool = False) -> None:
    meta = converted.meta
    header: dict[str, Any] = {"type": "session", "version": 3, "id": session_id}
    started = str_or_none(meta.get("startTime"))
    if started:
        header["timestamp"] = started
    cwd = project_folder(file, str_or_none(meta.get("projectHash")))
    if cwd:
        header["cwd"] = cwd
    parent = file.parent.name if file.parent.parent.name == "chats" else None
    parent_key = f"agent:{agent_id}:gemini:{parent}" if parent else None
    times = converted.times
    created = iso_to_ms(started) if started else 0
    what = str_or_none(meta.get("summary")) or converted.first_prompt or file.stem
    project = Path(cwd).name if cwd else ""
    session = SessionMeta(
        key=f"agent:{agent_id}:gemini:{session_id}",
        session_id=session_id,
        spawned_by=parent_key,
        parent_key=parent_key,
        label=label_of(project, what, "subagent: " if parent else ""),
        created_at=created or (min(times) if times else None),
        updated_at=max([*times, iso_to_ms(meta.get("lastUpdated"))]) or None,
        source=SOURCE,
    )
    store_converted(db, session, [header, *converted.entries], report, file, live=live)
