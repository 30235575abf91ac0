"""Finding a source's transcript files: one walk, one ``stat`` per file, nothing read.

What counts as a transcript is the importers' rule: Claude Code ``*.jsonl`` (main transcripts
before sub-agents), Codex ``rollout-*.jsonl`` (and ``.jsonl.zst``), OpenClaw transcripts and
archives in each agent's ``sessions/`` folder with its ``sessions.json``. Symbolic links
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
from typing import Callable, Iterator

from ..bounds import describe_mode
from ..importers.openclaw import folder_agent_id, is_transcript_name, session_folders
from .detect import Source

STORE = "openclaw-store"  # the kind of an OpenClaw sessions.json
LINK_NOTE = "a symbolic link; links inside a source folder are not followed"
OPENCLAW_DATABASES = ("*/agent/*.sqlite", "*/*.sqlite")  # under agents/: newer OpenClaw


@dataclass(frozen=True)
class FoundFile:
    path: str  # a string: thousands are compared with what the database remembers
    kind: str  # claude-code | codex | openclaw | openclaw-store
    agent: str  # the agent its sessions are stored under
    stat: os.stat_result
    folder: Path | None = None  # OpenClaw: its sessions folder (the store's)

    @property
    def file(self) -> Path:
        return Path(self.path)


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
    if source.kind == "claude-code":
        found = _walk(path, lambda name: name.endswith(".jsonl"), scan)
        ordered = sorted(found, key=lambda item: (_is_subagent(item[0]), item[0]))
        agent = source.agent_for()
        scan.files = [FoundFile(p, "claude-code", agent, st) for p, st in ordered]
    elif source.kind == "codex":
        found = _walk(path, _is_rollout, scan)
        agent = source.agent_for()
        scan.files = [FoundFile(p, "codex", agent, st) for p, st in sorted(found)]
    else:
        _scan_openclaw(scan)
    return scan


def _is_rollout(name: str) -> bool:
    return name.startswith("rollout-") and name.endswith((".jsonl", ".jsonl.zst"))


def _is_store(path: str) -> bool:
    return os.path.basename(path) == "sessions.json"


def _is_subagent(path: str) -> bool:
    """``is_subagent_file`` on a path string (main transcripts are read first)."""
    folder, name = os.path.split(path)
    return name.startswith("agent-") or os.path.basename(folder) == "subagents"


def _scan_openclaw(scan: Scan) -> None:
    source = scan.source
    try:
        folders = session_folders(source.path)
    except OSError as err:
        scan.problems.append(f"{source.path}: cannot be listed ({err.strerror or err})")
        return
    for folder in folders:
        if not _without_links(source.path, folder):
            scan.notes.append(f"{folder}: {LINK_NOTE}")
            continue
        agent = source.agent_for(folder_agent_id(folder))
        found = _walk(folder, lambda name: name == "sessions.json" or is_transcript_name(name),
                      scan, recursive=False)
        for path, st in sorted(found, key=lambda item: (not _is_store(item[0]), item[0])):
            kind = STORE if _is_store(path) else "openclaw"
            scan.files.append(FoundFile(path, kind, agent, st, folder))
    databases = sorted(p for pattern in OPENCLAW_DATABASES
                       for p in (source.path / "agents").glob(pattern))
    if databases:
        where = ", ".join(str(p) for p in databases[:3]) + (" …" if len(databases) > 3 else "")
        held = "also keeps" if scan.files else "keeps"
        scan.notes.append(
            f"{source.path} {held} transcripts in OpenClaw's SQLite store ({where}), which "
            "backscroll does not read yet" + ("; its JSONL files are read" if scan.files else "")
        )


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
