"""The embedded SQLite backend: one database per agent, ``<state>/agents/<id>/sessions.sqlite``.

``SqliteStorage.open(agent)`` gives a reader (read-only connection: never creates, migrates
or changes a file); ``open(agent, write=True)`` a writer (creates the folders 0700 and the
file 0600, sets WAL, migrates). One ``AgentReader``/``AgentWriter`` wraps one connection: use
one per thread.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import StoreError, ValidationError
from ...keys import check_agent_id
from .connection import Handle
from .reads import Reads

if TYPE_CHECKING:
    from .writer import AgentWriter

DB_NAME = "sessions.sqlite"


class AgentReader(Handle, Reads):
    """One agent's database, read-only."""


if TYPE_CHECKING:
    AgentDB = AgentReader | AgentWriter


def __getattr__(name: str) -> Any:
    """``AgentWriter`` (and ``AgentDB``) load the write path when first asked for: a process
    that only searches never imports it."""
    if name in ("AgentWriter", "AgentDB"):
        from .writer import AgentWriter

        return AgentWriter if name == "AgentWriter" else AgentReader | AgentWriter
    raise AttributeError(name)


class SqliteStorage:
    """Per-agent SQLite files under ``<root>/agents/``."""

    def __init__(self, root: Path) -> None:
        self.root = root

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
        from .writer import AgentWriter

        return AgentWriter(path, agent_id, write=True)


def _canonical(name: str) -> bool:
    try:
        return check_agent_id(name) == name
    except ValidationError:
        return False
