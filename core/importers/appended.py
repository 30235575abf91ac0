"""A driver for JSONL formats that grow by appends, one conversation per file (Qwen Code,
Cursor's CLI agent, Factory Droid): finding the files, reading their records, storing a
whole file (a first read or an import) and reading on in a growing one with a small JSON
carry. Each format supplies a :class:`Reader` (its parsing); this module holds what they
share, so each package keeps only its own format.

A file's session is ``agent:<agent>:<source>:<session id>``; a file spawned by another
conversation (a sub-agent) names its parent's session id and is linked to it (``spawnedBy``
= ``parentSessionKey``). Entries are recognised by id on every read, so a file read again
(rewritten, or read whole after a restart) stores nothing twice.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

from ..state import StateDir
from ..storage import AgentWriter, SessionMeta
from ..transcript import iso_to_ms
from .common import (
    RESTART,
    Followed,
    ImportReport,
    NumberedLines,
    found_inside,
    import_each,
    import_start,
    json_lines,
    over_bound,
    store_converted,
)
from .format import FollowedFile

Records = list[tuple[int, dict[str, Any]]]  # (line number, the line's JSON object)


@dataclass
class Converted:
    """A file's records (or its new ones) as entries, and what its session record needs."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    carry: dict[str, Any] = field(default_factory=dict)  # JSON: what the next lines need
    header: dict[str, Any] = field(default_factory=dict)  # cwd, timestamp, … of the header
    label: str | None = None
    times: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Reader:
    """One format's parsing, as the driver asks for it."""

    source: str  # the ``source`` its sessions are stored with (the format's name)
    what: str  # as a person names its files ("Qwen Code chat")
    expected: str  # where its files are, for the message when a folder holds none
    files: Callable[[Path, ImportReport], list[Path]]  # its files under a folder, in order
    ours: Callable[[Records], bool]  # whether a file's records are the format's
    # (file, records) -> (session id, the id of the session that spawned it or None)
    session: Callable[[Path, Records], tuple[str, str | None]]
    # (file, session id, records, carry or None for a whole file, report) -> Converted
    convert: Callable[[Path, str, Records, "dict[str, Any] | None", ImportReport], Converted]


def derived_id(session_id: str, lineno: int, suffix: str = "") -> str:
    """A stable id for a line of a format without ids (as the Codex importer derives them)."""
    return hashlib.sha1(f"{session_id}:{lineno}{suffix}".encode()).hexdigest()[:16]


