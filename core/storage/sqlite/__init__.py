"""The embedded SQLite backend: one database per agent, ``<state>/agents/<id>/sessions.sqlite``.

``SqliteStorage.open(agent)`` gives a reader (read-only connection: never creates, migrates
or changes a file); ``open(agent, write=True)`` a writer (creates the folders 0700 and the
file 0600 whatever the umask, tightens looser ones of its own, sets WAL, migrates). One
``AgentReader``/``AgentWriter`` wraps one connection: use one per thread. A reader's
connection is kept by its thread for the next reader of the same file (``handle.Handle``).
The writer classes load on first use (``writer.py``): a process that only searches never
imports the write path.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ... import file_modes
from ...errors import StoreError, ValidationError
from ...keys import check_agent_id
from ..model import default_host
from .browsing import BrowseReads
from .driver import connect
from .facts import FactsStore
from .sources import SourceReads

if TYPE_CHECKING:
    from .writer import AgentWriter

DB_NAME = "sessions.sqlite"
STALE_TEMP_S = 60  # a temporary database older than this was left by a crash


class AgentReader(SourceReads, FactsStore, BrowseReads):
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

    shared = False  # capability flags: see interface.Storage
    has_files = True

    def __init__(self, root: Path, host: Callable[[], str] | None = None) -> None:
        self.root = root
        self.host = host or default_host

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

    def unwritable(self, agent_id: str) -> str | None:
        """Why writes to this agent's database would fail (a read-only file or folder), in
        one sentence; None when nothing is known against them."""
        path = self.db_path(agent_id)
        if path.is_file() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
            return (
                f"{path} is read-only: nothing new can be stored in it, and sessions waiting "
                "to be indexed there stay out of results"
            )
        return None

    def open(self, agent_id: str, write: bool = False) -> AgentReader | AgentWriter:
        agent_id = check_agent_id(agent_id)
        path = self.db_path(agent_id)
        if not write:
            if not path.is_file():
                raise StoreError(f"agent {agent_id!r} has no database at {path}")
            self._warn_if_loose(path)
            reader = AgentReader(path, agent_id, write=False)
            reader.host = self.host()
            return reader
        file_modes.require_state_folder(self.root)
        try:
            file_modes.make_dir(self.root, tighten=False)  # perhaps a folder the user chose
            for folder in (self.root / "agents", path.parent):
                file_modes.make_dir(folder, tighten=True)
            if not path.exists():
                _create(path)
            file_modes.check_database(path, tighten=True)
        except OSError as err:
            raise StoreError(
                f"cannot create {path.parent}: {err.strerror or err} (choose a writable --state-dir)"
            ) from None
        from .writer import AgentWriter

        writer = AgentWriter(path, agent_id, write=True)
        writer.host = self.host()
        return writer

    def _warn_if_loose(self, path: Path) -> None:
        """A reader never changes a file: it only says once when a folder or the database is
        looser than 0700 / 0600 (``file_modes.py``)."""
        for folder in (self.root, self.root / "agents", path.parent):
            file_modes.check(folder, file_modes.FOLDER_MODE, tighten=False)
        file_modes.check_database(path, tighten=False)


def _create(path: Path) -> None:
    """A new database appears whole or not at all: it is made (0600, WAL, every migration)
    under a temporary name and linked into place, so a crash while creating it never leaves
    an empty file that would read as a broken database. A concurrent creator that won keeps
    its file; names left by a creator that crashed are removed."""
    for stale in path.parent.glob(f"{path.name}.new-*"):
        if time.time() - stale.stat().st_mtime > STALE_TEMP_S:
            stale.unlink(missing_ok=True)
    temp = path.with_name(f"{path.name}.new-{os.getpid()}-{threading.get_ident()}")
    try:
        file_modes.make_file(temp)
        connect(temp, write=True).close()  # the last connection's close removes its WAL
        try:
            os.link(temp, path)  # never over an existing file, unlike a rename
        except FileExistsError:
            pass
        except OSError:  # a filesystem without hard links
            if not path.exists():
                os.replace(temp, path)
    finally:
        for name in (temp, Path(f"{temp}-wal"), Path(f"{temp}-shm")):
            name.unlink(missing_ok=True)


def _canonical(name: str) -> bool:
    try:
        return check_agent_id(name) == name
    except ValidationError:
        return False
