"""The browser keeps up with the transcripts (SPEC 14): on open it syncs the sources in a
worker, then follows them (``follow_sources``, on by default, toggled with the key table's
``follow``); new messages show in the results and the preview without a restart, and the
status bar says what happened ("synced 12 new messages", "watching 3 sources"). On a shared
server it does so only when ``[sync] on_open`` says so (``core.sources.settings``): taking a
machine's transcripts into a team server is an explicit act, never a side effect of looking.

What another process takes in (``backscroll watch``, ``sync``, an agent runtime) shows too:
the status poll's change marker (``StateStatus.contents``) moves, and the standing search (or
the list of recent conversations) is asked again (``contents_changed``).

On a state dir with nothing in it, nothing is read before the person asks: the first screen
lists the sources found and takes them in with one key, with progress. The demo never syncs.
``Follower`` is an object the app owns (``app.live``), not a mixin: it runs its workers on the
app (groups ``sources-open``, ``sources``, ``sources-list``), they post ``LiveMessage``s, and
the app hands each one back to ``Follower.handle`` on the UI thread.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Protocol

from textual.timer import Timer

from backscroll.core.sources.listing import SourceStatus, sources_status
from backscroll.core.sources.settings import sync_on_open
from backscroll.core.sources.watch import follow_sources
from backscroll.core.state import StateDir
from backscroll.core.status import StateStatus

from . import keys
from .guard import while_shown
from .messages import (
    LiveMessage,
    SourcesListed,
    SourcesSynced,
    SourcesWatching,
    SyncOnOpen,
    SyncProgress,
    TakeInRequested,
)
from .text import plural, shown
from .widgets import EmptyState, row_key

SYNCED_NOTE_S = 8.0  # "synced 12 new messages" shows this long, then "watching 3 sources"
REFRESH_S = 0.3  # new messages refresh the results at most this often


class LiveHost(Protocol):
    """What the follower needs of the app (``BackscrollApp``)."""

    state: StateDir
    caller: Any
    status: StateStatus | None
    reconcile: Callable[[str], Any]

    @property
    def ready(self) -> bool: ...
    @property
    def search_screen(self) -> Any: ...
    def poll_status(self) -> Any: ...
    def report_database(self, problem: str, title: str, severity: str = "error") -> None: ...
    def post_message(self, message: Any) -> bool: ...
    def notify(self, message: str, **kwargs: Any) -> None: ...
    def set_timer(self, delay: float, callback: Callable[[], Any]) -> Timer: ...
    def run_worker(self, work: Any, **kwargs: Any) -> Any: ...


class Follower:
    """The live sources of one browser: whether they are followed, what was found, the
    status bar's live note, and the refresh of the standing search when contents change."""

    def __init__(self, app: LiveHost, enabled: bool) -> None:
        self.app = app
        self.enabled = enabled
        self._follow_stop: threading.Event | None = None  # set: the follow thread stops
        self._watching = 0  # folders followed
        self.listed: list[SourceStatus] | None = None  # the sources found, for the empty state
        self._taking_in = False
        self._refresh_timer: Timer | None = None
        self._note_timer: Timer | None = None
        self._note: str | None = None  # "synced 12 new messages", shown for SYNCED_NOTE_S
        self._held = False  # [sync] on_open kept the sources out on open (a shared server)
        self._grown: set[str] = set()  # sessions a sync of ours gave new events, since a refresh

    def handle(self, message: LiveMessage) -> None:
        """A worker's (or the empty state's) message, on the UI thread."""
        getattr(self, message.handler_name)(message)

    def _run(self, work: Callable[[], None], group: str) -> None:
        self.app.run_worker(work, group=group, exclusive=True, thread=True, exit_on_error=False)

    @property
    def following(self) -> bool:
        return self._follow_stop is not None

    def first_status(self, empty: bool) -> None:
        """The first status is in: follow the sources, or (nothing here yet) list them."""
        if not self.enabled:
            return
        if empty:
            self.list_sources()
        else:
            self._run(lambda: self.app.post_message(SyncOnOpen(sync_on_open(self.app.state))),
                      "sources-open")

    def on_sync_on_open(self, message: SyncOnOpen) -> None:
        if message.allowed:
            self.start()
        else:
            self._held = True
            self.show_live()

    def start(self) -> None:
        self._held = False  # the person asked (L, t), or the setting said so
        if self._follow_stop is None:
            self._follow_stop = stop = threading.Event()
            self._run(lambda: self._follow(stop), "sources")

    def stop(self) -> None:
        if self._follow_stop is not None:
            self._follow_stop.set()
            self._follow_stop = None
        self._watching = 0
        if self._note_timer is not None:  # the bar says the follow is off, not the last sync
            self._note_timer.stop()
        self._note = self._note_timer = None

    def toggle(self) -> None:
        app = self.app
        if self.following:
            self.stop()
            app.notify("live follow off: new lines are taken in at the next start", timeout=3,
                       markup=False)
        else:
            self.start()
            into = f": this machine's transcripts go into {shown(app.state.describe())}" if (
                app.state.shared) else ""
            app.notify(f"live follow on{into}", timeout=4 if into else 2, markup=False)
        self.show_live()

    def _follow(self, stop: threading.Event) -> None:  # a thread worker
        post = self.app.post_message
        follow_sources(
            self.app.state,
            on_sync=lambda report: post(SourcesSynced(report)),
            stop=stop,
            on_watching=lambda sources: post(SourcesWatching(sources)),
            reconcile=self.app.reconcile,
            on_progress=lambda done, total, _file: post(SyncProgress(done, total)),
        )

    def list_sources(self) -> None:
        self._run(lambda: self.app.post_message(SourcesListed(sources_status(self.app.state))),
                  "sources-list")

    # --- handlers (UI thread) ------------------------------------------------------------

    @while_shown
    def on_sources_listed(self, message: SourcesListed) -> None:
        self.listed = message.statuses
        self.show_empty()

    def on_take_in_requested(self, _message: TakeInRequested) -> None:
        if not any(s.present and s.files for s in self.listed or []):
            self.app.notify("no transcripts found to take in", severity="warning", markup=False)
            return
        self._taking_in = True
        self.show_empty()
        self.start()

    @while_shown
    def on_sync_progress(self, message: SyncProgress) -> None:
        if not self.app.ready:
            return
        if self._taking_in:
            self.app.search_screen.query_one("#empty", EmptyState).progress(message.done,
                                                                            message.total)
        running = 0 < message.total and message.done < message.total
        self.show_live(f"syncing {message.done:,}/{message.total:,} files" if running else None)

    @while_shown
    def on_sources_watching(self, message: SourcesWatching) -> None:
        self._watching = len(message.sources)
        self.show_live()

    @while_shown
    def on_sources_synced(self, message: SourcesSynced) -> None:
        app = self.app
        if not app.ready:
            return
        report = message.report
        for problem in report.problems:  # each once per run, with the status poll's ones
            app.report_database(problem, "sync", severity="warning")
        if self._taking_in:
            self._taking_in = False
            app.poll_status()
        if not report.events:
            self.show_live()  # no "syncing 0/3 files" left over from a sync that failed
            return
        app.poll_status()  # the counts, the welcome note, indexing progress
        if report.messages:
            self._note = f"synced {plural(report.messages, 'new message')}"
            self.show_live()
            if self._note_timer is not None:
                self._note_timer.stop()
            self._note_timer = app.set_timer(SYNCED_NOTE_S, self._note_done)
        self.contents_changed(report.sessions)

    def contents_changed(self, sessions: set[str] | frozenset[str] = frozenset()) -> None:
        """Something was stored or deleted (by a sync of ours, whose ``sessions`` got new
        events, or by another process: the status poll's marker moved): ask the standing
        search again, at most every REFRESH_S."""
        self._grown |= sessions
        if self._refresh_timer is None:
            self._refresh_timer = self.app.set_timer(REFRESH_S, self._refresh)

    @while_shown
    def _refresh(self) -> None:
        """Search again, or list the recent conversations again (the highlight stays), and
        reload the preview if its conversation grew."""
        self._refresh_timer = None
        grown, self._grown = self._grown, set()
        if not self.app.ready:
            return
        screen = self.app.search_screen
        screen.search_now()  # the results, or the list of recent conversations
        current = screen.results.current
        if current is not None and row_key(current) in grown:
            screen.history.load(current, self.app.caller)

    # --- what it shows -----------------------------------------------------------------------

    def _note_done(self) -> None:
        self._note = self._note_timer = None
        self.show_live()

    @while_shown
    def show_live(self, text: str | None = None) -> None:
        """The status bar's live note: ``text``, else the last sync's note while it stands
        (a quiet sync right after, the watcher's first tick say, leaves it its time), else
        what the follow is doing."""
        app = self.app
        if not app.ready:
            return
        if text is None and self._note is not None:
            text = self._note
        elif text is None:
            if not self.enabled:
                text = ""
            elif self._held:
                key = keys.first_key(app, "follow")  # type: ignore[arg-type]
                text = f"local sources not synced here ({key} follows them)"
            elif not self.following:
                text = "live follow off" if app.status and app.status.agents else ""
            else:
                text = f"watching {plural(self._watching, 'source')}" if self._watching else ""
        app.search_screen.status_bar.show_live(text)

    @while_shown
    def show_empty(self) -> None:
        app = self.app
        if app.ready and app.status is not None:
            app.search_screen.query_one("#empty", EmptyState).show(
                app.status.path, self.listed, self._taking_in)
