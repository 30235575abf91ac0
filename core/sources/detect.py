"""Which folders backscroll reads: the agents' own folders, found where they keep them, and
the ``[[sources]]`` entries of ``config.toml`` (SPEC 14).

Found by default (only when the folder exists), each format's ``default_folder``
(``core/formats.py``):
- Claude Code: ``$CLAUDE_CONFIG_DIR/projects``, else ``~/.claude/projects``;
- Codex: ``$CODEX_HOME/sessions``, else ``~/.codex/sessions``;
- OpenClaw: ``$OPENCLAW_STATE_DIR``, else ``~/.openclaw`` (its ``agents/*/sessions/``).
An entry in the file for the same folder wins (its ``agent``, or ``enabled = false``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .. import formats
from .settings import SourceEntry, configured_sources, remove_entry, resolve_path


@dataclass(frozen=True)
class Source:
    """A folder of one agent tool's transcripts."""

    kind: str  # a format's name (core/formats.py)
    path: Path
    agent: str | None = None  # None: the kind's default (OpenClaw: each agent folder's id)
    origin: str = "detected"  # detected | config

    @property
    def root(self) -> str:
        return str(self.path)

    @property
    def per_folder(self) -> bool:
        """Its agents are its session folders' (OpenClaw's ``agents/<id>/sessions``)."""
        fmt = formats.get(self.kind)
        return fmt is not None and fmt.doors.folder_agent is not None

    def agent_for(self, folder_agent: str | None = None) -> str:
        """The agent its sessions are stored under."""
        fmt = formats.get(self.kind)
        return self.agent or folder_agent or (fmt.default_agent if fmt else "main")


def default_folders() -> list[Source]:
    """Where the agent tools keep their transcripts on this machine (existing or not; a
    format's ``more_folders`` only when they exist)."""
    home = Path.home()
    found: list[Source] = []
    for f in formats.known():
        if not f.detected:  # no folder of its own: only the folders a person adds
            continue
        found.append(Source(f.name, f.default_folder(os.environ, home)))
        found += [Source(f.name, home / more) for more in f.more_folders
                  if is_folder(home / more)]
        if not os.environ.get(f.home_env):
            found += [Source(f.name, other) for pattern in f.other_homes
                      for other in _matching(home, pattern) if is_folder(other)]
    return found


def _matching(home: Path, pattern: str) -> list[Path]:
    """The folders under ``home`` a pattern names, in order (none where it cannot be read)."""
    try:
        return sorted(home.glob(pattern))
    except OSError:
        return []


def all_sources(state_dir: Path, include_missing: bool = False) -> list[Source]:
    """The sources to read: default folders that exist (all of them with
    ``include_missing``), then the file's entries; an entry overrides the default folder it
    names, and a turned-off one hides it."""
    entries = configured_sources(state_dir)
    by_path: dict[Path, SourceEntry] = {e.path: e for e in entries}
    sources: list[Source] = []
    for found in default_folders():
        entry = by_path.pop(found.path, None)
        if entry is not None and not entry.enabled:
            continue
        if entry is not None:
            sources.append(Source(entry.kind, entry.path, entry.agent, "config"))
        elif include_missing or is_folder(found.path):
            sources.append(found)
    sources += [Source(e.kind, e.path, e.agent, "config") for e in by_path.values() if e.enabled]
    return sources


def is_folder(path: Path) -> bool:
    """``path.is_dir()``, but False (not an error) where a parent cannot be searched."""
    try:
        return path.is_dir()
    except OSError:
        return False


def remove_source(state_dir: Path, path: Path | str) -> str:
    """Stop reading a folder: its ``[[sources]]`` entry goes, and a folder found by default is
    turned off (``enabled = false``). Its sessions stay. One sentence says what was done."""
    target = resolve_path(path, Path(state_dir))
    detected = next((s.kind for s in default_folders() if s.path == target), None)
    return remove_entry(state_dir, target, detected)
