"""The Textual browser, wired: the app holds what every screen shares (the state dir, the
caller, the clock, the last status) and pushes the ``SearchScreen``, which does the rest.

Threading rule: the UI thread never does I/O. Every core call runs in a thread worker
(``@work(thread=True, exclusive=True, exit_on_error=False, group=...)``; an exclusive worker
cancels only its own group): here ``status`` and ``reconcile``; those of the two objects the
app owns, run on the app: ``app.actions`` (``actions.py``: export, resume, view as) ``export``,
``lookup`` and ``caller``, ``app.live`` (``live.py``: the live sources) ``sources-open``,
``sources`` and ``sources-list``; on the search screen ``search``, ``home``, ``choices``,
``catalog``, and the preview's ``history``. Workers only post messages (``messages.py``);
handlers on the UI thread mutate state and widgets: the app hands an ``ActionMessage`` or a
``LiveMessage`` to the object it is for. ``report_failure`` turns a failed worker of any
screen into one notification.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from multiprocessing import resource_tracker
from typing import Any

from textual import on, work
from textual.app import App, SystemCommand
from textual.binding import Keymap
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from backscroll.core import file_modes
from backscroll.core.errors import BackscrollError
from backscroll.core.reconcile import start_background
from backscroll.core.state import StateDir
from backscroll.core.status import StateStatus, state_status
from backscroll.core.visibility import OPERATOR, Caller

from . import keys
from .actions import SessionActions
from .guard import while_shown
from .live import Follower
from .messages import ActionMessage, FiltersChanged, LiveMessage, PrivacyWarning, StatusPolled
from .screens import HelpScreen, SearchScreen, ViewAsChoice
from .text import Clock, shown

SEARCH_DEBOUNCE_S = 0.025  # keystroke-to-repaint goal: p95 <= 100 ms (docs/browser.md)
PREVIEW_DEBOUNCE_S = 0.05  # holding j must not start a history read per result
STATUS_POLL_S = 0.5
IDLE_POLL_TICKS = 4  # nothing to index: poll every 2 s instead
# No status poll while a person types: at 1M messages one costs ~55 ms of a core, and a
# keystroke's search waiting behind a poll was the slowest 5% (docs/browser.md).
TYPING_PAUSE_S = 1.0


def _start_resource_tracker() -> None:
    """Reconciling in the background spawns a pool (core/reconcile.py), whose helper
    process multiprocessing starts with ``sys.stderr``'s descriptor. Textual captures stderr
    while it runs (descriptor -1), so the helper is started now, before it does."""
    if os.name == "posix":
        resource_tracker.ensure_running()


class BackscrollApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "backscroll"
    BINDINGS = keys.bindings(keys.APP)

    def __init__(
        self,
        state: StateDir,
        caller: Caller | None = None,
        *,
        now: Clock = time.time,
        reconcile: Callable[[str], Any] | None = None,
        status: Callable[[StateDir], StateStatus] = state_status,
        auto_reconcile: bool = True,
        debounce: float = SEARCH_DEBOUNCE_S,
        preview_debounce: float = PREVIEW_DEBOUNCE_S,
        poll_interval: float = STATUS_POLL_S,
        sources: bool = True,
        grouped: bool = True,
    ) -> None:
        super().__init__()
        _start_resource_tracker()
        self.state = state
        self.caller = caller or OPERATOR
        self.now = now
        self.reconcile = reconcile or (lambda agent: start_background(state, agent, "thread"))
        self.status: StateStatus | None = None
        self._status_of = status
        self._auto_reconcile = auto_reconcile
        self._auto_started: set[str] = set()  # agents reconciled on our own, once each
        self._debounce = debounce
        self._preview_debounce = preview_debounce
        self._poll_interval = poll_interval
        self._grouped = grouped
        self._ticks_since_poll = 0
        self._search_screen: SearchScreen | None = None
        self._reported: set[str] = set()  # problems already notified about, once per run
        self.live = Follower(self, sources)
        self.actions = SessionActions(self)

    async def on_mount(self) -> None:
        # Warnings about loose modes come from worker threads; post_message is thread-safe.
        file_modes.set_warning_sink(lambda text: self.post_message(PrivacyWarning(text)))
        self._search_screen = SearchScreen(self._debounce, self._preview_debounce, self._grouped)
        await self.push_screen(self._search_screen)
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.poll_status()
        self.set_interval(self._poll_interval, self._status_tick)

    def on_unmount(self) -> None:
        self.live.stop()  # the follow thread ends at its next check (tens of ms)
        file_modes.set_warning_sink(None)

    def report_database(self, problem: str, title: str, severity: str = "error") -> None:
        """One notification per problem (a database, a file a sync could not read), however
        often a poll, a search or a sync meets it."""
        if problem not in self._reported:
            self._reported.add(problem)
            self.notify(shown(problem), title=title, severity=severity, markup=False,  # type: ignore[arg-type]
                        timeout=10)

    def on_privacy_warning(self, message: PrivacyWarning) -> None:
        self.notify(shown(message.text), title="not private", severity="warning", markup=False,
                    timeout=10)

    @on(LiveMessage)
    def _to_follower(self, message: LiveMessage) -> None:
        self.live.handle(message)

    @on(ActionMessage)
    def _to_actions(self, message: ActionMessage) -> None:
        self.actions.handle(message)

    # --- the search screen ------------------------------------------------------------------

    @property
    def search_screen(self) -> SearchScreen:
        if self._search_screen is None:
            raise RuntimeError("the browser is not running")
        return self._search_screen

    @property
    def ready(self) -> bool:
        """The search screen is up (not yet, or no more, while starting or quitting)."""
        return self._search_screen is not None and self._search_screen.is_attached

    # --- status and reconciliation ----------------------------------------------------------

    def _status_tick(self) -> None:
        """Poll every tick while indexing is (or may be) going on, else every fourth tick
        (another process may start a reindex); never while a search runs or the person is
        typing (it would compete with the search for the CPU: reading the counts of a big
        state takes tens of ms)."""
        self._ticks_since_poll += 1
        scheduler = self.search_screen.scheduler if self.ready else None
        if scheduler is None or scheduler.running or scheduler.idle_for() < TYPING_PAUSE_S:
            return
        status = self.status
        busy = self.search_screen.search_indexing or status is None or status.reconciling or bool(
            status.pending_sessions
        )
        if busy or self._ticks_since_poll >= IDLE_POLL_TICKS:
            self.poll_status()

    @work(thread=True, exclusive=True, group="status", exit_on_error=False)
    def poll_status(self) -> None:
        self.post_message(StatusPolled(self._status_of(self.state)))

    @while_shown
    def on_status_polled(self, message: StatusPolled) -> None:
        self._ticks_since_poll = 0
        if not self.ready:
            return
        first = self.status is None
        self.status = message.status
        for agent in message.status.broken:
            self.report_database(agent.error or agent.state, f"Database {agent.state}")
        if self._auto_reconcile:
            waiting = [a.agent for a in message.status.agents if a.needs_reconcile
                       and not a.progress.running and a.agent not in self._auto_started]
            if waiting:
                self._auto_started.update(waiting)
                self.start_reconciling(waiting)
        self.search_screen.status_changed(first)
        if first:
            self.live.first_status(not message.status.agents)
        if not message.status.agents:
            self.live.show_empty()

    @work(thread=True, exclusive=True, group="reconcile", exit_on_error=False)
    def start_reconciling(self, agents: list[str]) -> None:
        """Start each agent's background reconciliation (opening its database blocks)."""
        for agent in agents:
            self.reconcile(agent)

    # --- failures ---------------------------------------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.report_failure(event)

    def report_failure(self, event: Worker.StateChanged) -> None:
        """A failed worker (of the app or a screen) becomes one notification; the rest keeps
        working. A core error is its own sentence; anything else is a bug, said as such."""
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        if isinstance(error, BackscrollError):
            text = str(error)
        else:
            text = f"unexpected {type(error).__name__}: {error}"
        self.notify(shown(text), title="backscroll", severity="error", markup=False, timeout=8)

    # --- filters, theme --------------------------------------------------------------------

    @while_shown
    def on_filters_changed(self, message: FiltersChanged) -> None:
        if self.ready:
            self.search_screen.filters_changed(message)

    def flash(self, text: str) -> None:
        flash = getattr(self.screen, "flash", None)
        if callable(flash):
            flash(text)
        else:
            self.notify(text, markup=False, timeout=4)

    def _theme_changed(self, _theme: object) -> None:
        """Transcript text is Rich text coloured from the theme: draw it again."""
        for screen in self.screen_stack:
            restyle = getattr(screen, "restyle", None)
            if callable(restyle) and screen.is_attached:
                restyle()

    # --- keys: help, palette, keymap ------------------------------------------------------

    def action_toggle_follow(self) -> None:
        self.live.toggle()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def set_keymap(self, keymap: Keymap) -> None:
        super().set_keymap(keymap)
        if self.ready:
            self.search_screen.keys_changed()

    def update_keymap(self, keymap: Keymap) -> None:
        super().update_keymap(keymap)
        if self.ready:
            self.search_screen.keys_changed()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The key table's commands, described with their current keys; the search screen's
        only when the palette was opened on it."""
        if isinstance(screen, SearchScreen):
            for entry in keys.SEARCH:
                if entry.title:
                    yield SystemCommand(entry.title, keys.palette_help(self, entry.id),
                                        getattr(screen, f"action_{entry.action}"))
            yield SystemCommand("View as operator", "Back to seeing every session",
                                lambda: self.actions.switch_caller(ViewAsChoice(None)))
        for entry in keys.APP:
            if entry.title:
                yield SystemCommand(entry.title, keys.palette_help(self, entry.id),
                                    getattr(self, f"action_{entry.action}"))
        yield from super().get_system_commands(screen)


def make_app(state: StateDir, caller: Caller | None = None, **options: Any) -> BackscrollApp:
    """The one factory the CLI, the tests, the screenshots and the benchmark use.

    ``options``: ``now`` (a clock in epoch seconds; tests freeze it), ``reconcile`` (called
    with an agent id when indexing is pending; default a background thread), ``status`` (the
    status reader), ``auto_reconcile``, ``debounce``, ``preview_debounce``, ``poll_interval``,
    ``sources`` (sync the live sources on open and follow them; False for the demo),
    ``grouped`` (results one row per conversation, the default; False: one per message).
    """
    return BackscrollApp(state, caller, **options)


def run_browser(state: StateDir, caller: Caller | None = None, sources: bool = True) -> int:
    app = make_app(state, caller, sources=sources)
    app.run()
    return app.return_code or 0
