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
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from .. import file_modes, formats
from ..errors import StoreError, Unreachable
from ..fanout import STOPS_WRITES, for_each_agent
from ..importers.common import DATA_ERRORS, Followed, ImportReport, data_problem
from ..importers.sqlite_source import follow_database
from ..state import StateDir
from ..storage import AgentWriter, FileState, SchemaBehind, now_ms
from . import deleted as deleted_mod
from .claims import Claimed, Holders
from .detect import Source, all_sources
from .reading import Chunk, ReadProblem, read_new, unchanged
from .scan import FoundFile, scan_source

Progress = Callable[[int, int, str], None]  # (files read, files to read, the file now)
RECORD_SYNC_S = 60.0  # a sync that finds nothing new records its time at most this often


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
        if self.problems:  # (said above, one line each): "nothing new" alone would hide them
            what += f", {_plural(len(self.problems), 'problem')}"
        where = f"{_plural(self.read, 'file')} read of {self.files:,} in " \
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
    known: dict[str, FileState]
    todo: list[tuple[FoundFile, FileState | None, str | None]]  # (file, before, moved from)
    gone: list[str]


def sync_sources(
    state: StateDir,
    sources: list[Source] | None = None,
    on_progress: Progress | None = None,
) -> SyncReport:
    """Take in what is new in ``sources`` (default: every source of the state dir).

    What each database remembers is read through read-only connections; a writer is opened
    only for an agent with something to write, so a sync that finds nothing new writes
    nothing (but its time, at most once every ``RECORD_SYNC_S``). A state dir that is a file
    stops the sync (one sentence), rather than being one problem per agent."""
    file_modes.require_state_folder(state.path)
    sources = all_sources(state.path) if sources is None else sources
    report = SyncReport(sources=len(sources))
    scans = [scan_source(source) for source in sources]
    taken: set[str] = set()
    for scan in scans:  # a folder inside another source is read once, as the first one's
        scan.files = [f for f in scan.files if f.path not in taken]
        taken.update(f.path for f in scan.files)
    existing = state.agents()
    scanned = dict.fromkeys(f.agent for scan in scans for f in scan.files)
    remembered: dict[str, tuple[dict[str, FileState], dict[str, int]]] = {}
    # every agent alike: the server, or a reader's role (STOPS_WRITES) stops the sync
    for agent, known_here, err in for_each_agent(
            state, lambda a: _remembered(state, a, a in existing),
            agents=dict.fromkeys([*scanned, *existing]), stops=STOPS_WRITES):
        if known_here is not None:
            remembered[agent] = known_here
        else:  # a database that cannot be read: the others go on
            report.problems.append(str(err))
    plan: list[_Work] = []
    when = now_ms()
    for scan in scans:
        report.problems += scan.problems
        report.notes += scan.notes
        report.files += sum(1 for f in scan.files if not f.is_store)
        root = scan.source.root
        for agent, (known, syncs) in remembered.items():
            files = [f for f in scan.files if f.agent == agent]
            if not files and not any(st.root == root for st in known.values()):
                continue
            work = _plan(scan.source, agent, known, files)
            if work.todo or work.gone or when - syncs.get(root, 0) > RECORD_SYNC_S * 1000:
                plan.append(work)
    total = sum(len(work.todo) for work in plan)
    done = 0
    by_agent: dict[str, list[_Work]] = {}
    for work in plan:
        by_agent.setdefault(work.agent, []).append(work)
    # one writer open at a time (a pool holds a few); a role or URL that may only read: exit 3
    for agent, db, err in for_each_agent(state, lambda a: state.open(a, write=True),
                                         agents=by_agent, stops=STOPS_WRITES):
        if db is None:  # not writable, locked, not SQLite
            report.problems.append(str(err))
            continue
        works = by_agent[agent]
        with db:
            holders = Holders(works[0].known)  # which file feeds each session (claims.py)
            for work in works:
                follower = _Follower(work, db, report, holders)
                for found, before, moved_from in work.todo:
                    if on_progress is not None:
                        on_progress(done, total, found.path)
                    follower.take_in(found, before, moved_from)
                    done += 1
                _record(db, work, when, report)
            if db.has_pending_sessions():
                report.pending.add(agent)
    if on_progress is not None and total:
        on_progress(total, total, "")
    return report


def _record(db: AgentWriter, work: _Work, when: int, report: SyncReport) -> None:
    """Mark the files that vanished and record the source's sync. A database another process
    holds past the busy timeout (a first sync's background indexer) is said and skipped, as a
    file's write is: the next sync records it; it never fails the sync."""
    try:
        if work.gone:
            db.mark_missing(work.gone, when)
            report.gone += len(work.gone)
        db.record_sync([(work.source.root, work.source.kind)], when)
    except Unreachable:
        raise
    except StoreError as err:
        report.problems.append(f"{work.source.root}: not recorded this time: {err}")


