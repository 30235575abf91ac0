"""Reading on in a Claude Code transcript that grows (``backscroll sync`` / ``watch``).

The records after the last sync are converted with the ``Carry`` the previous read left: the
file's session id, where the latest records' children hang (progress lines included, as
children of a progress line hang from its nearest kept ancestor), which sessions have
started, the latest tool names. When a new record needs more than that (a parent older than
the carried window, a title naming an earlier record, a sub-agent known only from progress
lines) nothing is stored and the file is read again from the start; what is stored already is
recognised by id, so that costs time, never a duplicate. The first read of a file is an
import of it.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from ...storage import AgentWriter
from ..common import RESTART, Followed, ImportReport, NumberedLines
from .convert import Carry, Converter
from .importer import import_file
from .reading import Tasks, Transcript
from .store import store_groups


def follow_transcript(
    db: AgentWriter,
    agent_id: str,
    file: Path,
    lines: NumberedLines,
    carry: str | None,
    report: ImportReport,
    tasks: Tasks,
) -> Followed:
    """Store what ``lines`` add: the whole file when ``carry`` is None, else the lines after
    the ones the carry was made from."""
    if carry is None:
        converter = import_file(db, agent_id, file, report, tasks, lines)
        return Followed(_dumps(converter.carry()) if converter is not None else None)
    try:
        before = Carry(**json.loads(carry))
    except (ValueError, TypeError):
        return RESTART  # written by another version: read the file again
    transcript = Transcript(file)
    report.skipped.extend(transcript.read(lines))
    if not transcript.records:
        return Followed(carry)
    transcript.tool_names.update(before.tool_names)
    transcript.index(tasks, before.main)
    if transcript.progress_subagents():
        return RESTART  # rebuilt from the whole file's progress lines, as an import does
    converter = Converter(transcript, agent_id, report, before)
    groups = converter.convert()
    if converter.misses:
        return RESTART
    store_groups(db, file, groups, tasks, report, live=True)
    return Followed(_dumps(converter.carry()))


def _dumps(carry: Carry) -> str:
    return json.dumps(asdict(carry), ensure_ascii=False, separators=(",", ":"))
