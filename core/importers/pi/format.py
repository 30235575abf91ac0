"""Pi's and Oh My Pi's doors in the format registry (``core/formats.py``): one reader, two
sources (``pi``, ``omp``); ``omp_format.py`` holds Oh My Pi's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...state import StateDir
from ...storage import AgentWriter
from ..common import Followed, ImportReport, NumberedLines
from ..format import Doors, FollowedFile
from . import import_pi, is_transcript_name
from .follow import follow_pi


def doors(source: str) -> Doors:
    """The doors of the tool whose sessions are stored with ``source``."""

    def follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
               report: ImportReport, memo: dict[str, Any]) -> Followed:
        return follow_pi(db, found.agent, source, found.file, lines, carry, report)

    def import_path(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
        return import_pi(state, path, agent, source=source)

    return Doors(import_path=import_path, follow=follow, transcript=is_transcript_name)


DOORS = doors("pi")
