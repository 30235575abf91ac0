"""Following the sources as they are written: ``backscroll watch`` and the browser's live
follow (SPEC 14).

``follow_sources`` syncs everything once, then waits for the operating system to report a
change under a source folder (``watchfiles``, Rust-backed notify: inotify, FSEvents, ...) and
syncs the sources that changed, a fraction of a second after the write. A sync only stats
unchanged files, so syncing a whole source for one changed file costs milliseconds, and no
event that the notifier merges or drops can make a file be missed: the next sync sees it.

Folders come and go: every couple of seconds the set of source folders (and their identity,
so a folder deleted and made again counts as new) is compared with the one being watched; on
a difference the watcher starts over with a catch-up sync. Without ``watchfiles`` (or when
it fails), the same loop polls: a stat-only sync every second.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Callable

from .. import formats
from ..errors import BackscrollError
from ..state import StateDir
from .detect import Source, all_sources, is_folder
from .sync import Progress, SyncReport, sync_sources

DEBOUNCE_MS = 200  # changes are gathered at most this long before a sync
STEP_MS = 30  # ... and a sync starts once no change came for this long
CHECK_S = 2.0  # how often the set of source folders is compared with the watched one
# The notifier answers at least this often, a change or not. Its first answer (a sync of
# everything) so comes this soon after its watches are in place: a line written between the
# catch-up sync and then is not reported, and waited for the first answer (CHECK_S, 2 s, when
# that was the timeout: the first watched line of bench_home took 2.6 s).
TICK_MS = 250
RESYNC_S = 60.0  # a full (stat-only) sync at least this often, whatever was reported
POLL_S = 1.0  # polling interval without watchfiles, or while no source folder exists


def follow_sources(
    state: StateDir,
    on_sync: Callable[[SyncReport], None],
    stop: threading.Event,
    on_watching: Callable[[list[Source]], None] | None = None,
    reconcile: Callable[[str], Any] | None = None,
    polling: bool = False,
    on_progress: Progress | None = None,
) -> None:
    """Sync, then sync again after every change of a source, until ``stop`` is set.

    ``on_sync`` gets every sync's report (most find nothing new); ``on_watching`` the sources
    followed whenever that set changes; ``reconcile`` is called with each agent that has
    sessions to index after a sync; ``on_progress`` follows the files each sync reads. A
    config error at the start is raised; later ones are reported once through ``on_sync``, and
    the sources followed so far stay."""
    _Watcher(state, on_sync, stop, on_watching, reconcile, polling, on_progress).run()


class _Watcher:
    def __init__(self, state: StateDir, on_sync: Callable[[SyncReport], None],
                 stop: threading.Event, on_watching: Callable[[list[Source]], None] | None,
                 reconcile: Callable[[str], Any] | None, polling: bool,
                 on_progress: Progress | None) -> None:
        self.state = state
        self.on_sync = on_sync
        self.stop = stop
        self.on_watching = on_watching
        self.on_progress = on_progress
        self.reconcile = reconcile
        self.notify = None if polling else _watchfiles()
        self.sources = all_sources(state.path)
        self.config_error: str | None = None

    def run(self) -> None:
        watched: tuple | None = None
        while not self.stop.is_set():
            self.sources = self._current()
            identity = _identity(self.sources)
            if identity != watched and self.on_watching is not None:
                self.on_watching(self.sources)
            watched = identity
            self.sync(self.sources)
            folders = [s.path for s in self.sources if is_folder(s.path)]
            folders += [f for f in outside_folders(self.sources) if f not in folders]
            if self.notify is None or not folders:
                self._poll(identity)
            else:
                self._watch(folders, identity)

    def _watch(self, folders: list[Path], identity: tuple) -> None:
        """Sync the sources a change was reported under, until the folders change. The first
        answer (a change, or the first tick) syncs them all: a line written between the
        catch-up sync and the moment the watcher started is not reported."""
        last_full: float | None = None
        checked = time.monotonic()
        try:
            for changes in self.notify.watch(
                *folders, watch_filter=_transcript_change, debounce=DEBOUNCE_MS, step=STEP_MS,
                stop_event=self.stop, rust_timeout=TICK_MS, yield_on_timeout=True,
                raise_interrupt=False, ignore_permission_denied=True,
            ):
                if last_full is None or time.monotonic() - last_full > RESYNC_S:
                    self.sync(self.sources)
                    last_full = time.monotonic()
                elif changes:
                    paths = [Path(path) for _change, path in changes]
                    self.sync(changed_sources(self.sources, paths))
                if time.monotonic() - checked < CHECK_S:
                    continue
                checked = time.monotonic()
                if _identity(self._current()) != identity:
                    return  # a folder came, went or was made anew, or the config changed
        except (OSError, RuntimeError) as err:  # the notifier failed: a folder vanished at start
            self.on_sync(SyncReport(problems=[f"watching the sources failed ({err}); "
                                              "starting over"]))
            self.stop.wait(POLL_S)

    def _poll(self, identity: tuple) -> None:
        """Sync every second (stat only) until the folders change."""
        while not self.stop.wait(POLL_S):
            if _identity(self._current()) != identity:
                return
            self.sync(self.sources)

    def sync(self, sources: list[Source]) -> None:
        try:
            report = sync_sources(self.state, sources, self.on_progress)
        except BackscrollError as err:  # a database locked or unwritable: say so, go on
            report = SyncReport(sources=len(sources), problems=[str(err)])
        if self.reconcile is not None:
            for agent in sorted(report.pending):
                self.reconcile(agent)
        self.on_sync(report)

    def _current(self) -> list[Source]:
        """The sources now; on a config error, the ones before (and the error, once)."""
        try:
            sources = all_sources(self.state.path)
        except BackscrollError as err:
            if str(err) != self.config_error:
                self.config_error = str(err)
                self.on_sync(SyncReport(sources=len(self.sources), problems=[str(err)]))
            return self.sources
        self.config_error = None
        return sources


def outside_folders(sources: list[Source]) -> dict[Path, Source]:
    """The folders of the databases a source's format locates outside it
    (``Database.outside``: Crush's project databases, which ``projects.json`` lists), each
    with its source: watched too, so a write there is seen at once."""
    found: dict[Path, Source] = {}
    for source in sources:
        fmt = formats.get(source.kind)
        database = fmt.doors.database if fmt is not None else None
        if database is None or not database.outside or database.locate is None:
            continue
        try:
            located = database.locate(source.path)
        except OSError:
            continue
        for file, _agent in located:
            if not file.is_relative_to(source.path) and is_folder(file.parent):
                found.setdefault(file.parent, source)
    return found


def changed_sources(sources: list[Source], paths: list[Path]) -> list[Source]:
    """The sources a change at ``paths`` concerns: under a source, or in a folder of a
    database it locates outside itself."""
    outside = outside_folders(sources) if any(
        not any(p.is_relative_to(s.path) for s in sources) for p in paths) else {}
    return [s for s in sources if any(p.is_relative_to(s.path) or outside.get(p.parent) == s
                                      for p in paths)]


def _identity(sources: list[Source]) -> tuple:
    """The sources and their folders' identity: a folder made anew is another folder; and
    the folders located outside them (a project Crush lists anew is watched)."""
    identity: list[Any] = [tuple(sorted(outside_folders(sources)))]
    for source in sources:
        try:
            st = source.path.stat()
            identity.append((source, st.st_dev, st.st_ino))
        except OSError:
            identity.append((source, None, None))
    return tuple(identity)


def _transcript_change(_change: Any, path: str) -> bool:
    """A change that may concern a transcript: a transcript or archive, a session store, a
    database or its ``-wal``, or a folder (a folder moved in brings files no one reports)."""
    name = Path(path).name
    return (".jsonl" in name or name == "sessions.json" or "." not in name
            or is_database_file(name) or _in_tree(path)
            or any(fmt.doors.transcript(name) for fmt in formats.known()))  # whole-file .json


def is_database_file(name: str) -> bool:
    """A format's SQLite database, or its ``-wal`` file (a write that lands only there is a
    change of the database: the sync's stat of it counts the ``-wal``, sqlite_source.py)."""
    base = name[: -len("-wal")] if name.endswith("-wal") else name
    return any(fmt.doors.database is not None and base in fmt.doors.database.names
               for fmt in formats.known())


def _in_tree(path: str) -> bool:
    """A file in a folder a format reads like a database (``Database.trees``)."""
    parts = set(Path(path).parts)
    return any(fmt.doors.database is not None and parts.intersection(fmt.doors.database.trees)
               for fmt in formats.known())


def _watchfiles() -> Any:
    try:
        import watchfiles
    except ImportError:  # a platform without its wheel: poll instead
        return None
    return watchfiles
