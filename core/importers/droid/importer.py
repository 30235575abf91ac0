"""The entry point: find the sessions under PATH and import each one (``appended``
drives)."""

from __future__ import annotations

from pathlib import Path

from ...state import StateDir
from ..appended import Reader, Records, import_files
from ..common import ImportReport
from .convert import convert, is_line

DEFAULT_AGENT = "droid"


def _files(root: Path, report: ImportReport) -> list[Path]:
    if (root / "sessions").is_dir():  # the Factory home
        root = root / "sessions"
    return sorted(p for p in root.rglob("*.jsonl") if p.is_file())


def _session(file: Path, records: Records) -> tuple[str, str | None]:
    start = next((r for _, r in records if r.get("type") == "session_start"), {})
    own = start.get("id")
    return own if isinstance(own, str) and own else file.stem, None


READER = Reader(
    source="droid",
    what="Factory Droid session",
    expected="~/.factory/sessions with <workspace>/<session id>.jsonl files, or one file",
    files=_files,
    ours=lambda records: any(is_line(r) for _, r in records),
    session=_session,
    convert=convert,
)


def import_droid(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
    """Import a Factory sessions folder (recursively) or one session file."""
    return import_files(state, path, agent, READER, DEFAULT_AGENT)
