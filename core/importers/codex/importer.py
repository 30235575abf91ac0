"""The entry point: find the rollout files under PATH and import each one (read, convert,
store)."""

from __future__ import annotations

from pathlib import Path

from ...errors import ValidationError
from ...state import StateDir
from ...storage import AgentWriter
from ..common import ImportReport, import_agent_id
from .convert import convert
from .reading import read_rollout
from .store import store_rollout

DEFAULT_AGENT = "codex"


def import_codex(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
    """Import a Codex sessions folder (recursively) or one rollout file."""
    path = Path(path).expanduser()
    if not path.exists():
        raise ValidationError(f"{path} does not exist")
    agent_id = import_agent_id(agent, DEFAULT_AGENT)
    files = (
        [path]
        if path.is_file()
        else sorted(p for p in path.rglob("rollout-*.jsonl") if p.is_file())
    )
    if not files:
        raise ValidationError(
            f"{path} holds no Codex rollouts (expected ~/.codex/sessions with "
            "YYYY/MM/DD/rollout-*.jsonl files, or one rollout file)"
        )
    report = ImportReport()
    with state.open(agent_id, write=True) as db:
        for file in files:
            _import_rollout(db, agent_id, file, report)
    return report


def _import_rollout(db: AgentWriter, agent_id: str, file: Path, report: ImportReport) -> None:
    rollout = read_rollout(file, report)
    if rollout is None:
        return
    converted = convert(rollout)
    if converted.inherited:
        report.notes.append(
            f"{file}: {converted.inherited} lines replayed from a parent thread skipped"
        )
    store_rollout(db, agent_id, rollout, converted, report)
