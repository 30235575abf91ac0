"""Reading one Codex rollout file into a :class:`Rollout`: each line in one shape
(``{"type", "timestamp"?, "payload"}``, whichever rollout format wrote it), the run's
``session_meta`` and the session id."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..common import ImportReport, NumberedLines, json_lines, over_bound

_ROLLOUT_UUID_RE = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$", re.IGNORECASE
)
_ROLLOUT_TYPES = frozenset(
    {
        "session_meta",
        "response_item",
        "compacted",
        "turn_context",
        "event_msg",
        "inter_agent_communication",
        "inter_agent_communication_metadata",
        "world_state",
    }
)
# Bare ResponseItems, as the oldest rollouts wrote them (no envelope).
_RESPONSE_ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
    }
)


@dataclass
class Rollout:
    """One rollout's lines (``(line number, record)``), its own ``session_meta`` payload (or
    ``{}``) and its session id."""

    file: Path
    session_id: str
    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


def read_rollout(
    file: Path, report: ImportReport, lines: NumberedLines | None = None
) -> Rollout | None:
    """The rollout in ``file`` (or in its ``lines`` already read), its bad lines reported; None
    (with a note if the file had lines) when nothing in it is a rollout's."""
    bad = ImportReport()  # reported only if the file turns out to be a rollout
    records = read_records(file, bad, lines, first=True)
    if not any(r["type"] in ("session_meta", "response_item") for _, r in records):
        long = over_bound(file, bad.skipped)  # named as what they are, not "not a rollout"
        report.skipped.extend(long)
        if records or len(bad.skipped) > len(long):
            report.notes.append(f"{file}: not a Codex rollout; skipped")
        return None
    report.skipped.extend(bad.skipped)
    own = next((r["payload"] for _, r in records if r["type"] == "session_meta"), None)
    meta = own or {}
    found = _ROLLOUT_UUID_RE.search(file.name)
    session_id = (
        str_or_none(meta.get("id"))
        or (found.group(1).lower() if found else None)
        or file.stem
    )
    return Rollout(file, session_id, records, meta)


def read_records(
    file: Path, report: ImportReport, lines: NumberedLines | None, first: bool = False
) -> list[tuple[int, dict[str, Any]]]:
    """Each line in the one shape, numbered; bad lines reported. ``first``: the lines start
    the file (the oldest format's first line is its session meta)."""
    records: list[tuple[int, dict[str, Any]]] = []
    for lineno, _text, raw in json_lines(file, report, lines):
        record, problem = _normalize(raw, first=first and not records and not report.skipped)
        if problem:
            report.skip(file, lineno, problem)
        elif record is not None:
            records.append((lineno, record))
    return records


def str_or_none(value: Any) -> str | None:
    """``value`` if it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def _normalize(raw: Any, first: bool) -> tuple[dict[str, Any] | None, str | None]:
    """A rollout line as ``{"type", "timestamp"?, "payload"}``, or (None, reason), or (None, None)
    for lines that carry nothing (old ``record_type: state`` lines)."""
    if not isinstance(raw, dict):
        return None, "a rollout line must be a JSON object"
    kind = raw.get("type")
    if "payload" in raw or kind in _ROLLOUT_TYPES:
        if not isinstance(kind, str) or not kind:
            return None, 'a rollout line needs a string "type"'
        if not isinstance(raw.get("payload"), dict):
            return None, '"payload" must be a JSON object'
        return raw, None
    if raw.get("record_type") == "state":
        return None, None
    if kind in _RESPONSE_ITEM_TYPES:  # oldest format: bare ResponseItems
        return {"type": "response_item", "timestamp": raw.get("timestamp"), "payload": raw}, None
    if first and isinstance(raw.get("id"), str) and kind is None:  # oldest format's first line
        return {"type": "session_meta", "timestamp": raw.get("timestamp"), "payload": raw}, None
    if not isinstance(kind, str) or not kind:
        return None, 'a rollout line needs a string "type"'
    return None, None  # an unknown line type from a newer Codex: ignored
