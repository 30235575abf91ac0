"""The embedded SQLite backend: one database per agent, ``<state>/agents/<id>/sessions.sqlite``.

``SqliteStorage.open(agent)`` gives a reader (read-only connection: never creates, migrates
or changes a file); ``open(agent, write=True)`` a writer (creates the folders 0700 and the
file 0600, sets WAL, migrates). One ``AgentReader``/``AgentWriter`` wraps one connection: use
one per thread. With ``keep_readers`` a reader's connection stays open for the next reader of
the same database in the same thread (``connection.KeptReaders``).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Callable

from ...errors import StoreError, ValidationError
from ...keys import check_agent_id
from .claims import Claims
from .connection import KeptReaders, connect
from .sources import SourceReads, SourceWrites

DB_NAME = "sessions.sqlite"


class _Handle:
    def __init__(
        self,
        path: Path,
        agent_id: str,
        conn: sqlite3.Connection,
        release: Callable[[], None] | None = None,
    ) -> None:
        self.path = path
        self.agent_id = agent_id
        self.conn = conn
        self._release = release or conn.close  # a kept connection is given back, not closed

    def close(self) -> None:
        self._release()

    def __enter__(self):  # noqa: ANN204 - returns the concrete class
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AgentReader(_Handle, SourceReads):
    """One agent's database, read-only."""


class AgentWriter(_Handle, Claims, SourceWrites):
    """One agent's database, for the write path, imports and reconciliation."""


AgentDB = AgentReader | AgentWriter


class SqliteStorage:
    """Per-agent SQLite files under ``<root>/agents/``."""

    def __init__(self, root: Path, keep_readers: bool = False) -> None:
        self.root = root
        self._kept = KeptReaders() if keep_readers else None

    def describe(self) -> str:
        return f"sqlite ({self.root / 'agents'})"

    def available(self) -> bool:
        return self.root.is_dir()

    def agents(self) -> list[str]:
        """Agent folders holding a database; a folder whose name is not a canonical agent id
        (made by hand, or by an old version) is not an agent."""
        folder = self.root / "agents"
        if not folder.is_dir():
            return []
        return sorted(
            p.name for p in folder.iterdir() if _canonical(p.name) and (p / DB_NAME).is_file()
        )

    def db_path(self, agent_id: str) -> Path:
        """The one door from an agent id to the filesystem: the id is checked here."""
        return self.root / "agents" / check_agent_id(agent_id) / DB_NAME

    def open(self, agent_id: str, write: bool = False) -> AgentReader | AgentWriter:
        agent_id = check_agent_id(agent_id)
        path = self.db_path(agent_id)
        if not write:
            if not path.is_file():
                raise StoreError(f"agent {agent_id!r} has no database at {path}")
            if self._kept is not None:
                return AgentReader(path, agent_id, *self._kept.take(path))
            return AgentReader(path, agent_id, connect(path, write=False))
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            for folder in (self.root / "agents", path.parent):
                folder.mkdir(mode=0o700, exist_ok=True)
            if not path.exists():
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        except OSError as err:
            raise StoreError(
                f"cannot create {path.parent}: {err.strerror or err} (choose a writable --state-dir)"
            ) from None
        return AgentWriter(path, agent_id, connect(path, write=True))


def _canonical(name: str) -> bool:
    try:
        return check_agent_id(name) == name
    except ValidationError:
        return False
