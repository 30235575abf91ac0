"""What every importer shares: the report, reading JSON lines with ``file:line: reason``,
the agent id to import into, short labels, and storing converted sessions.

Importers never import each other; what two of them need lives here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..errors import ValidationError
from ..keys import check_agent_id
from ..storage import AgentWriter, SessionMeta
from ..transcript import active_branch, decode_line, moves_leaf, parse_event

LABEL_CHARS = 80


@dataclass
class ImportReport:
    """What an import did: sessions touched, events added, lines skipped (``file:line: why``)."""

    sessions: int = 0
    events: int = 0
    keys: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, key: str, events: int) -> None:
        self.sessions += 1
        self.events += events
        self.keys.append(key)

    def skip(self, file: Path, lineno: int | None, reason: str) -> None:
        self.skipped.append(f"{file}:{lineno}: {reason}" if lineno else f"{file}: {reason}")

    def as_json(self) -> dict[str, object]:
        return {
            "sessions": self.sessions,
            "events": self.events,
            "skipped": self.skipped,
            "notes": self.notes,
        }


def json_lines(file: Path, report: ImportReport) -> Iterator[tuple[int, str, Any]]:
    """(line number, text, decoded value) of each non-blank line; a line that is not UTF-8
    or not JSON is reported as ``file:line: reason`` and skipped, never raised."""
    try:
        handle = file.open("rb")
    except OSError as err:
        report.skip(file, None, f"cannot read ({err.strerror or err})")
        return
    with handle:
        for lineno, raw in enumerate(handle, start=1):
            raw = raw.strip()
            if not raw:
                continue
            try:
                value = decode_line(raw)
            except ValidationError as err:
                report.skip(file, lineno, str(err))
                continue
            yield lineno, raw.decode("utf-8"), value


def import_agent_id(agent: str | None, default: str) -> str:
    """The agent id to import into: the one given (checked), else the importer's default."""
    return check_agent_id(agent if agent is not None else default)


def shorten(text: str, limit: int = LABEL_CHARS) -> str:
    """One line of at most ``limit`` characters, cut at a word when possible."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,.;:") + "…"


def store_converted(
    db: AgentWriter,
    meta: SessionMeta,
    events: list[dict[str, Any]],
    report: ImportReport,
    file: Path,
) -> None:
    """Store converted events (header first) and record the session in the report.

    When some of the events were stored by an earlier import and the new ones fill a gap (a
    line that was malformed then), the stored order no longer ends at the transcript's leaf;
    a ``leaf`` control then points the session back at it, so the active branch is the one
    the source file has.
    """
    lines: list[str] = []
    parsed: list[dict[str, Any]] = []
    for event in events:
        try:
            parsed.append(parse_event(event))
        except ValidationError as err:  # defensive: converted data always passes
            report.skip(file, None, f"entry {event.get('id')}: {err}")
            continue
        lines.append(json.dumps(event, ensure_ascii=False, separators=(",", ":")))
    key, added = db.import_session(meta, lines, parsed)
    if 0 < added < len(lines):
        leaf = next((e["id"] for e in reversed(parsed) if moves_leaf(e) and e.get("id")), None)
        session = db.session(key)
        if leaf is not None and session is not None:
            stored = db.events(session.pk)
            if active_branch(stored).leaf != leaf:
                control = {"type": "leaf", "targetId": leaf, "afterSeq": session.last_seq}
                db.import_session(meta, [json.dumps(control, separators=(",", ":"))], [control])
                added += 1
    report.add(key, added)
