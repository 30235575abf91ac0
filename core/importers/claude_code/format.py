"""Claude Code's doors in the format registry (``core/formats.py``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...storage import AgentWriter
from ..common import Followed, ImportReport, NumberedLines
from ..format import Doors, FollowedFile
from .follow import follow_transcript
from .importer import import_claude_code


def _follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
            report: ImportReport, memo: dict[str, Any]) -> Followed:
    # what sub-agents were asked, for their labels: shared by one sync's files of an agent
    tasks = memo.setdefault("claude-code.tasks", {})
    return follow_transcript(db, found.agent, found.file, lines, carry, report, tasks)


def _is_subagent(path: str) -> bool:
    """``reading.is_subagent_file`` on a path string (main transcripts are read first)."""
    folder, name = os.path.split(path)
    return name.startswith("agent-") or os.path.basename(folder) == "subagents"


def same_family(key: str, path: str, holder: str) -> bool:
    """Two files that both feed ``key`` by design: a sub-agent session, fed by its own
    ``<session>/subagents/agent-<id>.jsonl`` (or a flat ``agent-<id>.jsonl`` beside the main
    transcript, the older layout) and by the main ``<session>.jsonl`` (its sidechain records,
    or the copies of its ``agent_progress`` lines)."""
    if ":subagent:" not in key:
        return False
    return (_inside(path, holder) or _inside(holder, path)
            or Path(path).parent == Path(holder).parent)


def _inside(file: str, main: str) -> bool:
    """``file`` lies in the folder named after transcript ``main``."""
    stem = main[: -len(".jsonl")] if main.endswith(".jsonl") else main
    return file.startswith(stem + "/") or file.startswith(stem + "\\")


DOORS = Doors(
    import_path=import_claude_code,
    follow=_follow,
    transcript=lambda name: name.endswith(".jsonl"),
    order=lambda path: (_is_subagent(path), path),
    same_family=same_family,
)
