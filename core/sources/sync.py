"""``backscroll sync``: take in what is new in every source (SPEC 14).

For each source, one walk finds the transcript files; each is compared with what its agent's
database remembers of it (``FileState``: device, inode, size, mtime). An unchanged file is
only stat'ed. A new or changed one is read (``reading.read_new``: on from its offset when it
grew, else from the start), its new lines go through the format's follower (``importers/*``),
and its events and its new state are written in **one transaction**, so a crash can neither
store lines twice nor skip them. A file that vanished keeps its sessions and is marked gone.
Every problem (a file that cannot be read, a line that is not JSON, a folder that loops) is
one sentence naming the place; the other files go on, and the next sync retries.

The first read of a file stores its events like an import (without indexing; reconciliation
indexes them in the background); what a grown file adds goes through the live write path,
indexed in the same transaction, so it is searchable at once.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from ..importers.claude_code.follow import follow_transcript
from ..importers.claude_code.reading import Tasks
from ..importers.codex.follow import follow_rollout
from ..importers.common import Followed, ImportReport
from ..importers.openclaw import StoreView, read_store
from ..importers.openclaw_follow import follow_openclaw, follow_store
from ..state import StateDir
from ..storage import FileState, now_ms
from ..storage.sqlite import AgentWriter
from .detect import Source, all_sources
from .reading import Chunk, ReadProblem, read_new, unchanged
from .scan import STORE, FoundFile, scan_source

Progress = Callable[[int, int, str], None]  # (files read, files to read, the file now)


@dataclass
class SyncReport:
    sources: int = 0
    files: int = 0  # transcript files found
    read: int = 0  # of them, new or changed: read
    events: int = 0  # new events stored
    messages: int = 0  # of them, message events
    sessions: set[str] = field(default_factory=set)  # keys of the sessions that got events
    gone: int = 0  # files that vanished since the last sync (their sessions stay)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    pending: set[str] = field(default_factory=set)  # agents with sessions to reconcile

    def summary(self) -> str:
        if not self.sources:
            return "no sources: nothing to sync (see `backscroll sources`)"
        what = (f"synced {_plural(self.messages, 'new message')} "
                f"({_plural(self.events, 'event')}) in {_plural(len(self.sessions), 'session')}"
                if self.events else "nothing new")
        where = f"{_plural(self.read, 'file')} read of {self.files} in " \
                f"{_plural(self.sources, 'source')}"
        gone = f"; {self.gone} gone (their sessions stay)" if self.gone else ""
        return f"{what}: {where}{gone}"

    def as_json(self) -> dict[str, Any]:
        return {
            "sources": self.sources,
            "files": self.files,
            "read": self.read,
            "events": self.events,
            "messages": self.messages,
            "sessions": sorted(self.sessions),
            "gone": self.gone,
            "problems": self.problems,
            "notes": self.notes,
            "indexing": sorted(self.pending),
        }


@dataclass
class _Work:
    """One source's files of one agent, and what of them is to be read."""

    source: Source
    agent: str
    db: AgentWriter
    known: dict[str, FileState]
    todo: list[tuple[FoundFile, FileState | None, str | None]]  # (file, before, moved from)
    gone: list[str]


def sync_sources(
    state: StateDir,
    sources: list[Source] | None = None,
    on_progress: Progress | None = None,
) -> SyncReport:
    """Take in what is new in ``sources`` (default: every source of the state dir)."""
    sources = all_sources(state.path) if sources is None else sources
    report = SyncReport(sources=len(sources))
    with ExitStack() as stack:
        plan: list[_Work] = []
        for source in sources:
            scan = scan_source(source)
            report.problems += scan.problems
            report.notes += scan.notes
            report.files += sum(1 for f in scan.files if f.kind != STORE)
            agents = dict.fromkeys(f.agent for f in scan.files)
            for agent in agents:
                db = stack.enter_context(state.open(agent, write=True))
                files = [f for f in scan.files if f.agent == agent]
                plan.append(_plan(source, agent, db, files))
            plan += _vanished(state, source, agents, stack)
        total = sum(len(work.todo) for work in plan)
        done = 0
        when = now_ms()
        for work in plan:
            follower = _Follower(work, report)
            for found, before, moved_from in work.todo:
                if on_progress is not None:
                    on_progress(done, total, str(found.path))
                follower.take_in(found, before, moved_from)
                done += 1
            if work.gone:
                work.db.mark_missing(work.gone, when)
                report.gone += len(work.gone)
            work.db.record_sync([(work.source.root, work.source.kind)], when)
            if work.db.has_pending_sessions():
                report.pending.add(work.agent)
        if on_progress is not None and total:
            on_progress(total, total, "")
    return report


