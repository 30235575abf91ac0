"""The entry point: find the transcripts under PATH and import each one (``appended``
drives)."""

from __future__ import annotations

from pathlib import Path

from ...state import StateDir
from ..appended import Reader, Records, import_files, jsonl_under
from ..common import ImportReport
from .convert import convert, is_line

DEFAULT_AGENT = "cursor"


def transcript_folders(root: Path) -> list[Path]:
    """The folders holding transcripts under a Cursor ``projects`` folder (or the Cursor
    home, or one project's ``agent-transcripts``): each session's folder, then its
    ``subagents`` folder (a parent is read before its sub-agents)."""
    if (root / "projects").is_dir():
        root = root / "projects"
    if root.name == "agent-transcripts":
        holders = [root]
    elif (root / "agent-transcripts").is_dir():
        holders = [root / "agent-transcripts"]
    else:
        holders = sorted(p for p in root.glob("*/agent-transcripts") if p.is_dir())
    found: list[Path] = []
    for holder in holders:
        found.append(holder)  # an older flat layout: <session id>.jsonl right here
        for session in sorted(p for p in holder.iterdir() if p.is_dir()):
            found.append(session)
            if (session / "subagents").is_dir():
                found.append(session / "subagents")
    if not found and root.name != "projects" and any(root.glob("*.jsonl")):
        found.append(root)  # a session's own folder
    return found


def _files(root: Path, report: ImportReport) -> list[Path]:
    return jsonl_under(transcript_folders(root))


def _session(file: Path, records: Records) -> tuple[str, str | None]:
    if file.parent.name == "subagents":
        return file.stem, file.parent.parent.name
    return file.stem, None


READER = Reader(
    source="cursor",
    what="Cursor agent transcript",
    expected="~/.cursor/projects with <project>/agent-transcripts/<session id>/"
             "<session id>.jsonl files, or one file",
    files=_files,
    ours=lambda records: any(is_line(r) for _, r in records),
    session=_session,
    convert=convert,
)


def import_cursor_cli(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
    """Import a Cursor ``projects`` folder (or one project's transcripts) or one file."""
    return import_files(state, path, agent, READER, DEFAULT_AGENT)
