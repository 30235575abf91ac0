"""The state directory: where backscroll keeps what it knows, and the storage it reads.

``<state>/config.toml`` holds the caller policy; the transcripts and their index are in the
storage: by default one SQLite database per agent under ``<state>/agents/`` (SPEC 2), or with
a database URL (``--database URL`` or ``$BACKSCROLL_DATABASE_URL``) one PostgreSQL database
shared by a team (SPEC 13). The config stays in the local state dir either way.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, overload

from . import file_modes
from .hosts import MachineHost
from .storage import AgentReader, AgentWriter, Storage, open_storage

DATABASE_URL_ENV = "BACKSCROLL_DATABASE_URL"


def default_state_dir() -> Path:
    env = os.environ.get("BACKSCROLL_STATE_DIR")
    if env:
        return Path(env).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "backscroll"


def default_database_url() -> str:
    """``$BACKSCROLL_DATABASE_URL``; empty means the embedded SQLite files."""
    return os.environ.get(DATABASE_URL_ENV, "").strip()


class StateDir:
    """A state directory and its storage. Cheap to make and to pickle (nothing is opened).

    ``database_url``: ``None`` takes ``$BACKSCROLL_DATABASE_URL``; ``""`` forces the
    embedded SQLite files; a ``postgresql://`` URL the server.
    """

    def __init__(self, path: Path | str | None = None, database_url: str | None = None,
                 host: str | None = None) -> None:
        self.path = Path(path).expanduser() if path is not None else default_state_dir()
        url = default_database_url() if database_url is None else database_url
        # This machine's label (``hosts.py``): ``host``, else config.toml's, else the hostname.
        self.machine_host = MachineHost(self.path, host)
        self.storage: Storage = open_storage(self.path, url, self.machine_host)
        # A server others read (a team's PostgreSQL): what is stored there is shared.
        self.shared = self.storage.shared

    @property
    def host(self) -> str:
        """This machine's host label: the host its sessions are stored under."""
        return self.machine_host()

    @property
    def config_path(self) -> Path:
        return self.path / "config.toml"

    def describe(self) -> str:
        """The storage backend and where it is, for people (never a password)."""
        return self.storage.describe()

    def exists(self) -> bool:
        return self.storage.available()

    def require(self) -> None:
        """Raise one sentence when there is nothing to read (or the state dir, which holds the
        config with either backend, is a file)."""
        file_modes.require_state_folder(self.path)
        self.storage.require()

    def agents(self) -> list[str]:
        return self.storage.agents()

    def db_path(self, agent_id: str) -> Path:
        """The SQLite file of an agent (the embedded backend only: tests and tools that look
        at the file itself)."""
        if not self.storage.has_files:
            raise AttributeError(f"{self.storage.describe()} keeps no file per agent")
        return self.storage.db_path(agent_id)  # type: ignore[attr-defined]

    def unwritable(self, agent_id: str) -> str | None:
        """Why writes to this agent would fail (a read-only database), or None."""
        return self.storage.unwritable(agent_id)

    @overload
    def open(self, agent_id: str) -> AgentReader: ...
    @overload
    def open(self, agent_id: str, write: Literal[False]) -> AgentReader: ...
    @overload
    def open(self, agent_id: str, write: Literal[True]) -> AgentWriter: ...

    def open(self, agent_id: str, write: bool = False) -> AgentReader | AgentWriter:
        """One agent's data: a reader, or with ``write`` a writer (created if missing)."""
        return self.storage.open(agent_id, write=write)
