"""Codex's doors in the format registry (``core/formats.py``)."""

from __future__ import annotations

from typing import Any

from ...storage import AgentWriter
from ..common import Followed, ImportReport, NumberedLines
from ..format import Doors, FollowedFile
from .follow import follow_rollout
from .importer import import_codex


def _follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
            report: ImportReport, memo: dict[str, Any]) -> Followed:
    return follow_rollout(db, found.agent, found.file, lines, carry, report)


def is_rollout(name: str) -> bool:
    return name.startswith("rollout-") and name.endswith((".jsonl", ".jsonl.zst"))


DOORS = Doors(
    import_path=import_codex,
    follow=_follow,
    transcript=is_rollout,
)