def file_time(file: Path) -> str:
    """The file's modification time as an ISO string (for formats that write no times)."""
    try:
        seconds = file.stat().st_mtime
    except OSError:
        seconds = datetime.now(timezone.utc).timestamp()
    moment = datetime.fromtimestamp(seconds, timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def stamp(event: dict[str, Any], ts: str | None) -> dict[str, Any]:
    """``event`` with its time set (the entry's ISO time, the message's milliseconds)."""
    if ts:
        event["timestamp"] = ts
        message = event.get("message")
        if isinstance(message, dict) and iso_to_ms(ts):
            message["timestamp"] = iso_to_ms(ts)
    return event


def read_records(file: Path, report: ImportReport, lines: NumberedLines | None) -> Records:
    """Each line's JSON object, numbered; a line that is not one is reported and skipped."""
    records: Records = []
    for lineno, _text, raw in json_lines(file, report, lines):
        if isinstance(raw, dict):
            records.append((lineno, raw))
        else:
            report.skip(file, lineno, "a line must be a JSON object")
    return records


def key_of(agent_id: str, reader: Reader, session_id: str) -> str:
    return f"agent:{agent_id}:{reader.source}:{session_id}"


def store_file(
    db: AgentWriter, agent_id: str, reader: Reader, file: Path, report: ImportReport,
    lines: NumberedLines | None = None,
) -> str | None:
    """Read (or take ``lines`` read from it), convert and store one whole file; the carry to
    read on from, or None when the file holds nothing of the format."""
    bad = ImportReport()  # reported only if the file turns out to be the format's
    records = read_records(file, bad, lines)
    if not reader.ours(records):
        long = over_bound(file, bad.skipped)
        report.skipped.extend(long)
        if records or len(bad.skipped) > len(long):
            report.notes.append(f"{file}: not a {reader.what}; skipped")
        return None
    report.skipped.extend(bad.skipped)
    session_id, parent = reader.session(file, records)
    converted = reader.convert(file, session_id, records, None, report)
    header: dict[str, Any] = {"type": "session", "version": 3, "id": session_id,
                              **converted.header}
    parent_key = key_of(agent_id, reader, parent) if parent else None
    times = converted.times
    started = iso_to_ms(header.get("timestamp")) if header.get("timestamp") else 0
    meta = SessionMeta(
        key=key_of(agent_id, reader, session_id),
        session_id=session_id,
        spawned_by=parent_key,
        parent_key=parent_key,
        label=converted.label,
        created_at=started or (min(times) if times else None),
        updated_at=max(times) if times else (started or None),
        source=reader.source,
    )
    store_converted(db, meta, [header, *converted.entries], report, file)
    return _dumps(session_id, converted.carry)


def follow_file(
    db: AgentWriter, agent_id: str, reader: Reader, file: Path, lines: NumberedLines,
    carry: str | None, report: ImportReport,
) -> Followed:
    """Store what ``lines`` add: the whole file when ``carry`` is None, else the lines after
    the ones the carry was made from (through the live write path)."""
    if carry is None:
        return Followed(store_file(db, agent_id, reader, file, report, lines))
    try:
        state = json.loads(carry)
        session_id = state.pop("sessionId")
        if not isinstance(session_id, str) or not isinstance(state, dict):
            return RESTART
    except (ValueError, TypeError, KeyError, AttributeError):
        return RESTART  # written by another version: read the file again
    records = read_records(file, report, lines)
    converted = reader.convert(file, session_id, records, state, report)
    meta = SessionMeta(key=key_of(agent_id, reader, session_id), session_id=session_id,
                       source=reader.source)
    store_converted(db, meta, converted.entries, report, file, live=True)
    return Followed(_dumps(session_id, converted.carry))


def import_files(
    state: StateDir, path: Path | str, agent: str | None, reader: Reader, default_agent: str,
) -> ImportReport:
    """``backscroll import``: a folder (its files, as ``reader.files`` finds them) or one
    file."""
    path, agent_id, report = import_start(path, agent, default_agent)
    files = (
        [path] if path.is_file()  # named by the user: followed even when it is a link
        else [p for p in reader.files(path, report) if found_inside(path, p, report)]
    )
    return import_each(
        state, agent_id, files, report,
        f"{path} holds no {reader.what} files (expected {reader.expected})",
        lambda db, file: store_file(db, agent_id, reader, file, report))


def jsonl_under(folders: Iterable[Path]) -> list[Path]:
    """The ``*.jsonl`` files directly in each folder, in order."""
    found: list[Path] = []
    for folder in folders:
        try:
            found += sorted(p for p in folder.glob("*.jsonl") if p.is_file())
        except OSError:
            continue
    return found


def text_of(value: Any) -> str:
    """A tool output or argument as text."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def _dumps(session_id: str, carry: dict[str, Any]) -> str:
    return json.dumps({**carry, "sessionId": session_id}, ensure_ascii=False,
                      separators=(",", ":"))


def follow_door(reader: Reader) -> Callable[..., Followed]:
    """The ``follow`` door of a format read by ``reader``: ``follow_file`` on the file found
    (Cursor CLI, Factory Droid, Qwen Code)."""

    def follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
               report: ImportReport, memo: dict[str, Any]) -> Followed:
        return follow_file(db, found.agent, reader, found.file, lines, carry, report)

    return follow
