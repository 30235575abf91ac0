"""The state directory: where backscroll keeps what it knows, and the storage it reads.

``<state>/config.toml`` holds the caller policy; the transcripts and their index are in the
storage: by default one SQLite database per agent under ``<state>/agents/`` (SPEC 2).
Every path that names an agent goes through the storage's ``db_path``, which checks the id.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal, overload

from . import private
from .errors import StoreError
from .storage.sqlite import AgentReader, SqliteStorage

if TYPE_CHECKING:
    from .storage.sqlite.writer import AgentWriter


def default_state_dir() -> Path:
    env = os.environ.get("BACKSCROLL_STATE_DIR")
    if env:
        return Path(env).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "backscroll"


class StateDir:
    """A state directory and its storage. Cheap to make and to pickle (a copy holds no
    connection)."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path).expanduser() if path is not None else default_state_dir()
        self.storage = SqliteStorage(self.path)

    @property
    def config_path(self) -> Path:
        return self.path / "config.toml"

    def exists(self) -> bool:
        return self.storage.available()

    def require(self) -> None:
        """Raise one sentence when there is nothing to read."""
        private.require_state_folder(self.path)
        if not self.storage.available():
            raise StoreError(
                f"no backscroll state dir at {self.path}: create one with "
                "`backscroll import openclaw PATH`, `backscroll append KEY`, or try "
                "`backscroll demo` (set --state-dir or BACKSCROLL_STATE_DIR to look elsewhere)"
            )

    def agents(self) -> list[str]:
        return self.storage.agents()

    def db_path(self, agent_id: str) -> Path:
        return self.storage.db_path(agent_id)

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
        """One agent's database: a reader, or with ``write`` a writer (created if missing)."""
        return self.storage.open(agent_id, write=write)
