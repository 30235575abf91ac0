"""``backscroll import opencode PATH``: an OpenCode database (``opencode.db``), or the folder
holding it, read whole (read-only) and stored; what was stored before is recognised by id."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from ...errors import ValidationError
from ...state import StateDir
from ..common import ImportReport, import_agent_id, import_path, store_converted
from ..sqlite_source import busy_or_bad


def importer(names: tuple[str, ...], trees: tuple[str, ...], read: Any, label: str,
             default_agent: str):  # noqa: ANN201
    """The import of one format of this schema (OpenCode's, Kilo's): ``read`` is its
    ``Database.read_new``."""

    def import_database(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
        path = import_path(path)
        databases = [path] if path.is_file() else [path / n for n in names
                                                    if (path / n).is_file()]
        if path.is_dir():
            databases += [path / t for t in trees if (path / t / "session").is_dir()]
        if not databases:
            raise ValidationError(f"{path} holds no {label} database (expected "
                                  f"{' or '.join(names + trees)} in it, or the database file itself)")
        agent_id = import_agent_id(agent, default_agent)
        report = ImportReport()
        with state.open(agent_id, write=True) as db, db.importing():
            for file in databases:
                try:
                    sessions, _after = read(file, None, agent_id, report)
                except sqlite3.Error as err:
                    report.skip(file, None, str(busy_or_bad(file, err)))
                    continue
                except ValidationError as err:  # an unknown schema: one sentence
                    report.skip(file, None, str(err).removeprefix(f"{file}: "))
                    continue
                for one in sessions:
                    store_converted(db, one.meta, one.events, report, file)
        return report

    return import_database