def _plan(source: Source, agent: str, db: AgentWriter, files: list[FoundFile]) -> _Work:
    known = db.file_states([source.root])
    found = {str(f.path) for f in files}
    vanished = {path: st for path, st in known.items() if path not in found}
    by_identity = {(st.device, st.inode): st for st in vanished.values()}
    todo: list[tuple[FoundFile, FileState | None, str | None]] = []
    for file in files:
        before = known.get(str(file.path))
        if unchanged(before, file.stat):
            continue
        moved = None if before else by_identity.pop((file.stat.st_dev, file.stat.st_ino), None)
        if moved is not None:  # renamed (an OpenClaw reset archives a transcript this way)
            vanished.pop(moved.path, None)
            todo.append((file, replace(moved, path=str(file.path)), moved.path))
        else:
            todo.append((file, before, None))
    gone = [path for path, st in vanished.items()
            if st.missing_since is None and not os.path.lexists(path)]
    return _Work(source, agent, db, known, todo, gone)


def _vanished(state: StateDir, source: Source, scanned: dict[str, None],
              stack: ExitStack) -> list[_Work]:
    """Agents whose files under the source all vanished: mark them gone, too."""
    works = []
    for agent in state.agents():
        if agent in scanned:
            continue
        db = stack.enter_context(state.open(agent, write=True))
        if db.file_states([source.root]):
            works.append(_plan(source, agent, db, []))
    return works


class _Follower:
    """Takes in the changed files of one ``_Work``, each in one transaction."""

    def __init__(self, work: _Work, report: SyncReport) -> None:
        self.work = work
        self.db = work.db
        self.report = report
        self.tasks: Tasks = {}  # Claude Code: what sub-agents were asked, for their labels
        self.views: dict[Path, StoreView] = {}  # OpenClaw: each folder's sessions.json

    def take_in(self, found: FoundFile, before: FileState | None, moved_from: str | None) -> None:
        path = found.path
        from_start = before is None or before.context is None
        for attempt in (1, 2):
            file_report = ImportReport()
            try:
                chunk = None if found.kind == STORE else read_new(
                    path, before, from_start or attempt == 2)
            except ReadProblem as err:
                self.report.problems.append(str(err))
                return
            except OSError as err:
                self.report.problems.append(f"{path}: cannot be read ({err.strerror or err})")
                return
            with self.db.atomic():
                if self.db.file_state(str(path)) != self.work.known.get(str(path)):
                    return  # another sync took it in meanwhile
                if chunk is not None and not chunk.lines:  # nothing complete yet
                    followed = Followed(None if chunk.from_start or not before else before.context)
                else:
                    followed = self._follow(found, chunk, before, file_report)
                if followed.restart:
                    continue  # nothing was stored: read the whole file
                keys = tuple(dict.fromkeys([*(before.sessions if before else ()),
                                            *file_report.keys]))
                state = _state(self.work.source.root, found, chunk, followed, keys, file_report)
                self.db.save_file_state(state, moved_from)
            self._count(found, file_report)
            return

    def _follow(self, found: FoundFile, chunk: Chunk | None, before: FileState | None,
                report: ImportReport) -> Followed:
        db, agent, path = self.db, found.agent, found.path
        if chunk is None:  # sessions.json: read whole, every time it changes
            self.views.pop(found.folder, None)
            follow_store(db, self._view(found), report)
            return Followed()
        carry = None if chunk.from_start or before is None else before.context
        if found.kind == "claude-code":
            return follow_transcript(db, agent, path, chunk.lines, carry, report, self.tasks)
        if found.kind == "codex":
            return follow_rollout(db, agent, path, chunk.lines, carry, report)
        return follow_openclaw(db, lambda: self._view(found), path, chunk.lines, carry, report)

    def _view(self, found: FoundFile) -> StoreView:
        if found.folder not in self.views:
            store = read_store(found.folder / "sessions.json", ImportReport())
            self.views[found.folder] = StoreView.of(found.agent, store, ImportReport(),
                                                    found.folder)
        return self.views[found.folder]

    def _count(self, found: FoundFile, file_report: ImportReport) -> None:
        report = self.report
        report.read += found.kind != STORE
        report.events += file_report.events
        report.messages += file_report.messages
        report.problems += file_report.skipped
        report.notes += file_report.notes
        if file_report.events:
            report.sessions.update(file_report.keys)


def _state(root: str, found: FoundFile, chunk: Chunk | None, followed: Followed,
           keys: tuple[str, ...], report: ImportReport) -> FileState:
    st = chunk.stat if chunk is not None else found.stat
    problem = None if keys or found.kind == STORE else next(
        iter(report.notes + report.skipped), None)
    return FileState(
        path=str(found.path),
        kind=found.kind,
        root=root,
        device=st.st_dev,
        inode=st.st_ino,
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        done_bytes=chunk.done_bytes if chunk is not None else st.st_size,
        done_lines=chunk.done_lines if chunk is not None else 0,
        head_hash=chunk.head_hash if chunk is not None else "",
        tail_hash=chunk.tail_hash if chunk is not None else "",
        context=followed.carry,
        sessions=keys,
        synced_at=now_ms(),
        problem=problem,
    )


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"
