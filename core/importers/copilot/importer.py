"""Finding Copilot CLI sessions under PATH (``~/.copilot``), reading one (``events.jsonl`` or
a legacy ``<id>.json``) and storing it as one session with its header and label."""

from __future__ import annotations

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
from .convert import Carry, Converted, convert_events, convert_legacy, str_or_none

DEFAULT_AGENT = "copilot"
SOURCE = "copilot"
MAX_JSON_BYTES = 256 * 1024 * 1024
_LEGACY = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                     r"[0-9a-fA-F]{12}\.json$")


def is_session_file(name: str) -> bool:
    return name == "events.jsonl" or bool(_LEGACY.match(name))


def import_copilot(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
    """Import a Copilot CLI folder (``~/.copilot``: ``session-state/<id>/events.jsonl`` and
    ``history-session-state/<id>.json``) or one session file."""
    path, agent_id, report = import_start(path, agent, DEFAULT_AGENT)
    files = files_under(path, "*.json*", report, lambda p: is_session_file(p.name))
    return import_each(
        state, agent_id, files, report,
        f"{path} holds no Copilot CLI sessions (expected ~/.copilot with "
        "session-state/<id>/events.jsonl or history-session-state/<id>.json, or one file)",
        lambda db, file: import_session_file(db, agent_id, file, report))


def _newer_layout(file: Path, session_id: str) -> bool:
    """A legacy file whose session the newer layout holds too (the CLI moved it)."""
    return (file.parent.parent / "session-state" / session_id / "events.jsonl").is_file()


def read_events(file: Path, report: ImportReport,
                lines: NumberedLines | None) -> list[tuple[int, dict[str, Any]]]:
    records = []
    for lineno, _text, value in json_lines(file, report, lines):
        if isinstance(value, dict) and isinstance(value.get("type"), str):
            records.append((lineno, value))
        else:
            report.skip(file, lineno, 'a Copilot event must be a JSON object with a "type"')
    return records


def import_session_file(db: AgentWriter, agent_id: str, file: Path, report: ImportReport,
                        lines: NumberedLines | None = None,
                        live: bool = False) -> tuple[str, Carry | None] | None:
    """Read, convert and store one session file: its session id and (``events.jsonl``) the
    carry to read on from, or None."""
    carry: Carry | None = None
    if file.name == "events.jsonl":
        records = read_events(file, report, lines)
        if not records:
            return None
        converted, carry = convert_events(file.parent.name, records)
    else:
        try:
            with open_regular(file) as handle:
                raw = handle.read(MAX_JSON_BYTES + 1)
            if len(raw) > MAX_JSON_BYTES:
                raise ValidationError(f"over {MAX_JSON_BYTES:,} bytes; not read")
            value = decode_json(raw, max_bytes=max(MAX_LINE_BYTES, len(raw)))
        except OSError as err:
            report.skip(file, None, f"cannot read ({err.strerror or err})")
            return None
        except ValidationError as err:
            report.skip(file, None, f"not a Copilot session ({err}); skipped")
            return None
        if not isinstance(value, dict) or not isinstance(value.get("timeline"), list):
            report.notes.append(f"{file}: not a Copilot CLI session (no timeline); skipped")
            return None
        session_id = str_or_none(value.get("sessionId")) or file.stem
        if _newer_layout(file, session_id):
            report.notes.append(f"{file}: session {session_id} is read from session-state/; "
                                "this older copy is not taken in")
            return None
        converted = convert_legacy(value, session_id)
    session_id = converted.session_id or file.stem
    if file.name != "events.jsonl" and deleted_here(
            report, f"agent:{agent_id}:copilot:{session_id}", file):
        return None  # an older session file, read whole: deleted in backscroll
    live = live and db.session_key_of(session_id) is not None
    store_session(db, agent_id, file, session_id, converted, report, live)
    return session_id, carry


def store_session(db: AgentWriter, agent_id: str, file: Path, session_id: str,
                  converted: Converted, report: ImportReport, live: bool) -> None:
    header: dict[str, object] = {"type": "session", "version": 3, "id": session_id}
    if converted.started:
        header["timestamp"] = converted.started
    if converted.cwd:
        header["cwd"] = converted.cwd
    times = converted.times
    created = iso_to_ms(converted.started) if converted.started else 0
    project = Path(converted.cwd).name if converted.cwd else ""
    session = SessionMeta(
        key=f"agent:{agent_id}:copilot:{session_id}",
        session_id=session_id,
        label=label_of(project, converted.first_prompt or session_id),
        created_at=created or (min(times) if times else None),
        updated_at=max(times) if times else (created or None),
        source=SOURCE,
    )
    store_converted(db, session, [header, *converted.entries], report, file, live=live)
