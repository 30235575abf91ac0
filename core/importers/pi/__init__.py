"""Import Pi and Oh My Pi sessions: ``<agent dir>/sessions/--<cwd>--/<ts>_<uuid>.jsonl``.

Pi (badlogic/pi-mono) and Oh My Pi (can1357/oh-my-pi) write OpenClaw's lineage of JSONL: a
``session`` header (id, timestamp, cwd), then entries. The lines are read by the OpenClaw
reader (``openclaw.read_events``); what differs is here (docs/importers.md, "Pi and Oh My Pi"):

- Entry ids are derived from content (``content_id``): Pi rewrites a version 1 file (no ids)
  as version 3 with new random ids when it opens it, so its own ids cannot recognise an entry
  imported before. The derived id hashes the entry without its id, its parent and the
  compaction's pointer (``firstKeptEntryIndex`` in v1, ``firstKeptEntryId`` in v3), with the
  v3 rename of the ``hookMessage`` role to ``custom`` undone; the parent becomes the derived id
  of the entry Pi's ``parentId`` names, or in a v1 file the entry before (what Pi's migration
  writes). The v1 file and its rewrite give the same entries, so nothing is stored twice.
  Two entries equal in every field (time included) are one entry.
- A compaction is an entry on the branch: what came before it stays in the history.
- ``bashExecution`` messages are tool output (shown, never indexed).
- The header is stored without its ``version`` (so the rewrite's header is the one stored).
- The header's cwd is the session's project folder; a header without one takes it from the
  folder name (``--Users-me-code--`` -> ``/Users/me/code``, lossy where a name holds ``-``).
- Keys are ``agent:<agent>:<source>:<session id>``; the source is ``pi`` or ``omp``.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from ...state import StateDir
from ...storage import AgentWriter, SessionMeta
from ...transcript import iso_to_ms
from ..common import (
    ImportReport,
    NumberedLines,
    files_under,
    import_each,
    import_start,
    label_of,
    store_converted,
)
from ..openclaw import read_events

_NOT_CONTENT = ("id", "parentId", "firstKeptEntryId", "firstKeptEntryIndex")
_NAME_RE = re.compile(r"^(?:.*_)?(?P<sid>[^_]+)\.jsonl$")
KEPT_IDS = 256  # Pi ids remembered between syncs of a growing file (an older parent: reread)


def content_id(event: dict[str, Any]) -> str:
    """The id an entry is stored under: the same for a v1 entry and its v3 rewrite."""
    body = {k: v for k, v in event.items() if k not in _NOT_CONTENT}
    message = body.get("message")
    if isinstance(message, dict) and message.get("role") == "hookMessage":
        body["message"] = {**message, "role": "custom"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "pi-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def is_transcript_name(name: str) -> bool:
    return name.endswith(".jsonl")


def cwd_of_folder(folder: Path) -> str | None:
    """``--Users-me-code--`` -> ``/Users/me/code`` (Pi writes the cwd with ``/`` as ``-``)."""
    name = folder.name
    if len(name) > 4 and name.startswith("--") and name.endswith("--"):
        return "/" + name[2:-2].replace("-", "/")
    return None


class Carry(NamedTuple):
    """What reading on in a growing file needs: the entry the next v1 entry hangs from, and
    the derived ids of Pi's latest ids (a parent older than these: the file is read again)."""

    prev: str | None = None
    ids: dict[str, str] = {}


class Converted(NamedTuple):
    entries: list[dict[str, Any]]
    carry: Carry
    complete: bool  # False: an entry named a parent (or kept entry) the carry did not hold


