"""Zed's doors in the format registry (``core/formats.py``): its agent threads are one
SQLite database, ``threads.db``, read from a watermark (the SQLite source kind)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..common import ImportReport
from ..format import Database, Doors
from ..opencode.importer import importer
from ..sqlite_source import not_followed
from .reading import read_new


def _read(path: Path, watermark: dict[str, Any] | None, agent: str,
          report: ImportReport) -> Any:
    return read_new(path, watermark, agent, report)


DOORS = Doors(
    import_path=importer(("threads.db",), (), _read, "Zed", "zed"),
    follow=not_followed,
    transcript=lambda name: name == "threads.db",
    database=Database(("threads.db",), _read),
)
