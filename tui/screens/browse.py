"""What the search screen does with the highlighted row (a mixin of ``SearchScreen``): preview
its conversation (the end of it, or around its hit), open it, copy its excerpt or the command
that resumes it, export it; and the dialogs the screen opens: filters and "view as".

Workers (groups ``history``, ``lookup``, ``choices``, ``catalog``) only post messages; the
handlers here act on the UI thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.timer import Timer
from textual.widgets import OptionList

from backscroll.core.catalog import list_sessions, project_list
from backscroll.core.conversation import window_around
from backscroll.core.errors import Forbidden, ValidationError
from backscroll.core.fanout import visible_agents
from backscroll.core.visibility import Caller

from ..guard import while_shown
from ..messages import FilterChoices, FiltersChanged, HistoryLoaded, SessionsLoaded
from ..text import cut_middle, shown
from ..widgets.results import Row, row_anchor, row_host, row_identity, row_key, row_summary
from .conversation import ConversationScreen, CoreSource
from .filters import Filters, FiltersScreen
from .view_as import ViewAsChoice, ViewAsScreen

if TYPE_CHECKING:
    from .search import SearchScreen

    _Base = SearchScreen
else:
    _Base = object

PREVIEW_MESSAGES = 25
# The preview waits until typing pauses this long: the next key, typed ~150 ms after the last,
# must not wait behind a conversation being laid out (docs/browser.md, Speed).
PREVIEW_AFTER_TYPING_S = 0.3


class Browsing(_Base):
    def init_browsing(self, preview_debounce: float) -> None:
        self._preview_debounce = preview_debounce
        self._preview_timer: Timer | None = None

    # --- the preview pane -------------------------------------------------------------------

    # (Handlers go by their names here: ``@on`` is not collected from a mixin.)
    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """Holding j must not read a history per row: wait until the highlight settles."""
        if event.option_list.id != "results":
            return
        if self._preview_timer is not None:
            self._preview_timer.stop()
        if self.results.current is None:
            return
        self._preview_timer = self.set_timer(self._preview_debounce, self._load_preview)

    @while_shown
    def _load_preview(self) -> None:
        self._preview_timer = None
        if self.scheduler.busy:
            return  # still typing: the next answer moves the highlight and asks again
        typing = PREVIEW_AFTER_TYPING_S - self.scheduler.idle_for()
        if typing > 0:  # drawing a conversation now would delay the next keystroke's results
            self._preview_timer = self.set_timer(typing, self._load_preview)
            return
        row = self.results.current
        if row is not None:
            self.load_preview(row, self.browser.caller)

    @work(thread=True, exclusive=True, group="history", exit_on_error=False)
    def load_preview(self, row: Row, caller: Caller) -> None:
        """The conversation around the row's hit, or (a conversation) its newest messages:
        a window of it, so a long conversation previews as fast as a short one."""
        try:
            response = window_around(self.browser.state, caller, row_key(row), row_anchor(row),
                                     PREVIEW_MESSAGES, row_host(row))
        except (ValidationError, Forbidden) as err:  # e.g. rewound meanwhile: say so, inline
            self.post_message(HistoryLoaded(row, error=str(err)))
            return
        self.post_message(HistoryLoaded(row, response))

    @while_shown
    def on_history_loaded(self, message: HistoryLoaded) -> None:
        current = self.results.current
        if current is None or row_identity(message.row) != row_identity(current):
            return  # the highlight moved on
        if message.error is not None:
            self.history.show_note(message.error, style="yellow")
        elif message.response is not None:
            self.history.show_history(message.response, row_anchor(message.row),
                                      self.browser.now)

    # --- the highlighted row ---------------------------------------------------------------

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "results":
            self.action_open()

    def action_open(self) -> None:
        """The whole conversation, at the row's hit (or at its end), with the query's hits."""
        row = self.results.current
        if row is None:
            self.app.bell()
            return
        text = self.search_input.value
        request = self.request_for(text) if text.strip() and self.last_request else None
        summary = row_summary(row)
        title = summary.display_title if summary is not None else ""
        source = CoreSource(self.browser.state, self.browser.caller, row_key(row), row_host(row))
        self.app.push_screen(ConversationScreen(source, row_anchor(row), self.browser.now,
                                                request, title))

    def action_copy(self) -> None:
        row = self.results.current
        if row is None:
            self.app.bell()
            return
        summary = row_summary(row)
        excerpt = getattr(row, "excerpt", None) or getattr(getattr(row, "result", None),
                                                           "excerpt", None)
        text = excerpt or (summary.display_title if summary is not None else "")
        self.app.copy_to_clipboard(text)
        what = "the excerpt" if excerpt else "the title"
        self.flash(f"copied {what} of {cut_middle(shown(row_key(row)), 40)}")

    def action_export(self) -> None:
        row = self.results.current
        if row is None:
            self.notify("Highlight a row to export its conversation.", markup=False)
            return
        self.browser.ask_export(row_key(row), row_host(row))

    # --- resume ---------------------------------------------------------------------------

    def action_resume(self) -> None:
        row = self.results.current
        if row is None:
            self.app.bell()
            return
        summary = row_summary(row)
        if summary is not None:
            self.browser.copy_resume(summary)
        else:
            self.browser.look_up(row_key(row), self.browser.caller, row_host(row))

    def flash(self, text: str) -> None:
        """Say in the status bar what just happened (what was copied)."""
        self.status_bar.flash(text)

    # --- filters ----------------------------------------------------------------------------

    def action_filters(self) -> None:
        self.load_filter_choices(self.browser.caller)

    @work(thread=True, exclusive=True, group="choices", exit_on_error=False)
    def load_filter_choices(self, caller: Caller) -> None:
        state = self.browser.state
        agents = visible_agents(state, caller)
        self.post_message(FilterChoices(agents, project_list(state, caller)))

    @while_shown
    def on_filter_choices(self, message: FilterChoices) -> None:
        if self.is_current:
            self.app.push_screen(FiltersScreen(self.filters, message.agents, message.projects))

    def filters_changed(self, message: FiltersChanged) -> None:
        self.filters = message.filters
        self.show_status()
        self.search_now()

    def action_clear_filters(self) -> None:
        if not self.filters.active:
            self.app.bell()
            return
        self.filters = Filters()
        self.show_status()
        self.search_now()

    # --- view as --------------------------------------------------------------------------

    def action_view_as(self) -> None:
        self.load_sessions()

    @work(thread=True, exclusive=True, group="catalog", exit_on_error=False)
    def load_sessions(self) -> None:
        self.post_message(SessionsLoaded(list_sessions(self.browser.state)))

    @while_shown
    def on_sessions_loaded(self, message: SessionsLoaded) -> None:
        if not self.is_current:
            return

        def chosen(choice: ViewAsChoice | None) -> None:
            if choice is not None:
                self.browser.switch_caller(choice)

        self.app.push_screen(ViewAsScreen(message.sessions, self.browser.caller,
                                          self.browser.now), chosen)

