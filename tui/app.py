"""The Textual browser: search as you type, the conversation around the highlighted hit, the
whole conversation on ``enter``, "view as" another caller, copy and export.

Threading rule: the UI thread never does I/O. Every core call runs in a thread worker
(``search``, ``history``, ``status``, ``catalog``, ``export`` groups: an exclusive worker
cancels only its own group); workers only post messages; handlers on the UI thread mutate
widgets. Answers carry what they answer (a generation number for searches, the result for
histories) and a handler drops an answer nobody is waiting for any more. One
``Worker.StateChanged`` handler turns a failed worker into a one-sentence notification.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Footer, Input, OptionList, Static
from textual.worker import Worker, WorkerState

from backscroll.core.catalog import SessionSummary, list_sessions
from backscroll.core.config import load_config, make_caller
from backscroll.core.errors import BackscrollError, Forbidden, ValidationError
from backscroll.core.export import write_export
from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.reconcile import start_background
from backscroll.core.search import LIMIT_MAX, SearchRequest, SearchResponse, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.status import StateStatus, state_status
from backscroll.core.visibility import OPERATOR, Caller

from .screens import (
    ConversationScreen,
    ExportChoice,
    ExportScreen,
    HelpScreen,
    ViewAsChoice,
    ViewAsScreen,
    help_rows,
)
from .text import Clock, printable
from .widgets import (
    HistoryLoaded,
    HistoryPane,
    IndexingView,
    ResultsList,
    SearchAnswered,
    StatusBar,
    StatusPolled,
    count_line,
    welcome_text,
)

SEARCH_DEBOUNCE_S = 0.025  # keystroke-to-repaint goal: p95 <= 100 ms (docs/browser.md)
PREVIEW_DEBOUNCE_S = 0.05  # holding j must not start a history read per result
STATUS_POLL_S = 0.5
IDLE_POLL_TICKS = 4  # nothing to index: poll every 2 s instead
PREVIEW_MESSAGES = 25
CONVERSATION_MAX_BYTES = 8 * 1024 * 1024  # the conversation screen shows the whole branch
SCOPES = ("all", "agent", "session")
WidgetT = TypeVar("WidgetT", bound=Widget)

# Actions of the search screen; off while the conversation screen is on top.
_MAIN_ACTIONS = {
    "focus_search", "cursor_down", "cursor_up", "open", "back", "view_as", "toggle_scope",
    "toggle_order", "toggle_match", "copy", "export",
}


@dataclass(frozen=True)
class Scope:
    kind: str = "all"  # all | agent | session
    value: str | None = None

    def describe(self) -> str:
        if self.kind == "agent":
            return f"agent {self.value}"
        if self.kind == "session":
            return f"session {self.value}"
        return "all agents"


class SessionsLoaded(Message):
    def __init__(self, sessions: list[SessionSummary]) -> None:
        super().__init__()
        self.sessions = sessions


class CallerChanged(Message):
    def __init__(self, caller: Caller) -> None:
        super().__init__()
        self.caller = caller


class ExportFinished(Message):
    def __init__(self, session_key: str, path: str, size: int) -> None:
        super().__init__()
        self.session_key = session_key
        self.path = path
        self.size = size


class BackscrollApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "backscroll"

    BINDINGS = [
        Binding("slash", "focus_search", "Search", id="focus_search"),
        Binding("j,down", "cursor_down", "Down", show=False, id="cursor_down"),
        Binding("k,up", "cursor_up", "Up", show=False, id="cursor_up"),
        Binding("enter", "open", "Open", show=False, id="open"),
        Binding("escape", "back", "Back", show=False, id="back"),
        Binding("v", "view_as", "View as", id="view_as", tooltip="Search as another session"),
        Binding("s", "toggle_scope", "Scope", id="scope", tooltip="All / agent / session"),
        Binding("o", "toggle_order", "Order", id="order", tooltip="Best match / newest"),
        Binding("m", "toggle_match", "Match", id="match", tooltip="Prefix / exact"),
        Binding("y", "copy", "Copy", id="copy", tooltip="Copy the excerpt"),
        Binding("e", "export", "Export", id="export", tooltip="Export the conversation"),
        Binding("question_mark,f1", "help", "Help", id="help"),
        Binding("q", "quit", "Quit", id="quit"),
    ]

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
    ) -> None:
        super().__init__()
        self.state = state
        self.caller = caller or OPERATOR
        self.now = now
        self._reconcile = reconcile or (lambda agent: start_background(state, agent, "thread"))
        self._status_of = status
        self._auto_reconcile = auto_reconcile
        self._auto_started: set[str] = set()
        self._debounce = debounce
        self._preview_debounce = preview_debounce
        self._poll_interval = poll_interval
        self.match = "prefix"
        self.order = "best"
        self.scope = Scope()
        self.generation = 0  # bumped per search; answers for older ones are dropped
        self._reported_unreadable: set[str] = set()  # databases already notified about
        self.last_request: SearchRequest | None = None
        self.last_response: SearchResponse | None = None
        self.status: StateStatus | None = None
        self.search_indexing = False  # the shown answer said indexing=True
        self._refresh_when_indexed = False
        self._search_timer: Timer | None = None
        self._search_worker: Worker[None] | None = None  # at most one search runs at a time
        self._search_pending = False  # the text changed while it ran: search again after
        self._last_keystroke = 0.0
        self._ticks_since_poll = 0
        self._preview_timer: Timer | None = None
        self._welcome_counts: tuple[int, int] | None = None

    # --- layout -------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="search-bar"):
            yield Input(
                placeholder="search: words are ANDed, \"quotes\" for a phrase  (/ to focus)",
                id="search",
            )
            yield Static("", id="search-error")
        with Horizontal(id="body"):
            with Vertical(id="results-pane"):
                yield Static(count_line(None, None), id="count")
                yield ResultsList(id="results")
            yield HistoryPane(
                placeholder="The conversation around the highlighted result shows here.",
                id="history",
            )
        yield Static("", id="empty")
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self._main_query("#search", Input).focus()
        self._show_status()
        self.poll_status()
        self.set_interval(self._poll_interval, self._status_tick)

    # --- widgets by name (on the search screen, whatever screen is on top) -----------------

    def _main_query(self, selector: str, kind: type[WidgetT] = Widget) -> WidgetT:  # type: ignore
        return self.screen_stack[0].query_one(selector, kind)

    @property
    def ready(self) -> bool:
        """The search screen exists (not yet, or no more, while starting or quitting)."""
        return bool(self.screen_stack) and self.is_running

    @property
    def search_input(self) -> Input:
        return self._main_query("#search", Input)

    @property
    def results(self) -> ResultsList:
        return self._main_query("#results", ResultsList)

    @property
    def history(self) -> HistoryPane:
        return self._main_query("#history", HistoryPane)

    @property
    def status_bar(self) -> StatusBar:
        return self._main_query("#status", StatusBar)

    @property
    def on_main_screen(self) -> bool:
        return len(self.screen_stack) <= 1

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.on_main_screen or action not in _MAIN_ACTIONS

    # --- search ---------------------------------------------------------------------------

    @on(Input.Changed, "#search")
    def _query_changed(self) -> None:
        """Debounce with a leading edge: a keystroke after a pause searches at once; keys that
        come faster than the debounce (a burst) restart the timer, so only the burst's last
        text is searched. ``search_now`` adds single flight on top (docs/browser.md)."""
        self.generation += 1  # an answer in flight is for older text now
        now = time.monotonic()
        burst = now - self._last_keystroke < self._debounce
        self._last_keystroke = now
        if self._search_timer is not None:
            self._search_timer.stop()
            self._search_timer = None
        if burst:
            self._search_timer = self.set_timer(self._debounce, self.search_now)
        else:
            self.search_now()

    @on(Input.Submitted, "#search")
    def _query_submitted(self) -> None:
        if self.results.current is not None:
            self.action_open()
        else:
            self.search_now()

    def _request(self, text: str) -> SearchRequest:
        return SearchRequest(
            query=text,
            limit=LIMIT_MAX,
            match=self.match,
            order=self.order,
            agent=self.scope.value if self.scope.kind == "agent" else None,
            session_key=self.scope.value if self.scope.kind == "session" else None,
        )

    def search_now(self) -> None:
        self._search_timer = None
        if not self.ready:
            return
        self.generation += 1
        text = self.search_input.value
        self._show_error(None)
        if not text.strip() or (self.status is not None and not self.status.agents):
            self.last_request = self.last_response = None
            self.search_indexing = False
            self.results.show_results([], self.now, text)
            self._main_query("#count", Static).update(count_line(None, None))
            self.history.show_note(welcome_text(self.status))
            self._show_status()
            return
        if self._search_worker is not None and not self._search_worker.is_finished:
            # Single flight: searches never pile up on a slow database; the newest text is
            # searched as soon as the running one ends (its answer is then stale, dropped).
            self._search_pending = True
            return
        self._search_pending = False
        self._search_worker = self.run_search(self.generation, self._request(text), self.caller)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def run_search(self, generation: int, request: SearchRequest, caller: Caller) -> None:
        try:
            response = sessions_search(self.state, request, caller, on_pending=self._reconcile)
        except ValidationError as err:
            self.post_message(SearchAnswered(generation, request, error=str(err)))
            return
        self.post_message(SearchAnswered(generation, request, response))

    def on_search_answered(self, message: SearchAnswered) -> None:
        if not self.ready:
            return
        if message.generation != self.generation:
            return  # a newer search (or newer text) supersedes it
        if message.error is not None:
            self._show_error(message.error)
            return
        response = message.response
        assert response is not None
        current = self.results.current
        keep = None
        last = self.last_request
        if current is not None and last is not None and last.query == message.request.query:
            keep = (current.session_key, current.message_id)
        self.last_request, self.last_response = message.request, response
        self.search_indexing = response.indexing
        self._refresh_when_indexed = response.indexing
        for problem in response.unreadable:
            if problem not in self._reported_unreadable:  # one notification per database
                self._reported_unreadable.add(problem)
                self.notify(problem, title="Skipped a database", severity="error")
        self._main_query("#count", Static).update(count_line(message.request, response))
        self.results.show_results(response.results, self.now, message.request.query, keep)
        if not response.results:
            self.history.show_note("No results: nothing to show.")
        self._show_status()

    def _show_error(self, error: str | None) -> None:
        line = self._main_query("#search-error", Static)
        line.update(Text(error or ""))
        line.set_class(error is not None, "-shown")

    # --- the preview pane -------------------------------------------------------------------

    @on(OptionList.OptionHighlighted, "#results")
    def _result_highlighted(self) -> None:
        if self._preview_timer is not None:
            self._preview_timer.stop()
        if self.results.current is None:
            return
        self._preview_timer = self.set_timer(self._preview_debounce, self._load_preview)

    def _load_preview(self) -> None:
        self._preview_timer = None
        if not self.ready or self._search_timer is not None or self._search_worker is not None:
            return  # still typing: the next answer moves the highlight and asks again
        result = self.results.current
        if result is not None:
            self.load_history(result, self.caller, full=False)

    @work(thread=True, exclusive=True, group="history", exit_on_error=False)
    def load_history(self, result: Any, caller: Caller, full: bool) -> None:
        request = HistoryRequest(
            session_key=result.session_key,
            message_id=result.message_id,
            limit=None if full else PREVIEW_MESSAGES,
            include_tools=True,
            **({"max_bytes": CONVERSATION_MAX_BYTES} if full else {}),
        )
        try:
            response = sessions_history(self.state, request, caller)
        except (ValidationError, Forbidden) as err:  # e.g. rewound meanwhile: say so, inline
            self.post_message(HistoryLoaded(result, error=str(err), full=full))
            return
        self.post_message(HistoryLoaded(result, response, full=full))

    def on_history_loaded(self, message: HistoryLoaded) -> None:
        if not self.ready:
            return
        if message.full:
            if message.error is not None:
                self.notify(message.error, severity="warning", markup=False)
            elif message.response is not None and self.on_main_screen:
                self.push_screen(
                    ConversationScreen(message.response, message.result.message_id, self.now)
                )
            return
        if message.result != self.results.current:
            return  # the highlight moved on
        if message.error is not None:
            self.history.show_note(message.error, style="yellow")
        elif message.response is not None:
            self.history.show_history(message.response, message.result.message_id, self.now)

    # --- status and reconciliation ----------------------------------------------------------

    def _status_tick(self) -> None:
        """Poll every tick while indexing is (or may be) going on, else every fourth tick
        (another process may start a reindex); never while a search runs (it would compete
        with it for the CPU: reading the counts of a big state takes tens of ms)."""
        self._ticks_since_poll += 1
        if self._search_worker is not None:
            return
        status = self.status
        busy = self.search_indexing or status is None or status.reconciling or bool(
            status.pending_sessions
        )
        if busy or self._ticks_since_poll >= IDLE_POLL_TICKS:
            self.poll_status()

    @work(thread=True, exclusive=True, group="status", exit_on_error=False)
    def poll_status(self) -> None:
        self._ticks_since_poll = 0
        status = self._status_of(self.state)
        if self._auto_reconcile:
            for agent in status.agents:
                pending = agent.dirty and not agent.progress.running and not agent.error
                if pending and agent.agent not in self._auto_started:
                    self._auto_started.add(agent.agent)
                    self._reconcile(agent.agent)
        self.post_message(StatusPolled(status))

    def on_status_polled(self, message: StatusPolled) -> None:
        if not self.ready:
            return
        first = self.status is None
        status = self.status = message.status
        empty = not status.agents
        self._main_query("#body").display = not empty
        self._main_query("#empty", Static).display = empty
        if empty:
            self._main_query("#empty", Static).update(empty_state_text(status.path))
        elif not self.search_input.value.strip() and self.last_request is None:
            counts = (status.total_sessions, sum(a.messages for a in status.agents))
            if counts != self._welcome_counts:
                self._welcome_counts = counts
                self.history.show_note(welcome_text(status))
        elif first:
            self.search_now()
        if self._refresh_when_indexed and not status.reconciling and not status.pending_sessions:
            self._refresh_when_indexed = False  # once: the search below decides again
            if self.search_input.value.strip():
                self.search_now()
            else:
                self.search_indexing = False
        self._show_status()

    def _show_status(self) -> None:
        indexing = IndexingView.of(self.status)
        incomplete = indexing.running or self.search_indexing
        sessions = self.status.total_sessions if self.status else 0
        self.status_bar.show(indexing, incomplete, sessions, self.context_line())

    def context_line(self) -> str:
        order = "best match" if self.order == "best" else "newest first"
        return f"as {self.caller.describe()} · {self.match} · {order} · {self.scope.describe()}"

    # --- failures ---------------------------------------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is self._search_worker and event.worker.is_finished:
            self._search_worker = None
            if self._search_pending and self.ready:
                self.search_now()
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        if isinstance(error, BackscrollError):
            text = str(error)
        else:
            text = f"unexpected {type(error).__name__}: {error}"
        self.notify(text, title="backscroll", severity="error", markup=False, timeout=8)

    # --- actions ----------------------------------------------------------------------------

    def action_focus_search(self) -> None:
        self.search_input.focus()

    def action_cursor_down(self) -> None:
        self.results.action_cursor_down()

    def action_cursor_up(self) -> None:
        self.results.action_cursor_up()

    @on(OptionList.OptionSelected, "#results")
    def action_open(self) -> None:
        result = self.results.current
        if result is None:
            self.bell()
            return
        self.load_history(result, self.caller, full=True)

    def action_back(self) -> None:
        """Escape ladder on the search screen, one step closer to an empty search bar:
        results or history -> the search bar -> the search cleared. It never quits."""
        search = self.search_input
        if self.focused is not search:
            search.focus()
        elif search.value:
            search.value = ""
        else:
            self._show_error(None)

    def action_toggle_order(self) -> None:
        self.order = "recent" if self.order == "best" else "best"
        self._changed_mode(f"order: {'newest first' if self.order == 'recent' else 'best match'}")

    def action_toggle_match(self) -> None:
        self.match = "exact" if self.match == "prefix" else "prefix"
        self._changed_mode(f"match: {self.match}")

    def action_toggle_scope(self) -> None:
        current = self.results.current
        kind = SCOPES[(SCOPES.index(self.scope.kind) + 1) % len(SCOPES)]
        if kind == "agent":
            if current is None:
                self.notify("Highlight a result first: the scope follows it.", markup=False)
                return
            self.scope = Scope("agent", current.agent or current.session_key.split(":")[1])
        elif kind == "session":
            key = current.session_key if current is not None else None
            self.scope = Scope("session", key) if key else Scope()
        else:
            self.scope = Scope()
        self._changed_mode(f"scope: {self.scope.describe()}")

    def _changed_mode(self, what: str) -> None:
        self._show_status()
        self.notify(what, timeout=2, markup=False)
        if self.search_input.value.strip():
            self.search_now()

    def action_copy(self) -> None:
        result = self.results.current
        if result is None:
            self.bell()
            return
        self.copy_to_clipboard(result.excerpt)
        self.notify(f"copied the excerpt from {printable(result.session_key, True)}",
                    markup=False, timeout=3)

    def action_export(self) -> None:
        result = self.results.current
        if result is None:
            self.notify("Highlight a result to export its conversation.", markup=False)
            return
        self.ask_export(result.session_key)

    @on(ConversationScreen.ExportRequested)
    def _export_from_conversation(self, message: ConversationScreen.ExportRequested) -> None:
        self.ask_export(message.session_key)

    def ask_export(self, session_key: str) -> None:
        def chosen(choice: ExportChoice | None) -> None:
            if choice is not None:
                self.run_export(session_key, choice, self.caller)

        self.push_screen(ExportScreen(session_key), chosen)

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def run_export(self, session_key: str, choice: ExportChoice, caller: Caller) -> None:
        path, size = write_export(self.state, session_key, caller, choice.path, choice.fmt)
        self.post_message(ExportFinished(session_key, str(path), size))

    def on_export_finished(self, message: ExportFinished) -> None:
        self.notify(
            f"exported {message.session_key} ({message.size:,} bytes, redacted) to {message.path}",
            title="export",
            markup=False,
        )

    def action_view_as(self) -> None:
        self.load_sessions()

    @work(thread=True, exclusive=True, group="catalog", exit_on_error=False)
    def load_sessions(self) -> None:
        self.post_message(SessionsLoaded(list_sessions(self.state)))

    def on_sessions_loaded(self, message: SessionsLoaded) -> None:
        if not self.on_main_screen:
            return

        def chosen(choice: ViewAsChoice | None) -> None:
            if choice is not None:
                self.switch_caller(choice)

        self.push_screen(ViewAsScreen(message.sessions, self.caller, self.now), chosen)

    @work(thread=True, exclusive=True, group="catalog", exit_on_error=False)
    def switch_caller(self, choice: ViewAsChoice) -> None:
        if choice.key is None:
            caller = OPERATOR
        else:
            caller = make_caller(load_config(self.state.path), choice.key, None, choice.sandboxed)
        self.post_message(CallerChanged(caller))

    def on_caller_changed(self, message: CallerChanged) -> None:
        if not self.ready:
            return
        self.caller = message.caller
        self.scope = Scope()
        self._show_status()
        self.notify(f"searching as {self.caller.describe()}", markup=False, timeout=3)
        self.search_now()

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(help_rows(), self.get_key_display_for))

    def get_key_display_for(self, key: str) -> str:
        return {"question_mark": "?", "slash": "/"}.get(key, key)

    # --- command palette ----------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield SystemCommand("Search", "Focus the search bar (/)", self.action_focus_search)
        yield SystemCommand("Open conversation", "The whole conversation of the highlighted "
                            "result (enter)", self.action_open)
        yield SystemCommand("View as…", "Search as a chosen session, sandboxed or not (v)",
                            self.action_view_as)
        yield SystemCommand("View as operator", "Back to seeing every session",
                            lambda: self.switch_caller(ViewAsChoice(None)))
        yield SystemCommand("Toggle scope", "All agents / this agent / this session (s)",
                            self.action_toggle_scope)
        yield SystemCommand("Toggle order", "Best match / newest first (o)",
                            self.action_toggle_order)
        yield SystemCommand("Toggle match mode", "Prefix while typing / exact words (m)",
                            self.action_toggle_match)
        yield SystemCommand("Copy excerpt", "Copy the highlighted excerpt (y)", self.action_copy)
        yield SystemCommand("Export conversation", "Markdown or JSON, redacted (e)",
                            self.action_export)
        yield SystemCommand("Help", "The keys (?)", self.action_help)
        yield from super().get_system_commands(screen)


def empty_state_text(path: str) -> Text:
    text = Text(justify="center")
    text.append("No conversations here yet\n\n", style="bold")
    text.append(f"{printable(path, True)} holds no agent databases.\n\n", style="dim")
    text.append("Import some:        ", style="dim")
    text.append("backscroll import openclaw PATH\n", style="bold cyan")
    text.append("or try the demo:    ", style="dim")
    text.append("backscroll demo\n\n", style="bold cyan")
    text.append("(ctrl+q quits)", style="dim")
    return text


def make_app(state: StateDir, caller: Caller | None = None, **options: Any) -> BackscrollApp:
    """The one factory the CLI, the tests, the screenshots and the benchmark use.

    ``options``: ``now`` (a clock in epoch seconds; tests freeze it), ``reconcile`` (called
    with an agent id when indexing is pending; default a background thread), ``status`` (the
    status reader), ``auto_reconcile``, ``debounce``, ``preview_debounce``, ``poll_interval``.
    """
    return BackscrollApp(state, caller, **options)


def run_browser(state: StateDir, caller: Caller | None = None) -> int:
    app = make_app(state, caller)
    app.run()
    return app.return_code or 0
