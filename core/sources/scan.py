"""Finding a source's transcript files: one walk, one ``stat`` per file, nothing read.

What counts as a transcript is each format's rule (``core/formats.py``): Claude Code
``*.jsonl`` (main transcripts before sub-agents), Codex ``rollout-*.jsonl`` (and
``.jsonl.zst``) anywhere under the source; OpenClaw transcripts and archives in each agent's
``sessions/`` folder with its ``sessions.json`` (a format with ``session_folders``). Symbolic links
inside a source folder (to files or folders) are not followed, wherever they lead: a source is
what is in its folder (the folder itself may be reached through a link). A file under a
transcript's name that is not a regular file (a FIFO, a device), and a folder or file that
cannot be listed, are named; none stops the walk.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from .. import formats
from ..bounds import describe_mode
from ..importers.sqlite_source import combined_stat, tree_stat
from .detect import Source

if TYPE_CHECKING:
    from ..importers.format import Doors

LINK_NOTE = "a symbolic link; links inside a source folder are not followed"


@dataclass(frozen=True)
class FoundFile:
    path: str  # a string: thousands are compared with what the database remembers
    kind: str  # a format's name, or its store_kind (``openclaw-store``)
    agent: str  # the agent its sessions are stored under
    stat: os.stat_result
    folder: Path | None = None  # OpenClaw: its sessions folder (the store's)
    database: bool = False  # a SQLite database (the SQLite source kind): read from a watermark

    @property
    def file(self) -> Path:
        return Path(self.path)

    @property
    def is_store(self) -> bool:
        """A format's session store (``sessions.json``): read whole when it changes."""
        return formats.is_store(self.kind)



@dataclass
class Scan:
    source: Source
    files: list[FoundFile] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one sentence each, naming the place
    notes: list[str] = field(default_factory=list)


def scan_source(source: Source) -> Scan:
    scan = Scan(source)
    path = source.path
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        scan.problems.append(f"{path}: source folder does not exist")
        return scan
    except OSError as err:  # a folder above it that cannot be searched
        scan.problems.append(f"{path}: cannot be listed ({err.strerror or err})")
        return scan
    if not stat.S_ISDIR(mode):
        scan.problems.append(f"{path}: source is not a folder")
        return scan
    fmt = formats.get(source.kind)
    if fmt is None:  # a kind no format has (settings refuse one: a source made in code)
        scan.problems.append(f"{path}: no transcript format is named {source.kind!r}")
    elif fmt.doors.session_folders is not None:
        _scan_folders(scan, fmt.name, fmt.doors)
    elif fmt.doors.database is not None and fmt.doors.database.locate is None:
        _scan_databases(scan, fmt.name, fmt.doors)  # its databases at the source's top
    else:
        found = _walk(path, fmt.doors.transcript, scan)
        order = fmt.doors.order
        ordered = sorted(found, key=lambda item: order(item[0]) if order else item[0])
        agent = source.agent_for()
        scan.files = [FoundFile(p, fmt.name, agent, st) for p, st in ordered]
    if fmt is not None and fmt.doors.database is not None and fmt.doors.database.locate:
        _scan_databases(scan, fmt.name, fmt.doors)  # besides its other files
    return scan