def convert(events: list[dict[str, Any]], carry: Carry, folder: Path) -> Converted:
    """Pi's entries with derived ids (``content_id``); the header gets its cwd."""
    ids = dict(carry.ids)
    prev = carry.prev
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    complete = True
    for index, event in enumerate(events):
        if event["type"] == "session":
            # the format version is not content: Pi's rewrite of a v1 file adds it
            header = {k: v for k, v in event.items() if k != "version"}
            if not isinstance(header.get("cwd"), str) and (cwd := cwd_of_folder(folder)):
                header["cwd"] = cwd
            out.append(header)
            continue
        own = content_id(event)
        if isinstance(event.get("id"), str):
            ids[event["id"]] = own
        if own in seen:
            continue
        seen.add(own)
        entry = {k: v for k, v in event.items() if k not in _NOT_CONTENT}
        if "id" in event:  # v2/v3: Pi's tree
            parent = event.get("parentId")
            entry["parentId"] = ids.get(parent) if parent else None
            complete &= not parent or parent in ids
        else:  # v1: a line hangs from the one before
            entry["parentId"] = prev
        if event["type"] == "compaction":
            kept = _kept(event, events, ids)
            complete &= kept is not None or not (
                "firstKeptEntryId" in event or "firstKeptEntryIndex" in event
            )
            if kept:
                entry["firstKeptEntryId"] = kept
        entry["id"] = own
        out.append(entry)
        prev = own
    recent = dict(list(ids.items())[-KEPT_IDS:])
    return Converted(out, Carry(prev, recent), complete)


def _kept(event: dict[str, Any], events: list[dict[str, Any]], ids: dict[str, str]) -> str | None:
    """The derived id of the first entry a compaction kept (v1: by index, as Pi migrates)."""
    kept = event.get("firstKeptEntryId")
    if isinstance(kept, str):
        return ids.get(kept)
    index = event.get("firstKeptEntryIndex")
    if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(events):
        target = events[index]
        return None if target["type"] == "session" else content_id(target)
    return None


def session_id_of(file: Path, header: dict[str, Any] | None) -> str:
    sid = (header or {}).get("id")
    if isinstance(sid, str) and sid:
        return sid
    match = _NAME_RE.match(file.name)
    return match.group("sid") if match else file.stem


def session_meta(agent_id: str, source: str, session_id: str, header: dict[str, Any] | None,
                 entries: list[dict[str, Any]]) -> SessionMeta:
    created = iso_to_ms((header or {}).get("timestamp")) or None
    return SessionMeta(
        key=f"agent:{agent_id}:{source}:{session_id}",
        session_id=session_id,
        label=_label(header, entries),
        created_at=created,
        updated_at=created,
        source=source,
    )


def _label(header: dict[str, Any] | None, entries: list[dict[str, Any]]) -> str | None:
    cwd = (header or {}).get("cwd")
    project = Path(cwd).name if isinstance(cwd, str) and cwd else ""
    for entry in entries:
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "user":
            text = _text(message.get("content"))
            if text:
                return label_of(project, text)
    return None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(b.get("text", "") for b in content
                        if isinstance(b, dict) and b.get("type") == "text"
                        and isinstance(b.get("text"), str)).strip()
    return ""


def import_file(db: AgentWriter, agent_id: str, source: str, file: Path, report: ImportReport,
                lines: NumberedLines | None = None) -> tuple[str, Carry] | None:
    """Read (or take ``lines`` read from it), convert and store one session file; return its
    session id and what a later read goes on from (None: nothing in it was Pi's)."""
    _texts, events, header = read_events(file, report, lines)
    if not events:
        report.notes.append(f"{file}: no events in it; nothing imported")
        return None
    if header is None:
        report.notes.append(f"{file}: no session header; not a {_LABELS[source]} session, skipped")
        return None
    converted = convert(events, Carry(), file.parent)
    session_id = session_id_of(file, header)
    meta = session_meta(agent_id, source, session_id, converted.entries[0], converted.entries)
    store_converted(db, meta, converted.entries, report, file)
    return session_id, converted.carry


SOURCES = ("pi", "omp")  # the source values (and default agents) of the two tools
_LABELS = {"pi": "Pi", "omp": "Oh My Pi"}


def import_pi(state: StateDir, path: Path, agent: str | None = None,
              source: str = "pi") -> ImportReport:
    """Import a Pi / Oh My Pi sessions folder (recursively) or one session file."""
    path, agent_id, report = import_start(path, agent, source)
    return import_each(
        state, agent_id, files_under(path, "*.jsonl", report), report,
        f"{path} holds no {_LABELS.get(source, source)} sessions (expected the agent's "
        "sessions folder with --<cwd>--/<time>_<id>.jsonl files, or one session file)",
        lambda db, file: import_file(db, agent_id, source, file, report))
