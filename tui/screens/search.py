"""The browser's home screen: search bar, the rows (recent conversations before anything is
typed, then results grouped by conversation or one per message; in tool mode, tool calls:
``core.tool_search``), the conversation around the highlighted row, status bar, footer; the
search itself and the modes that shape it.

Threading rule: the UI thread never does I/O. The screen's core calls run in thread workers
(``search``, ``home``, ``choices`` and ``catalog`` of ``browse.py``; the preview widget runs
its own ``history``; an exclusive worker cancels only its own group) that only post messages;
the handlers mutate the widgets. When to search is decided by a ``SearchScheduler``
(leading-edge debounce, single flight, generations); a handler drops an answer whose
generation is not the current one.
"""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, OptionList, Static
from textual.worker import Worker

from backscroll.core.catalog import visible_session_list
from backscroll.core.errors import BackscrollError, Forbidden
from backscroll.core.grouped import GroupedResponse, conversations_search
from backscroll.core.search import LIMIT_MAX, SearchRequest, sessions_search
from backscroll.core.tool_search import ToolSearchRequest, tool_calls, tools_search
from backscroll.core.visibility import Caller

from .. import keys
from ..guard import while_shown
from ..messages import BrowseMessage, FiltersChanged, HomeLoaded, SearchAnswered
from ..scheduler import Cancel, SearchScheduler
from ..text import shown
from ..theme import palette_of
from ..widgets import (
    EmptyState,
    IndexingView,
    Preview,
    ResultsList,
    SearchBar,
    StatusBar,
    count_line,
    row_identity,
    welcome_text,
)
from .browse import BrowseActions, Scope
from .filters import Filters

HOME_LIMIT = 200  # recent conversations (tool mode: calls) listed before anything is typed
# While typing, a search asks for the rows that fill the list (a row takes at least two lines
# and a divider), the full page (LIMIT_MAX) once typing pauses: fewer excerpts to make, fewer
# sessions to read and fewer rows to lay out per keystroke (docs/browser.md, Speed).
ROW_LINES_MIN = 3


