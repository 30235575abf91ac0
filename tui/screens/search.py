"""The browser's home screen: search bar, results, the conversation around the highlighted
result, status bar, footer, and the keys that act on them.

Threading rule: the UI thread never does I/O. The screen's core calls run in thread workers
(``search`` and ``history`` groups; an exclusive worker cancels only its own group) that only
post messages; the handlers below mutate the widgets. When to search is decided by a
``SearchScheduler`` (leading-edge debounce, single flight, generations); a handler drops an
answer whose generation is not the current one, or a preview for a highlight that moved on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, OptionList, Static
from textual.worker import Worker

from backscroll.core.catalog import list_sessions
from backscroll.core.errors import Forbidden, ValidationError
from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.search import LIMIT_MAX, SearchRequest, SearchResponse, sessions_search
from backscroll.core.visibility import Caller

from .. import keys
from ..messages import HistoryLoaded, SearchAnswered, SessionsLoaded
from ..scheduler import Cancel, SearchScheduler
from ..text import shown
from ..widgets import (
    EmptyState,
    HistoryPane,
    IndexingView,
    ResultsList,
    StatusBar,
    count_line,
    welcome_text,
)
from .conversation import ConversationScreen
from .view_as import ViewAsChoice, ViewAsScreen

if TYPE_CHECKING:
    from ..app import BackscrollApp

PREVIEW_MESSAGES = 25
CONVERSATION_MAX_BYTES = 8 * 1024 * 1024  # the conversation screen shows the whole branch
SCOPES = ("all", "agent", "session")


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


class SearchScreen(Screen[None]):
    BINDINGS = keys.bindings(keys.SEARCH)

    def __init__(self, debounce: float, preview_debounce: float) -> None:
        super().__init__()
        self.match = "prefix"
        self.order = "best"
        self.scope = Scope()
        self.last_request: SearchRequest | None = None
        self.last_response: SearchResponse | None = None
        self.search_indexing = False  # the shown answer said indexing=True
        self.refresh_when_indexed = False
        self.scheduler = SearchScheduler(self._start_search, self._set_timer, time.monotonic,
                                         debounce)
        self._preview_debounce = preview_debounce
        self._preview_timer: Timer | None = None
        self._welcome_counts: tuple[int, int] | None = None

    @property
    def browser(self) -> BackscrollApp:
        return cast("BackscrollApp", self.app)

    # --- layout -------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="search-bar"):
            yield Input(placeholder=self._placeholder(), id="search")
            yield Static("", id="search-error")
        with Horizontal(id="body"):
            with Vertical(id="results-pane"):
                yield Static(count_line(None, None), id="count")
                yield ResultsList(id="results")
            yield HistoryPane(
                placeholder="The conversation around the highlighted result shows here.",
                id="history",
            )
        yield EmptyState(id="empty")
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.search_input.focus()
        self.show_status()

    def _placeholder(self) -> str:
        slash = keys.keys_text(self.app, ["focus_search"])
        return f"search: words are ANDed, \"quotes\" for a phrase  ({slash} to focus)"

    def keys_changed(self) -> None:
        """The keymap changed: the hints that name keys say the new ones."""
        self.search_input.placeholder = self._placeholder()
        if self.last_request is None and not self.search_input.value.strip():
            self.history.show_note(self._welcome())

    def _welcome(self) -> Text:
        return welcome_text(self.browser.status, keys.welcome_hints(self.app))

    @property
    def search_input(self) -> Input:
        return self.query_one("#search", Input)

    @property
    def results(self) -> ResultsList:
        return self.query_one("#results", ResultsList)

    @property
    def history(self) -> HistoryPane:
        return self.query_one("#history", HistoryPane)

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one("#status", StatusBar)

    # --- search ---------------------------------------------------------------------------

    @on(Input.Changed, "#search")
    def _query_changed(self) -> None:
        self.scheduler.text_changed()

    @on(Input.Submitted, "#search")
    def _query_submitted(self) -> None:
        if self.results.current is not None:
            self.action_open()
        else:
            self.search_now()

    def _set_timer(self, delay: float, callback: Any) -> Cancel:
        return self.set_timer(delay, callback).stop

    def _nothing_to_search(self) -> bool:
        status = self.browser.status
        return not self.search_input.value.strip() or (status is not None and not status.agents)

    def search_now(self) -> None:
        """Search the bar's text now (or once the running search ends); an empty bar shows the
        welcome at once, and an answer still in flight is dropped."""
        self._show_error(None)
        if self._nothing_to_search():
            self.scheduler.idle()
            self._show_idle()
        else:
            self.scheduler.search_now()

    def _start_search(self, generation: int) -> bool:
        """The scheduler's ``start``: run one search, or say there is nothing to search."""
        self._show_error(None)
        if self._nothing_to_search():
            self._show_idle()
            return False
        self.run_search(generation, self._request(self.search_input.value), self.browser.caller)
        return True

    def _show_idle(self) -> None:
        self.last_request = self.last_response = None
        self.search_indexing = False
        self.results.show_results([], self.browser.now, self.search_input.value)
        self.query_one("#count", Static).update(count_line(None, None))
        self.history.show_note(self._welcome())
        self.show_status()

    def _request(self, text: str) -> SearchRequest:
        return SearchRequest(
            query=text,
            limit=LIMIT_MAX,
            match=self.match,
            order=self.order,
            agent=self.scope.value if self.scope.kind == "agent" else None,
            session_key=self.scope.value if self.scope.kind == "session" else None,
        )

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def run_search(self, generation: int, request: SearchRequest, caller: Caller) -> None:
        state, on_pending = self.browser.state, self.browser.reconcile
        try:
            response = sessions_search(state, request, caller, on_pending=on_pending)
        except ValidationError as err:
            self.post_message(SearchAnswered(generation, request, error=str(err)))
            return
        self.post_message(SearchAnswered(generation, request, response))

    def on_search_answered(self, message: SearchAnswered) -> None:
        if not self.scheduler.is_current(message.generation):
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
        self.refresh_when_indexed = response.indexing
        for problem in response.unreadable:
            self.browser.report_database(problem, "Skipped a database")
        for problem in response.read_only:
            self.browser.report_database(problem, "Read-only database")
        self.query_one("#count", Static).update(count_line(message.request, response))
        self.results.show_results(response.results, self.browser.now, message.request.query,
                                  keep)
        if not response.results:
            self.history.show_note("No results: nothing to show.")
        self.show_status()

    def _show_error(self, error: str | None) -> None:
        line = self.query_one("#search-error", Static)
        line.update(Text(error or ""))
        line.set_class(error is not None, "-shown")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "search" and event.worker.is_finished:
            self.scheduler.finished()
        self.browser.report_failure(event)

    # --- the preview pane -------------------------------------------------------------------

    @on(OptionList.OptionHighlighted, "#results")
    def _result_highlighted(self) -> None:
        """Holding j must not read a history per result: wait until the highlight settles."""
        if self._preview_timer is not None:
            self._preview_timer.stop()
        if self.results.current is None:
            return
        self._preview_timer = self.set_timer(self._preview_debounce, self._load_preview)

    def _load_preview(self) -> None:
        self._preview_timer = None
        if self.scheduler.busy:
            return  # still typing: the next answer moves the highlight and asks again
        result = self.results.current
        if result is not None:
            self.load_history(result, self.browser.caller, full=False)

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
            response = sessions_history(self.browser.state, request, caller)
        except (ValidationError, Forbidden) as err:  # e.g. rewound meanwhile: say so, inline
            self.post_message(HistoryLoaded(result, error=str(err), full=full))
            return
        self.post_message(HistoryLoaded(result, response, full=full))

    def on_history_loaded(self, message: HistoryLoaded) -> None:
        if message.full:
            if message.error is not None:
                self.notify(message.error, severity="warning", markup=False)
            elif message.response is not None and self.is_current:
                self.app.push_screen(ConversationScreen(message.response,
                                                        message.result.message_id,
                                                        self.browser.now))
            return
        if message.result != self.results.current:
            return  # the highlight moved on
        if message.error is not None:
            self.history.show_note(message.error, style="yellow")
        elif message.response is not None:
            self.history.show_history(message.response, message.result.message_id,
                                      self.browser.now)

    # --- status (the app polls it; this shows it) -----------------------------------------

    def status_changed(self, first: bool) -> None:
        """A new ``StateStatus`` arrived (``first``: the first one since start)."""
        status = self.browser.status
        assert status is not None
        empty = not status.agents
        self.query_one("#body").display = not empty
        empty_note = self.query_one("#empty", EmptyState)
        empty_note.display = empty
        if empty:
            empty_note.focus()  # its key takes the sources in
        elif self.focused in (None, empty_note):
            self.search_input.focus()  # the sources were taken in
        if not empty and not self.search_input.value.strip() and self.last_request is None:
            counts = (status.total_sessions, sum(a.messages for a in status.agents))
            if counts != self._welcome_counts:
                self._welcome_counts = counts
                self.history.show_note(self._welcome())
        elif not empty and first:
            self.search_now()
        if self.refresh_when_indexed and not status.reconciling and not status.pending_sessions:
            self.refresh_when_indexed = False  # once: the search below decides again
            if self.search_input.value.strip():
                self.search_now()
            else:
                self.search_indexing = False
        self.show_status()

    def show_status(self) -> None:
        status = self.browser.status
        indexing = IndexingView.of(status)
        incomplete = indexing.running or self.search_indexing
        sessions = status.total_sessions if status else 0
        self.status_bar.show(indexing, incomplete, sessions, self.context_line())

    def context_line(self) -> str:
        order = "best match" if self.order == "best" else "newest first"
        caller = shown(self.browser.caller.describe())
        return f"as {caller} · {self.match} · {order} · {shown(self.scope.describe())}"

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
            self.app.bell()
            return
        self.load_history(result, self.browser.caller, full=True)

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
        self._changed_mode(f"scope: {shown(self.scope.describe())}")

    def _changed_mode(self, what: str) -> None:
        self.show_status()
        self.notify(what, timeout=2, markup=False)
        if self.search_input.value.strip():
            self.search_now()

    def action_copy(self) -> None:
        result = self.results.current
        if result is None:
            self.app.bell()
            return
        self.app.copy_to_clipboard(result.excerpt)
        self.notify(f"copied the excerpt from {shown(result.session_key)}",
                    markup=False, timeout=3)

    def action_export(self) -> None:
        result = self.results.current
        if result is None:
            self.notify("Highlight a result to export its conversation.", markup=False)
            return
        self.browser.ask_export(result.session_key)

    # --- view as --------------------------------------------------------------------------

    def action_view_as(self) -> None:
        self.load_sessions()

    @work(thread=True, exclusive=True, group="catalog", exit_on_error=False)
    def load_sessions(self) -> None:
        self.post_message(SessionsLoaded(list_sessions(self.browser.state)))

    def on_sessions_loaded(self, message: SessionsLoaded) -> None:
        if not self.is_current:
            return

        def chosen(choice: ViewAsChoice | None) -> None:
            if choice is not None:
                self.browser.switch_caller(choice)

        self.app.push_screen(ViewAsScreen(message.sessions, self.browser.caller,
                                          self.browser.now), chosen)

    def caller_changed(self) -> None:
        """Every search now runs as the app's new caller; the scope starts over."""
        self.scope = Scope()
        self.show_status()
        self.search_now()
