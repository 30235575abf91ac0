"""Finding a source's transcript files: one walk, one ``stat`` per file, nothing read.

What counts as a transcript is the importers' rule: Claude Code ``*.jsonl`` (main transcripts
before sub-agents), Codex ``rollout-*.jsonl`` (and ``.jsonl.zst``), OpenClaw transcripts and
archives in each agent's ``sessions/`` folder with its ``sessions.json``. A folder reached a
second time (a symlink loop) is not walked again, and a folder or file that cannot be listed
is named; neither stops the walk.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from ..importers.openclaw import folder_agent_id, is_transcript_name, session_folders
from .detect import Source

STORE = "openclaw-store"  # the kind of an OpenClaw sessions.json
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
    if not path.exists():
        scan.problems.append(f"{path}: source folder does not exist")
        return scan
    if not path.is_dir():
        scan.problems.append(f"{path}: source is not a folder")
        return scan
    if source.kind == "claude-code":
        found = _walk(path, lambda name: name.endswith(".jsonl"), scan.problems)
        ordered = sorted(found, key=lambda item: (_is_subagent(item[0]), item[0]))
        agent = source.agent_for()
        scan.files = [FoundFile(p, "claude-code", agent, st) for p, st in ordered]
    elif source.kind == "codex":
        found = _walk(path, _is_rollout, scan.problems)
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
        agent = source.agent_for(folder_agent_id(folder))
        found = _walk(folder, lambda name: name == "sessions.json" or is_transcript_name(name),
                      scan.problems, recursive=False)
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
    root: Path, wanted: Callable[[str], bool], problems: list[str], recursive: bool = True
) -> Iterator[tuple[str, os.stat_result]]:
    """(path, stat) of the wanted files under ``root``, following symlinks but entering no
    folder twice; a folder that cannot be listed or a file that cannot be stat'ed is named."""
    seen: set[tuple[int, int]] = set()
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            identity = os.stat(folder)
            listing = os.scandir(folder)
        except OSError as err:
            problems.append(f"{folder}: cannot be listed ({err.strerror or err})")
            continue
        if (identity.st_dev, identity.st_ino) in seen:
            problems.append(f"{folder}: a folder already read through another path (a symlink "
                            "loop?); not read again")
            listing.close()
            continue
        seen.add((identity.st_dev, identity.st_ino))
        with listing:
            for entry in listing:
                try:
                    if entry.is_dir():
                        if recursive:
                            stack.append(entry.path)
                    elif wanted(entry.name) and entry.is_file():
                        yield entry.path, entry.stat()
                except OSError as err:
                    problems.append(f"{entry.path}: cannot be read ({err.strerror or err})")
