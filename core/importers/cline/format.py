"""Cline's and Roo Code's doors in the format registry (``core/formats.py``): one reader, two
sources (``cline``, ``roo-code``); ``roo_format.py`` holds Roo Code's. Their files are rewritten
whole (``Doors.whole``): each change is read whole, entries recognised by derived id."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...state import StateDir
from ...storage import AgentWriter
from ..common import Followed, ImportReport, NumberedLines
from ..format import Doors, FollowedFile
from ..whole import dump_carry, load_carry
from . import import_task, import_tasks, is_transcript_name
from .ui import same_task


def doors(source: str) -> Doors:
    """The doors of the extension whose tasks are stored with ``source``."""

    def follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
               report: ImportReport, memo: dict[str, Any]) -> Followed:
        last = load_carry(carry)
        done = import_task(db, found.agent, source, found.file, report, live=carry is not None,
                           mark=last.get("mark"))
        # read before (a carry): what the next change adds takes the live path
        return Followed(None if done is None else dump_carry({"task": done[0], "mark": done[1]}))

    def import_path(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
        return import_tasks(state, path, agent, source=source)

    return Doors(import_path=import_path, follow=follow, transcript=is_transcript_name,
                 same_family=same_task, whole=True)


DOORS = doors("cline")
