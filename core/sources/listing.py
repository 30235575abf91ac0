"""What ``backscroll sources`` shows: each source with its kind, folder, agent, files and
sessions, when it was last synced, and one sentence for anything that keeps it from being
read (so a source never shows zero sessions without saying why). Reads only: the databases
are opened read-only and no transcript is read, only stat'ed."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import formats
from ..fanout import for_each_agent
from ..redact import redact
from ..state import StateDir
from ..storage import FileState
from .detect import Source, all_sources
from .reading import unchanged
from .scan import scan_source


@dataclass(frozen=True)
class SourceStatus:
    source: Source
    present: bool  # the folder exists
    files: int  # transcript files in it
    sessions: int  # sessions its files fed
    unread: int  # files new or changed since the last sync
    gone: int  # files that vanished (their sessions stay)
    last_sync: int | None  # epoch ms
    notes: list[str] = field(default_factory=list)  # one sentence each

    def as_json(self) -> dict[str, Any]:
        """Paths are redacted as every name on output is (a folder's name can hold a token)."""
        return {
            "kind": self.source.kind,
            "path": redact(self.source.root),
            "agent": self.source.agent,
            "origin": self.source.origin,
            "present": self.present,
            "files": self.files,
            "sessions": self.sessions,
            "unsynced": self.unread,
            "gone": self.gone,
            "lastSync": self.last_sync,
            "notes": [redact(note) for note in self.notes],
        }


def sources_status(state: StateDir) -> list[SourceStatus]:
    """Every source, including default folders that do not exist (so a person sees where
    backscroll looks)."""
    known, syncs = _remembered(state)
    sources = all_sources(state.path, include_missing=True)
    return [_status(source, known, syncs.get(source.root)) for source in sources] + [
        _not_detected(fmt.name, fmt.label) for fmt in formats.known()
        if not fmt.detected and not any(s.kind == fmt.name for s in sources)]


def _not_detected(kind: str, label: str) -> SourceStatus:
    """A format read only from folders a person adds (``Format.detected`` False): how to add
    one, and that the home is not searched for it."""
    home = Path.home()
    return SourceStatus(Source(kind, home, origin="opt-in"), False, 0, 0, 0, 0, None, [
        f"{label} keeps no folder of its own: add the folders it ran in "
        f"(`backscroll sources add {kind} ~/code`); the home is not searched"])


def _status(source: Source, known: dict[str, FileState], last_sync: int | None) -> SourceStatus:
    mine = {path: st for path, st in known.items() if st.root == source.root}
    if not _exists(source.path):
        note = ("not found: nothing to read" if source.origin == "detected"
                else "does not exist")
        return SourceStatus(source, False, 0, _sessions(mine), 0, len(mine), last_sync,
                            [f"{source.path}: {note}"] + _gone_note(source, mine))
    scan = scan_source(source)
    files = [f for f in scan.files if not f.is_store]
    found = {f.path: known[f.path] for f in scan.files if f.path in known}
    unread = sum(1 for f in files if not unchanged(known.get(f.path), f.stat))
    vanished = {p: st for p, st in mine.items() if p not in found}
    notes = scan.problems + scan.notes
    notes += [f"{st.path}: {st.problem}" for st in found.values() if st.problem]
    if not files and not notes and not vanished:
        notes.append(f"{source.path}: no {source.kind} transcripts in it yet")
    return SourceStatus(source, True, len(files), _sessions({**mine, **found}), unread,
                        len(vanished), last_sync, notes + _gone_note(source, vanished))


def _remembered(state: StateDir) -> tuple[dict[str, FileState], dict[str, int]]:
    """What every agent database remembers of the files taken in, and when each source was
    last synced."""
    known: dict[str, FileState] = {}
    syncs: dict[str, int] = {}
    def read(agent: str) -> None:
        with state.open(agent) as db:
            known.update(db.file_states())
            for root, when in db.source_syncs().items():
                syncs[root] = max(when, syncs.get(root, 0))

    for _ in for_each_agent(state, read):
        pass  # an unreadable or older database is skipped: `status` names it
    return known, syncs


def _sessions(known: dict[str, FileState]) -> int:
    return len({key for st in known.values() for key in st.sessions})


def _gone_note(source: Source, vanished: dict[str, FileState]) -> list[str]:
    if not vanished:
        return []
    count = len(vanished)
    return [f"{source.path}: {count} file{'s' if count != 1 else ''} gone from disk; "
            f"{'their' if count != 1 else 'its'} sessions are kept"]


def _exists(path: Path) -> bool:
    """Whether the folder is there; one that cannot be reached is there for ``scan_source``
    to name (``cannot be listed``)."""
    try:
        return path.exists()
    except OSError:
        return True