def _scan_databases(scan: Scan, name: str, fmt: Doors) -> None:
    """A format's SQLite databases (the SQLite source kind): at the source's top by name, or
    where its ``locate`` says (each with the agent it names, or None: the source's), and the
    folders it reads the same way (``trees``). Each is stat'ed with its ``-wal``."""
    database = fmt.database
    assert database is not None
    source = scan.source
    if database.locate is not None:
        try:
            located = database.locate(source.path)
        except OSError as err:
            scan.problems.append(f"{source.path}: cannot be listed ({err.strerror or err})")
            return
        for file, agent in located:
            try:
                st = os.stat(file, follow_symlinks=False)
            except OSError as err:
                scan.problems.append(f"{file}: cannot be read ({err.strerror or err})")
                continue
            if stat.S_ISREG(st.st_mode) and (database.outside
                                             or _without_links(source.path, file.parent)):
                scan.files.append(FoundFile(str(file), name, source.agent_for(agent),
                                            combined_stat(str(file), st), database=True))
        return
    found = _walk(source.path, lambda n: n in database.names, scan, recursive=False)
    agent = source.agent_for()
    scan.files += [FoundFile(p, name, agent, combined_stat(p, st), database=True)
                   for p, st in sorted(found)]
    for tree in database.trees:  # folders read like a database
        folder = os.path.join(source.path, tree)
        try:
            st = os.stat(folder, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            scan.files.append(FoundFile(folder, name, agent, tree_stat(folder, st),
                                        database=True))


def _scan_folders(scan: Scan, name: str, fmt: Doors) -> None:
    """A format whose transcripts sit in session folders (OpenClaw): each folder's own
    files, its session store first."""
    assert fmt.session_folders is not None
    source = scan.source
    try:
        folders = fmt.session_folders(source.path)
    except OSError as err:
        scan.problems.append(f"{source.path}: cannot be listed ({err.strerror or err})")
        return

    def is_store(path: str) -> bool:
        return fmt.store_name is not None and os.path.basename(path) == fmt.store_name

    for folder in folders:
        if not _without_links(source.path, folder):
            scan.notes.append(f"{folder}: {LINK_NOTE}")
            continue
        agent = source.agent_for(fmt.folder_agent(folder) if fmt.folder_agent else None)
        found = _walk(folder, lambda name: name == fmt.store_name or fmt.transcript(name),
                      scan, recursive=False)
        for path, st in sorted(found, key=lambda item: (not is_store(item[0]), item[0])):
            kind = f"{name}-store" if is_store(path) else name
            scan.files.append(FoundFile(path, kind, agent, st, folder))
    if fmt.source_notes is not None:
        scan.notes += fmt.source_notes(source.path, bool(scan.files))


def _walk(
    root: Path, wanted: Callable[[str], bool], scan: Scan, recursive: bool = True
) -> Iterator[tuple[str, os.stat_result]]:
    """(path, stat) of the wanted regular files under ``root``, entering no folder twice and
    following no symbolic link (a link to ``/`` would walk the disk): a link that would have
    been read is noted, something else under a transcript's name (a FIFO, a device) is named,
    and so is a folder or file that cannot be listed or stat'ed; none stops the walk."""
    seen: set[tuple[int, int]] = set()
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            identity = os.stat(folder)
            listing = os.scandir(folder)
        except OSError as err:
            scan.problems.append(f"{folder}: cannot be listed ({err.strerror or err})")
            continue
        if (identity.st_dev, identity.st_ino) in seen:
            scan.problems.append(f"{folder}: a folder already read through another path; not "
                                 "read again")
            listing.close()
            continue
        seen.add((identity.st_dev, identity.st_ino))
        with listing:
            entries = _entries(listing, folder, scan)
            for entry in entries:
                try:
                    if not _utf8(entry.name):
                        if wanted(entry.name) or entry.is_dir(follow_symlinks=False):
                            shown = os.fsencode(entry.path).decode("utf-8", "backslashreplace")
                            scan.problems.append(f"{shown}: a name that is not valid UTF-8 "
                                                 "(no database can store it); not read")
                    elif entry.is_symlink():
                        if wanted(entry.name) or (recursive and entry.is_dir()):
                            scan.notes.append(f"{entry.path}: {LINK_NOTE}")
                    elif entry.is_dir(follow_symlinks=False):
                        if recursive:
                            stack.append(entry.path)
                    elif wanted(entry.name):
                        st = entry.stat(follow_symlinks=False)
                        if stat.S_ISREG(st.st_mode):
                            yield entry.path, st
                        else:
                            scan.problems.append(
                                f"{entry.path}: {describe_mode(st.st_mode)}, not a regular "
                                "file; not read")
                except OSError as err:
                    scan.problems.append(f"{entry.path}: cannot be read ({err.strerror or err})")


def _utf8(name: str) -> bool:
    """A name the file system gave as bytes that are not UTF-8 holds lone surrogates."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _entries(listing: Iterator[os.DirEntry[str]], folder: str,
             scan: Scan) -> Iterator[os.DirEntry[str]]:
    """The entries of a listing; one that fails part way (``/proc/1/map_files``) is named and
    the entries read so far are kept."""
    while True:
        try:
            entry = next(listing)
        except StopIteration:
            return
        except OSError as err:
            scan.problems.append(f"{folder}: cannot be listed ({err.strerror or err})")
            return
        yield entry


def _without_links(root: Path, folder: Path) -> bool:
    """Whether ``folder`` (found under ``root``) is reached without a symbolic link."""
    try:
        parts = folder.relative_to(root).parts
    except ValueError:
        return False
    here = root
    for part in parts:
        here = here / part
        if here.is_symlink():
            return False
    return True
