"""The entry point: find the transcript files under PATH and import each one (read, convert,
store)."""

from __future__ import annotations

from pathlib import Path

from ...errors import ValidationError
from ...state import StateDir
from ...storage import AgentWriter
from ..common import ImportReport, import_agent_id
from .convert import Converter
from .reading import Tasks, Transcript, is_subagent_file
from .store import store_groups

DEFAULT_AGENT = "claude-code"


def import_claude_code(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
    """Import a Claude Code projects folder, one project folder, or one transcript file."""
    path = Path(path).expanduser()
    if not path.exists():
        raise ValidationError(f"{path} does not exist")
    agent_id = import_agent_id(agent, DEFAULT_AGENT)
    files = _transcript_files(path)
    if not files:
        raise ValidationError(
            f"{path} holds no Claude Code transcripts (expected ~/.claude/projects, "
            "a project folder of *.jsonl files, or one .jsonl file)"
        )
    report = ImportReport()
    tasks: Tasks = {}
    with state.open(agent_id, write=True) as db:
        for file in files:
            _import_file(db, agent_id, file, report, tasks)
    return report


def _transcript_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    found = [p for p in path.rglob("*.jsonl") if p.is_file()]
    # Main transcripts first, so sub-agents can be labelled from their parent's Task call.
    return sorted(found, key=lambda p: (is_subagent_file(p), str(p)))


def _import_file(
    db: AgentWriter, agent_id: str, file: Path, report: ImportReport, tasks: Tasks
) -> None:
    """Convert one Claude Code ``.jsonl`` file into one or more sessions and store them."""
    transcript = Transcript(file)
    bad = transcript.read()
    if not transcript.records:
        # Nothing in the file is a Claude Code record (e.g. history.jsonl): one note, not
        # one complaint per line.
        report.notes.append(f"{file}: not a Claude Code transcript; skipped")
        return
    report.skipped.extend(bad)
    transcript.index(tasks)
    transcript.add_progress_subagents(report)
    groups = Converter(transcript, agent_id, report).convert()
    if not any(group.entries for group in groups.values()):
        report.notes.append(f"{file}: no conversation records; nothing imported")
        return
    store_groups(db, file, groups, tasks, report)
