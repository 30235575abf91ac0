"""OpenCode's doors in the format registry (``core/formats.py``): its transcripts are one
SQLite database, ``opencode.db``, read from a watermark (the SQLite source kind)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..common import ImportReport
from ..format import Doors
from ..sqlite_source import database_doors
from .legacy import read_tree
from .reading import read_new


def doors(database: str, source: str, label: str, default_agent: str,
          trees: tuple[str, ...] = ()) -> Doors:
    """The doors of a format with OpenCode's schema, its database named ``database``."""

    def read(path: Path, watermark: dict[str, Any] | None, agent: str,
             report: ImportReport) -> Any:
        if path.is_dir():  # the older JSON tree
            return read_tree(path, watermark, agent, report, source)
        return read_new(path, watermark, agent, report, source)

    return database_doors(database, read, label, default_agent, trees, same_family=same_family)


def same_family(key: str, path: str, holder: str) -> bool:
    """The database and the older tree beside it both hold the sessions migrated from one to
    the other: entries are matched by id, so neither is stored twice."""
    return Path(path).parent == Path(holder).parent


DOORS = doors("opencode.db", "opencode", "OpenCode", "opencode", trees=("storage",))
