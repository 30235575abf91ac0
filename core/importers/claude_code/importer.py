"""The entry point: find the transcript files under PATH and import each one (read, convert,
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
    over_bound,
)
from .convert import Converter
from .reading import Tasks, Transcript, is_subagent_file
from .store import store_groups

DEFAULT_AGENT = "claude-code"


def import_claude_code(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
    """Import a Claude Code projects folder, one project folder, or one transcript file."""
    path, agent_id, report = import_start(path, agent, DEFAULT_AGENT)
    # Main transcripts first, so sub-agents can be labelled from their parent's Task call.
    files = sorted(files_under(path, "*.jsonl", report), key=lambda p: (is_subagent_file(p), str(p)))
    tasks: Tasks = {}
    return import_each(
        state, agent_id, files, report,
        f"{path} holds no Claude Code transcripts (expected ~/.claude/projects, "
        "a project folder of *.jsonl files, or one .jsonl file)",
        lambda db, file: import_file(db, agent_id, file, report, tasks))


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