def _remembered(state: StateDir, agent: str,
                exists: bool) -> tuple[dict[str, FileState], dict[str, int]]:
    """What an agent's database remembers of the files it took in (whichever source found
    them: a folder may be reached through two), and when each source was last synced."""
    if not exists:
        return {}, {}
    try:
        with state.open(agent) as db:
            return db.file_states(), db.source_syncs()
    except SchemaBehind:  # written by an older backscroll: the writer upgrades it
        with state.open(agent, write=True) as db:
            return db.file_states(), db.source_syncs()


def _plan(source: Source, agent: str, known: dict[str, FileState],
          files: list[FoundFile]) -> _Work:
    """What to read of ``files``; the files ``known`` under this source that vanished."""
    found = {f.path for f in files}
    vanished = {path: st for path, st in known.items()
                if st.root == source.root and path not in found}
    by_identity = {(st.device, st.inode): st for st in vanished.values()}
    todo: list[tuple[FoundFile, FileState | None, str | None]] = []
    for file in files:
        before = known.get(file.path)
        if unchanged(before, file.stat):
            continue
        moved = None if before else by_identity.pop((file.stat.st_dev, file.stat.st_ino), None)
        if moved is not None:  # renamed (an OpenClaw reset archives a transcript this way)
            vanished.pop(moved.path, None)
            todo.append((file, moved._replace(path=file.path), moved.path))
        else:
            todo.append((file, before, None))
    gone = [path for path, st in vanished.items()
            if st.missing_since is None and not os.path.lexists(path)]
    return _Work(source, agent, known, todo, gone)


