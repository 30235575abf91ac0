"""The embedded SQLite backend: one database per agent, ``<state>/agents/<id>/sessions.sqlite``.

``SqliteStorage.open(agent)`` gives a reader (read-only connection: never creates, migrates
or changes a file); ``open(agent, write=True)`` a writer (creates the folders 0700 and the
file 0600, sets WAL, migrates). One ``AgentReader``/``AgentWriter`` wraps one connection: use
one per thread.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import StoreError, ValidationError
from ...keys import check_agent_id
from .claims import Claims
from .connection import connect
from .reads import Reads

DB_NAME = "sessions.sqlite"


class _Handle:
    def __init__(self, path: Path, agent_id: str, write: bool) -> None:
        self.path = path
        self.agent_id = agent_id
        self.conn = connect(path, write)

    @property
    def location(self) -> str:
        return str(self.path)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self):  # noqa: ANN204 - returns the concrete class
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AgentReader(_Handle, Reads):
    """One agent's database, read-only."""


class AgentWriter(_Handle, Claims):
    """One agent's database, for the write path, imports and reconciliation."""


AgentDB = AgentReader | AgentWriter


class SqliteStorage:
    """Per-agent SQLite files under ``<root>/agents/``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def describe(self) -> str:
        return f"SQLite files in {self.root / 'agents'}"

    def available(self) -> bool:
        return self.root.is_dir()

    def require(self) -> None:
        if not self.available():
            raise StoreError(
                f"no backscroll state dir at {self.root}: create one with "
                "`backscroll import openclaw PATH`, `backscroll append KEY`, or try "
                "`backscroll demo` (set --state-dir or BACKSCROLL_STATE_DIR to look elsewhere)"
            )

    def child_env(self) -> dict[str, str]:
        return {"BACKSCROLL_DATABASE_URL": ""}  # the files, even if the parent's env names a server

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
            return AgentReader(path, agent_id, write=False)
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
        return AgentWriter(path, agent_id, write=True)


def _canonical(name: str) -> bool:
    try:
        return check_agent_id(name) == name
    except ValidationError:
        return False