def first_page(list_height: int) -> int:
    """How many rows a keystroke's search asks for: enough to fill a list this many lines
    high, never more than the full page (a list not laid out yet: the full page)."""
    if list_height <= 0:
        return LIMIT_MAX
    return min(LIMIT_MAX, list_height // ROW_LINES_MIN + 1)


def _browse(name: str) -> Any:
    """A key action of the screen that is the browse actions' ``name``."""
    return lambda screen: getattr(screen.browse, name)()


class SearchScreen(Screen[None]):
    BINDINGS = keys.bindings(keys.SEARCH)

    def __init__(self, debounce: float, preview_debounce: float, grouped: bool = True) -> None:
        super().__init__()
        self.match = "prefix"
        self.order = "best"
        self.scope = Scope()
        self.filters = Filters()
        self.grouped = grouped  # one row per conversation (g: one per message)
        self.tools = False  # search tool calls instead of messages (t)
        self.last_request: SearchRequest | None = None
        self.search_indexing = False  # the shown answer said indexing=True
        self.refresh_when_indexed = False
        self.scheduler = SearchScheduler(self._start_search, self._set_timer, time.monotonic,
                                         debounce)
        self._preview_debounce = preview_debounce
        self.browse = BrowseActions(self)
        self._contents: tuple[tuple[str, int, int], ...] | None = None
        self._error_shown: str | None = None

    @property
    def browser(self) -> Any:
        """The app (``BackscrollApp``): the state dir, the caller, the clock, the status, and
        the objects it owns (``actions``, ``live``)."""
        return self.app

    # --- layout -------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="search-bar"):
            yield SearchBar(placeholder=self._placeholder(), id="search")
            yield Static("", id="search-error")
        with Horizontal(id="body"):
            with Vertical(id="results-pane"):
                yield Static(count_line(None, None), id="count")
                yield ResultsList(id="results")
            browser = self.browser
            yield Preview(
                browser.state, browser.now, lambda: self.browser.caller,
                lambda: self.results.current, self.scheduler, self._preview_debounce,
                placeholder="The conversation of the highlighted row shows here.",
                id="history",
            )
        yield EmptyState(id="empty")
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.search_input.focus()
        self.restyle()
        self.show_status()

    def _placeholder(self) -> str:
        slash = keys.keys_text(self.app, ["focus_search"])
        if self.tools:
            return (f"search tool calls: a tool's name, its arguments, its output  "
                    f"({slash} to focus)")
        return f"search: words are ANDed, \"quotes\" for a phrase  ({slash} to focus)"

    def show_mode(self) -> None:
        """Messages or tool calls: the search bar says which (its title, its placeholder)."""
        bar = self.search_input
        bar.placeholder = self._placeholder()
        bar.border_title = "tool calls" if self.tools else None
        bar.set_class(self.tools, "-tools")

    def keys_changed(self) -> None:
        """The keymap changed: the hints that name keys say the new ones."""
        self.search_input.placeholder = self._placeholder()
        if not self.results.rows and not self.search_input.value.strip():
            self.history.show_note(self._welcome())

    def restyle(self) -> None:
        """The theme changed (or the screen starts): rows and preview in its colours."""
        palette = palette_of(self.app)
        self.results.restyle(palette)
        self.history.restyle(palette)

    def _welcome(self) -> Text:
        return welcome_text(self.browser.status, keys.welcome_hints(self.app))

    @property
    def search_input(self) -> Input:
        return self.query_one("#search", Input)

    @property
    def results(self) -> ResultsList:
        return self.query_one("#results", ResultsList)

    @property
    def history(self) -> Preview:
        return self.query_one("#history", Preview)

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one("#status", StatusBar)

    # --- the highlighted row: the preview follows it, the row actions act on it ----------

    @on(OptionList.OptionHighlighted, "#results")
    def _highlighted(self) -> None:
        self.history.highlighted()

    @on(OptionList.OptionSelected, "#results")
    def _selected(self) -> None:
        self.browse.open()

    @on(BrowseMessage)
    def _to_browse(self, message: BrowseMessage) -> None:
        self.browse.handle(message)

    action_open = _browse("open")
    action_copy = _browse("copy")
    action_export = _browse("export")
    action_resume = _browse("resume")
    action_filters = _browse("ask_filters")
    action_clear_filters = _browse("clear_filters")
    action_view_as = _browse("view_as")
    action_toggle_order = _browse("toggle_order")
    action_toggle_match = _browse("toggle_match")
    action_toggle_group = _browse("toggle_group")
    action_usage = _browse("usage")
    action_toggle_scope = _browse("toggle_scope")
    action_toggle_tools = _browse("toggle_tools")
    action_calls = _browse("calls")

    def filters_changed(self, message: FiltersChanged) -> None:
        self.browse.filters_changed(message)

    def flash(self, text: str) -> None:
        """Say in the status bar what just happened (what was copied)."""
        self.status_bar.flash(text)

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
        """An empty bar lists the recent conversations (tool mode: searches the newest
        calls); with nothing stored there is nothing to search."""
        status = self.browser.status
        empty = not self.search_input.value.strip() and not self.tools
        return empty or (status is not None and not status.agents)

    def search_now(self) -> None:
        """Search the bar's text now (or once the running search ends); an empty bar lists
        the recent conversations instead, and an answer still in flight is dropped."""
        self._show_error(None)
        if self._nothing_to_search():
            self.scheduler.idle()
            self._show_home()
        else:
            self.scheduler.search_now()

    @while_shown
    def _start_search(self, generation: int, full: bool) -> bool:
        """The scheduler's ``start``: run one search (``full``: the full page, else the rows
        that fill the list), or say there is nothing to search."""
        self._show_error(None)
        if self._nothing_to_search():
            self._show_home()
            return False
        limit = LIMIT_MAX if full else first_page(self.results.size.height)
        request = self.request_for(self.search_input.value, limit)
        if self.tools:
            self.run_tool_search(generation, self.tool_request_for(request), self.browser.caller)
        else:
            self.run_search(generation, request, self.grouped, self.browser.caller)
        return True

    def request_for(self, text: str, limit: int = LIMIT_MAX) -> SearchRequest:
        """The bar's text with the modes, the scope and the filters."""
        agent = self.scope.value if self.scope.kind == "agent" else self.filters.agent
        return SearchRequest(
            query=text,
            limit=limit,
            match=self.match,
            order=self.order,
            agent=agent,
            session_key=self.scope.value if self.scope.kind == "session" else None,
            role=self.filters.role,
            since_ms=self.filters.since_ms(self.browser.now()),
            source=self.filters.source,
            project=self.filters.project,
        )

    def tool_request_for(self, request: SearchRequest) -> ToolSearchRequest:
        """A message search's request as one of tool calls: the tool filters added, the role
        set aside (tool calls are the agent's)."""
        return ToolSearchRequest(request._replace(role=None), self.filters.tool,
                                 self.filters.failed)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def run_search(self, generation: int, request: SearchRequest, grouped: bool,
                   caller: Caller) -> None:
        state, on_pending = self.browser.state, self.browser.reconcile
        search = conversations_search if grouped else sessions_search
        try:
            response = search(state, request, caller, on_pending=on_pending)
        except Forbidden as err:  # the caller's session was deleted meanwhile
            self.post_message(SearchAnswered(generation, request, error=str(err), forbidden=True))
            return
        except BackscrollError as err:  # a refused query, a server gone: said under the bar
            self.post_message(SearchAnswered(generation, request, error=str(err)))
            return
        self.post_message(SearchAnswered(generation, request, response))

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def run_tool_search(self, generation: int, request: ToolSearchRequest,
                        caller: Caller) -> None:
        """Tool calls matching the words, or (no words) the newest calls passing the filters,
        as ``backscroll calls`` lists them."""
        search = request.search
        try:
            if search.query.strip():
                response = tools_search(self.browser.state, request, caller,
                                        on_pending=self.browser.reconcile)
            else:
                response = tool_calls(self.browser.state, caller, agent=search.agent,
                                      session_key=search.session_key, since_ms=search.since_ms,
                                      tool=request.tool, failed=request.failed,
                                      limit=HOME_LIMIT)
        except Forbidden as err:
            self.post_message(SearchAnswered(generation, search, error=str(err), forbidden=True))
            return
        except BackscrollError as err:
            self.post_message(SearchAnswered(generation, search, error=str(err)))
            return
        self.post_message(SearchAnswered(generation, search, response))

    @while_shown
    def on_search_answered(self, message: SearchAnswered) -> None:
        if not self.scheduler.is_current(message.generation):
            return  # a newer search (or newer text) supersedes it
        if message.error is not None:
            self._show_error(shown(message.error))
            if message.forbidden:  # this caller sees nothing: no row of an earlier answer
                self._show_nothing(message.request)
                return
            if self.last_request is not None:  # the rows stay: say whose they are
                self._show_count(count_line(self.last_request, None, refused=True))
            return
        answer = message.response
        assert answer is not None
        rows: list[Any]
        if isinstance(answer, GroupedResponse):
            response, rows = answer.response, list(answer.conversations)
        else:
            response, rows = answer, list(answer.results)
        current = self.results.current
        last = self.last_request
        keep = row_identity(current) if current is not None and last is not None and (
            last.query == message.request.query) else None
        self.last_request = message.request
        self.search_indexing = response.indexing
        self.refresh_when_indexed = response.indexing
        for problem in response.unreadable:
            self.browser.report_database(problem, "Skipped a database")
        for problem in response.read_only:
            self.browser.report_database(problem, "Read-only database")
        line = count_line(message.request, rows, response)
        if self.tools and not message.request.query.strip() and (
                self.filters.source or self.filters.project):
            line.append(" · source and project apply to words", style="dim")
        self._show_count(line)
        self.results.show_rows(rows, self.browser.now, message.request.query, keep)
        if not rows:
            self.history.show_note("No results: nothing to show.")
        self.show_status()
        self.scheduler.answered(full=message.request.limit >= LIMIT_MAX,
                                more=response.truncated)

    def _show_nothing(self, request: SearchRequest | None) -> None:
        """No rows at all, as for a caller that may not search (said under the bar)."""
        self.last_request = None
        self._show_count(Text("nothing to show as this caller", style="dim"))
        self.results.show_rows([], self.browser.now, request.query if request else "", None)
        self.history.show_note("Nothing to show: choose another caller with view as.")
        self.show_status()

    def _show_count(self, line: Text) -> None:
        """The count line: one row whatever it says, so no layout is needed."""
        self.query_one("#count", Static).update(line, layout=False)

    def _show_error(self, error: str | None) -> None:
        """Why the bar's text was not searched (a refused query, a caller that may not
        search, a server gone away), on one line under the bar (every keystroke clears it:
        only a change is drawn, as a change lays the screen out again)."""
        if error == self._error_shown:
            return
        self._error_shown = error
        line = self.query_one("#search-error", Static)
        line.update(Text(error or ""))  # on one line (app.tcss), cut with an ellipsis
        line.set_class(error is not None, "-shown")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "search" and event.worker.is_finished:
            self.scheduler.finished()
        self.browser.report_failure(event)

    # --- the home list: recent conversations ---------------------------------------------

    def _show_home(self) -> None:
        self.last_request = None
        self.search_indexing = False
        self.load_home(self.scheduler.generation, self.browser.caller)
        self.show_status()

    @work(thread=True, exclusive=True, group="home", exit_on_error=False)
    def load_home(self, generation: int, caller: Caller) -> None:
        filters = self.filters
        agent = self.scope.value if self.scope.kind == "agent" else filters.agent
        try:
            sessions = visible_session_list(
                self.browser.state, caller, agent=agent,
                since_ms=filters.since_ms(self.browser.now()), source=filters.source,
                project=filters.project, limit=HOME_LIMIT)
        except Forbidden as err:  # the caller's session was deleted meanwhile
            self.post_message(HomeLoaded(generation, [], error=str(err), forbidden=True))
            return
        except BackscrollError as err:  # e.g. the server went away: the list stays
            self.post_message(HomeLoaded(generation, [], error=str(err)))
            return
        if self.scope.kind == "session":
            sessions = [s for s in sessions if s.key == self.scope.value]
        self.post_message(HomeLoaded(generation, sessions))

    @while_shown
    def on_home_loaded(self, message: HomeLoaded) -> None:
        if not self.scheduler.is_current(message.generation) or self.search_input.value.strip():
            return
        if message.error is not None:
            self._show_error(shown(message.error))
            if message.forbidden:
                self._show_nothing(None)
            return
        current = self.results.current
        keep = row_identity(current) if current is not None else None
        self._show_count(count_line(None, message.sessions))
        self.results.show_rows(message.sessions, self.browser.now, "", keep)
        # a row still "indexing…" is listed again when reconciliation is done
        self.refresh_when_indexed = any(not s.searchable for s in message.sessions)
        if not message.sessions:
            self.history.show_note(self._welcome())

    # --- status (the app polls it; this shows it) -----------------------------------------

    @while_shown
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
        contents = status.contents  # moves when anything is stored or deleted, by anyone
        if not empty and first:
            self.search_now()
        elif not empty and contents != self._contents:
            self.browser.live.contents_changed()  # the standing search, or the home list, again
        self._contents = contents
        if self.refresh_when_indexed and not status.reconciling and not status.pending_sessions:
            self.refresh_when_indexed = False  # once: the search below decides again
            self.search_now()
        self.show_status()

    def show_status(self) -> None:
        status = self.browser.status
        indexing = IndexingView.of(status)
        incomplete = indexing.running or self.search_indexing
        sessions = status.total_sessions if status else 0
        incognito = status.incognito_sessions if status else 0
        self.status_bar.show(indexing, incomplete, sessions, self.context_line(), incognito)
        clear = keys.first_key(self.app, "clear_filters")
        self.status_bar.show_filters(self.filters.labels(self.tools), clear)

    def context_line(self) -> str:
        order = "best match" if self.order == "best" else "newest first"
        caller = shown(self.browser.caller.describe())
        rows = "tool calls" if self.tools else "per conversation" if self.grouped else (
            "per message")
        return (f"as {caller} · {rows} · {self.match} · {order} · "
                f"{shown(self.scope.describe())}")

    # --- modes ----------------------------------------------------------------------------

    def action_focus_search(self) -> None:
        self.search_input.focus()

    def action_cursor_down(self) -> None:
        self.results.action_cursor_down()

    def action_cursor_up(self) -> None:
        self.results.action_cursor_up()

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

    def caller_changed(self) -> None:
        """Every search now runs as the app's new caller; the scope and filters start over
        (the agents and projects it may see differ)."""
        self.scope = Scope()
        self.filters = Filters()
        self.show_status()
        self.search_now()
