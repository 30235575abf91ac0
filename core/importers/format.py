"""What each importer package exports for the format registry (``core/formats.py``): its
``DOORS``, how an import or a sync reaches the package's code (docs/importers.md, "Adding a
format").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, NamedTuple, Protocol

if TYPE_CHECKING:
    from ..state import StateDir
    from ..storage import AgentWriter, SessionMeta
    from .common import Followed, ImportReport, NumberedLines


class FollowedFile(Protocol):
    """A transcript file as ``sync`` found it (``sources.scan.FoundFile``)."""

    path: str
    agent: str  # the agent its sessions are stored under
    folder: Path | None  # a format with session folders: the one it is in

    @property
    def file(self) -> Path: ...


# (db, file, its new lines, the carry the last read left or None, report, a scratch dict that
# lives for one source's files of one agent in one sync) -> what the next read goes on from
Follow = Callable[
    ["AgentWriter", FollowedFile, "NumberedLines", "str | None", "ImportReport", dict[str, Any]],
    "Followed",
]
# (db, the changed session-store file, report, keys deleted from it, the same scratch dict)
FollowStore = Callable[
    ["AgentWriter", FollowedFile, "ImportReport", frozenset[str], dict[str, Any]], None
]


class SessionRead(NamedTuple):
    """One session's entries as a database reader read them (``Database.read_new``): its
    record and its events (a header first; entries matched by id)."""

    meta: SessionMeta
    events: list[dict[str, Any]]


@dataclass(frozen=True)
class Database:
    """A format whose transcripts are SQLite databases (the SQLite source kind,
    ``importers/sqlite_source.py``): where its databases are in a source folder, and its
    reader. ``read_new(path, watermark, agent, report)`` opens ``path`` read-only
    (``sqlite_source.open_readonly``) and returns each session with something new since
    ``watermark`` (the JSON object the last read returned; None: everything), stored under
    ``agent``, and the new watermark; a ``sqlite3.Error`` it lets through is one sentence.
    A format that stores what it reads itself (through its own importer's path) gives
    ``store(db, path, watermark, agent, report) -> new watermark`` instead."""

    names: tuple[str, ...]  # its databases' file names at the source's top
    read_new: Callable[[Path, dict[str, Any] | None, str, ImportReport],
                       tuple[list[SessionRead], dict[str, Any]]] | None = None
    # folders at the source's top read the same way (a tree of files rewritten whole, as
    # OpenCode's older ``storage/``): ``read_new`` is given the folder
    trees: tuple[str, ...] = ()
    # where its databases are when not at the top by name: (path, the agent it names or
    # None) under a source folder (OpenClaw's ``agents/<id>/agent/*.sqlite``)
    locate: Callable[[Path], list[tuple[Path, str | None]]] | None = None
    store: Callable[[AgentWriter, Path, dict[str, Any] | None, str, ImportReport],
                    dict[str, Any]] | None = None
    # ``locate`` may name databases outside the source folder (a list file there names
    # them: Crush's ``projects.json``); each is taken when it is a regular file itself
    outside: bool = False


@dataclass(frozen=True)
class Doors:
    """What an import or a sync asks of one format (its ``formats.Format`` says the rest):
    each importer package's ``format.py`` exports one as ``DOORS``. The parsing stays in the
    package; these are its doors."""

    import_path: Callable[..., ImportReport]  # (state, path, agent=None, **options)
    follow: Follow  # reads on in a growing file (a first read is an import of it)
    transcript: Callable[[str], bool]  # a file name in a source folder that is its transcript
    import_options: Mapping[str, Any] | None = None  # what the command line's import passes
    order: Callable[[str], Any] | None = None  # the order its files are read in (by path)
    # Two files that feed one session by design (``common.same_family`` asks the format)
    same_family: Callable[[str, str, str], bool] | None = None
    # A format whose transcripts sit in session folders (OpenClaw: ``agents/<id>/sessions``)
    # rather than anywhere under the source: the folders, each folder's agent id, the
    # folder's session store (read whole when it changes, ``follow_store``), and notes on
    # what else the source holds (given the source and whether transcripts were found).
    session_folders: Callable[[Path], list[Path]] | None = None
    folder_agent: Callable[[Path], str] | None = None
    store_name: str | None = None
    follow_store: FollowStore | None = None
    source_notes: Callable[[Path, bool], list[str]] | None = None
    # A format whose transcripts are SQLite databases: ``follow`` is not used for them; the
    # sync reads each changed database through ``database.read_new`` (sqlite_source.py)
    database: Database | None = None
    # Its transcripts are whole documents the tool rewrites on every change (a JSON file, not
    # a log of lines): sync reads none of their lines, the follower is given none and reads
    # the file itself each time it changes (a carry not None: it was read before), recognising
    # what is stored by derived ids (``importers/whole.py``).
    whole: bool = False

    def import_into(self, state: StateDir, path: Path | str, agent: str | None) -> ImportReport:
        """``backscroll import NAME PATH``: with the command line's options."""
        return self.import_path(state, path, agent=agent, **(self.import_options or {}))
