"""The entry point: find the rollout files under PATH and import each one (read, convert,
store)."""

from __future__ import annotations

from pathlib import Path

from ...state import StateDir
from ...storage import AgentWriter
from ..common import (
    ImportReport,
    NumberedLines,
    files_under,
    import_each,
    import_start,
)
from .convert import Converted, convert
from .reading import Rollout, read_rollout
from .store import store_rollout

DEFAULT_AGENT = "codex"


def import_codex(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
    """Import a Codex sessions folder (recursively) or one rollout file."""
    path, agent_id, report = import_start(path, agent, DEFAULT_AGENT)
    return import_each(
        state, agent_id, files_under(path, "rollout-*.jsonl", report), report,
        f"{path} holds no Codex rollouts (expected ~/.codex/sessions with "
        "YYYY/MM/DD/rollout-*.jsonl files, or one rollout file)",
        lambda db, file: import_rollout(db, agent_id, file, report))


def import_rollout(
    db: AgentWriter,
    agent_id: str,
    file: Path,
    report: ImportReport,
    lines: NumberedLines | None = None,
) -> tuple[Rollout, Converted] | None:
    """Read (or take ``lines`` read from it), convert and store one rollout file."""
    rollout = read_rollout(file, report, lines)
    if rollout is None:
        return None
    converted = convert(rollout)
    if converted.inherited:
        report.notes.append(
            f"{file}: {converted.inherited} lines replayed from a parent thread skipped"
        )
    store_rollout(db, agent_id, rollout, converted, report)
    return rollout, converted