class _Follower:
    """Takes in the changed files of one ``_Work``, each in one transaction."""

    def __init__(self, work: _Work, db: AgentWriter, report: SyncReport,
                 holders: Holders | None = None) -> None:
        self.work = work
        self.db = db
        self.report = report
        self.holders = holders or Holders(work.known)
        self.memo: dict[str, Any] = {}  # the formats' own, for these files (Format.follow)
        self.carry: str | None = None  # the file's carry, and what was deleted from it
        self.deleted: dict[str, Any] = {}

    def take_in(self, found: FoundFile, before: FileState | None, moved_from: str | None) -> None:
        """Take in what is new in one file: in pieces when a read stops at its bound
        (``bounds.MAX_READ_LINES``) with lines left, each from the state the last one saved."""
        while self._take_piece(found, before, moved_from):
            before, moved_from = self.db.file_state(found.path), None
            if before is None:
                return
            self.work.known[found.path] = before
            self.report.read -= 1  # one file, read in pieces

    def _take_piece(self, found: FoundFile, before: FileState | None,
                    moved_from: str | None) -> bool:
        """One read of the file and what it holds, stored; True when lines are left to read
        on from (a follower that asks for the whole file gets it whole: a piece it cannot go
        on from would make it ask again)."""
        path = found.file
        self.carry, self.deleted = deleted_mod.split(before.context if before else None)
        from_start = before is None or self.carry is None
        for attempt in (1, 2):
            file_report = ImportReport()
            try:
                chunk = None if found.is_store or found.database or _whole(found) else read_new(
                    path, before, from_start or attempt == 2, resume_long=attempt == 1,
                    whole=attempt == 2)
            except ReadProblem as err:
                self.report.problems.append(str(err))
                return False
            except OSError as err:
                self.report.problems.append(f"{path}: cannot be read ({err.strerror or err})")
                return False
            if chunk is not None and chunk.from_start and deleted_mod.deleted_lines(self.deleted):
                chunk = replace(chunk, lines=deleted_mod.after_deleted(
                    chunk.lines, self.deleted, found.kind))
                file_report.notes.append(
                    f"{path}: its first {deleted_mod.deleted_lines(self.deleted):,} lines held "
                    "a deleted conversation; not taken in again")
            if chunk is not None and attempt == 1:
                self.report.problems += chunk.problems
            try:
                followed = self._store(found, chunk, before, moved_from, file_report)
            except Unreachable:  # every other file would wait for the server the same way
                raise
            except StoreError as err:  # the database stayed locked, or the disk is full
                self.report.problems.append(f"{path}: not taken in this time: {err}")
                return False
            except Claimed as claim:  # rolled back: kept apart, its state says why
                self.report.problems.append(str(claim))
                self._keep_apart(found, chunk, before, moved_from, str(claim))
                return False
            except DATA_ERRORS as err:  # this file's data: the other files go on
                self._stopped(found, chunk, before, moved_from, err)
                return False
            if followed is None or not followed.restart:
                break  # else nothing was stored: read the whole file
        if followed is None or followed.restart:
            return False
        self._count(found, file_report)
        return attempt == 1 and _read_on_later(chunk, followed)

    def _store(self, found: FoundFile, chunk: Chunk | None, before: FileState | None,
               moved_from: str | None, file_report: ImportReport) -> Followed | None:
        """The file's new events and its new state, in one transaction; None when another
        sync took it in meanwhile."""
        with self.db.atomic():
            if self.db.file_state(found.path) != self.work.known.get(found.path):
                return None
            if chunk is not None and not chunk.lines:  # nothing complete yet
                return self._save(found, chunk, before, moved_from, file_report, Followed(
                    None if chunk.from_start or not before else self.carry))
            followed = self._follow(found, chunk, before, file_report)
            if followed.restart:
                return followed
            self.holders.check(found.path, found.kind, file_report.keys, moved_from)
            return self._save(found, chunk, before, moved_from, file_report, followed)

    def _stopped(self, found: FoundFile, chunk: Chunk | None, before: FileState | None,
                 moved_from: str | None, err: BaseException) -> None:
        """Data no rule foresaw stopped the file (nothing of it stored): said once, and its
        position kept, so it is read again only when it changes."""
        problem = (f"{found.path}: {data_problem(err)}; not taken in (read again when it "
                   "changes)")
        self.report.problems.append(problem)
        carry = Followed(None if chunk is None or chunk.from_start or not before
                         else self.carry)
        try:
            with self.db.atomic():
                if self.db.file_state(found.path) == self.work.known.get(found.path):
                    self._save(found, chunk, before, moved_from, ImportReport(notes=[problem]),
                               carry)
        except Unreachable:
            raise
        except (StoreError, *DATA_ERRORS) as store_err:  # its state cannot be kept either
            self.report.problems.append(f"{found.path}: not taken in this time: {store_err}")

    def _save(self, found: FoundFile, chunk: Chunk | None, before: FileState | None,
              moved_from: str | None, file_report: ImportReport, followed: Followed) -> Followed:
        keys = tuple(dict.fromkeys([*(before.sessions if before else ()), *file_report.keys]))
        state = _state(self.work.source.root, found, chunk, followed, keys, file_report)
        state = state._replace(context=deleted_mod.join(state.context, self.deleted))
        self.db.save_file_state(state, moved_from)
        self.holders.hold(found.path, found.kind, keys, moved_from)
        return followed

    def _keep_apart(self, found: FoundFile, chunk: Chunk | None, before: FileState | None,
                    moved_from: str | None, why: str) -> None:
        """A file that names another file's session: its state only (read up to here, the
        sessions it fed before, the sentence), so it is not read again until it changes."""
        carry = None if chunk is None or chunk.from_start or not before else self.carry
        state = _state(self.work.source.root, found, chunk, Followed(carry),
                       before.sessions if before else (), ImportReport())
        try:
            with self.db.atomic():
                self.db.save_file_state(state._replace(
                    context=deleted_mod.join(carry, self.deleted), problem=why), moved_from)
        except Unreachable:
            raise
        except StoreError as err:  # read again next time, and kept apart then
            self.report.problems.append(f"{found.path}: not taken in this time: {err}")

    def _follow(self, found: FoundFile, chunk: Chunk | None, before: FileState | None,
                report: ImportReport) -> Followed:
        fmt = formats.of_kind(found.kind)
        assert fmt is not None  # scan_source found it by its format
        if chunk is None and found.database:  # from its watermark
            assert fmt.doors.database is not None
            return follow_database(self.db, found, self.carry if before else None, report,
                                   fmt.doors.database, deleted_mod.deleted_keys(self.deleted))
        if chunk is None and not found.is_store:  # a whole file: it reads itself
            report.deleted = deleted_mod.deleted_keys(self.deleted)  # (importers/whole.py)
            return fmt.doors.follow(self.db, found, [], self.carry if before else None, report,
                                    self.memo)
        if chunk is None:  # a session store: read whole, every time it changes (said then)
            assert fmt.doors.follow_store is not None
            fmt.doors.follow_store(self.db, found, report, deleted_mod.deleted_keys(self.deleted),
                             self.memo)
            return Followed()
        carry = None if chunk.from_start or before is None else self.carry
        report.deleted = deleted_mod.deleted_keys(self.deleted)  # (a file also read whole)
        return fmt.doors.follow(self.db, found, chunk.lines, carry, report, self.memo)

    def _count(self, found: FoundFile, file_report: ImportReport) -> None:
        report = self.report
        report.read += not found.is_store
        report.events += file_report.events
        report.messages += file_report.messages
        report.problems += file_report.skipped
        report.notes += file_report.notes
        if file_report.events:
            report.sessions.update(file_report.keys)


def _state(root: str, found: FoundFile, chunk: Chunk | None, followed: Followed,
           keys: tuple[str, ...], report: ImportReport) -> FileState:
    st = chunk.stat if chunk is not None else found.stat
    problem = None if keys or found.is_store else next(
        iter(report.notes + report.skipped), None)
    return FileState(
        path=found.path,
        kind=found.kind,
        root=root,
        device=st.st_dev,
        inode=st.st_ino,
        size=chunk.done_bytes if _read_on_later(chunk, followed) else st.st_size,
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


def _whole(found: FoundFile) -> bool:
    """A file its format reads whole itself, every time it changes (``Doors.whole``)."""
    fmt = formats.of_kind(found.kind)
    return fmt is not None and fmt.doors.whole


def _read_on_later(chunk: Chunk | None, followed: Followed) -> bool:
    """Lines are left after a read that stopped at its bound: the state's size is where it
    stopped, so the file does not look as the last sync left it and the next sync reads on.
    (Without a carry there is nothing to go on from: the file waits until it changes.)"""
    return chunk is not None and chunk.partial and followed.carry is not None


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"
