"""The entry point: find the transcript files under PATH and import each one (read, convert,
store)."""

from __future__ import annotations

from pathlib import Path

from ...errors import ValidationError
from ...state import StateDir
from ...storage import AgentWriter
from ..common import (
    ImportReport,
    NumberedLines,
    each_file,
    found_inside,
    import_agent_id,
    import_path,
    over_bound,
)
from .convert import Converter
from .reading import Tasks, Transcript, is_subagent_file
from .store import store_groups

DEFAULT_AGENT = "claude-code"


def import_claude_code(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
    """Import a Claude Code projects folder, one project folder, or one transcript file."""
    path = import_path(path)
    if not path.exists():
        raise ValidationError(f"{path} does not exist")
    agent_id = import_agent_id(agent, DEFAULT_AGENT)
    report = ImportReport()
    files = _transcript_files(path, report)
    if not files and report.notes:
        return report  # only links out of PATH: noted, nothing to store
    if not files:
        raise ValidationError(
            f"{path} holds no Claude Code transcripts (expected ~/.claude/projects, "
            "a project folder of *.jsonl files, or one .jsonl file)"
        )
    tasks: Tasks = {}
    with state.open(agent_id, write=True) as db, db.importing():
        for file in files:
            with each_file(file, report):
                import_file(db, agent_id, file, report, tasks)
    return report


def _transcript_files(path: Path, report: ImportReport) -> list[Path]:
    if path.is_file():
        return [path]  # named by the user: followed even when it is a link
    found = [p for p in path.rglob("*.jsonl") if p.is_file() and found_inside(path, p, report)]
    # Main transcripts first, so sub-agents can be labelled from their parent's Task call.
    return sorted(found, key=lambda p: (is_subagent_file(p), str(p)))


def import_file(
    db: AgentWriter,
    agent_id: str,
    file: Path,
    report: ImportReport,
    tasks: Tasks,
    lines: NumberedLines | None = None,
) -> Converter | None:
    """Convert one Claude Code ``.jsonl`` file (or its ``lines`` already read) into one or
    more sessions and store them; the converter tells what a later read needs (``carry``)."""
    transcript = Transcript(file)
    bad = transcript.read(lines)
    if not transcript.records:
        whole = [line for line in bad if line.startswith(f"{file}: cannot read")]
        if whole:
            report.skipped.extend(whole)
            return None
        long = over_bound(file, bad)  # named as what they are: they say nothing of the file
        report.skipped.extend(long)
        if not long or len(long) < len(bad):
            # Nothing in the file is a Claude Code record (e.g. history.jsonl): one note, not
            # one complaint per line.
            report.notes.append(f"{file}: not a Claude Code transcript; skipped")
            return None
        converter = Converter(transcript, agent_id, report)  # only lines over the bound: a
        converter.convert()  # later read goes on after them (its carry)
        return converter
    report.skipped.extend(bad)
    transcript.index(tasks)
    transcript.add_progress_subagents(report)
    converter = Converter(transcript, agent_id, report)
    groups = converter.convert()
    if not any(group.entries for group in groups.values()):
        report.notes.append(f"{file}: no conversation records; nothing imported")
        return converter
    store_groups(db, file, groups, tasks, report)
    return converter
