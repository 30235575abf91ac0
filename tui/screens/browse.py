"""What the search screen's keys do beyond typing: to the highlighted row (open its
conversation, copy its excerpt or the command that resumes it, export it), to the modes that
shape the search (order, match, rows per conversation, scope, messages or tool calls), and
the screens the screen opens: filters, "view as", the calls of an agent.

``BrowseActions`` is an object the search screen owns (``screen.browse``), not a mixin: the screen's
key actions call it, its workers (groups ``choices``, ``catalog``) run on the screen and post
``BrowseMessage``s, which the screen hands back to ``BrowseActions.handle`` on the UI thread. The
preview of the highlighted row is its own widget (``widgets/preview.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from backscroll.core.catalog import list_sessions, project_list
from backscroll.core.fanout import visible_agents
from backscroll.core.grouped import ConversationHit
from backscroll.core.tool_search import ToolHit

from ..guard import while_shown
from ..messages import BrowseMessage, FilterChoices, FiltersChanged, SessionsLoaded
from ..text import cut_middle, shown
from ..widgets.results import row_agent, row_anchor, row_host, row_key, row_summary
from .calls import CallsScreen, CallsWhat, CoreCalls
from .conversation import ConversationScreen, CoreSource
from .filters import Filters, FiltersScreen
from .view_as import ViewAsChoice, ViewAsScreen

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


class BrowseHost(Protocol):
    """What the row actions need of the search screen (``SearchScreen``)."""

    filters: Filters
    last_request: Any
    order: str
    match: str
    grouped: bool
    tools: bool
    scope: Scope

    @property
    def app(self) -> Any: ...
    @property
    def browser(self) -> Any: ...
    @property
    def results(self) -> Any: ...
    @property
    def search_input(self) -> Any: ...
    @property
    def status_bar(self) -> Any: ...
    @property
    def is_current(self) -> bool: ...
    def request_for(self, text: str) -> Any: ...
    def show_status(self) -> None: ...
    def show_mode(self) -> None: ...
    def search_now(self) -> None: ...
    def notify(self, message: str, **kwargs: Any) -> None: ...
    def post_message(self, message: Any) -> bool: ...
    def run_worker(self, work: Any, **kwargs: Any) -> Any: ...


class BrowseActions:
    def __init__(self, screen: BrowseHost) -> None:
        self.screen = screen

    def handle(self, message: BrowseMessage) -> None:
        """A worker's message, on the UI thread."""
        getattr(self, message.handler_name)(message)

    def _run(self, work: Any, group: str) -> None:
        self.screen.run_worker(work, group=group, exclusive=True, thread=True,
                               exit_on_error=False)

    # --- the highlighted row ---------------------------------------------------------------

    def open(self) -> None:
        """The whole conversation, at the row's hit (or at its end), with the query's hits."""
        screen, browser = self.screen, self.screen.browser
        row = screen.results.current
        if row is None:
            screen.app.bell()
            return
        text = screen.search_input.value
        request = screen.request_for(text) if text.strip() and screen.last_request else None
        summary = row_summary(row)
        title = summary.display_title if summary is not None else ""
        source = CoreSource(browser.state, browser.caller, row_key(row), row_host(row),
                            any_word=isinstance(row, ConversationHit))
        if isinstance(row, ToolHit):  # at the call, unfolded (a message search's hits: none)
            screen.app.push_screen(ConversationScreen(source, row.message_id, browser.now, None,
                                                      title, at_call=True, result=row.result_id))
            return
        screen.app.push_screen(ConversationScreen(source, row_anchor(row), browser.now,
                                                  request, title))

    def usage(self) -> None:
        """The usage view: the last 30 days as a chart, totals by agent and model, as the
        current caller may see them."""
        from .usage import UsageScreen, core_reader

        browser = self.screen.browser
        self.screen.app.push_screen(UsageScreen(core_reader(browser.state, browser.caller, browser.now),
                                                browser.caller.describe()))

    def copy(self) -> None:
        screen = self.screen
        row = screen.results.current
        if row is None:
            screen.app.bell()
            return
        summary = row_summary(row)
        if isinstance(row, ToolHit):  # a call: what it was called with (a command, a path)
            screen.app.copy_to_clipboard(row.arguments)
            screen.status_bar.flash(f"copied the arguments of a {shown(row.tool)} call")
            return
        excerpt = getattr(row, "excerpt", None) or getattr(getattr(row, "result", None),
                                                           "excerpt", None)
        text = excerpt or (summary.display_title if summary is not None else "")
        screen.app.copy_to_clipboard(text)
        what = "the excerpt" if excerpt else "the title"
        screen.status_bar.flash(f"copied {what} of {cut_middle(shown(row_key(row)), 40)}")

    def export(self) -> None:
        row = self.screen.results.current
        if row is None:
            self.screen.notify("Highlight a row to export its conversation.", markup=False)
            return
        self.screen.browser.actions.ask_export(row_key(row), row_host(row))

    def resume(self) -> None:
        screen = self.screen
        row = screen.results.current
        if row is None:
            screen.app.bell()
            return
        summary = row_summary(row)
        actions = screen.browser.actions
        if summary is not None:
            actions.copy_resume(summary)
        else:
            actions.look_up(row_key(row), screen.browser.caller, row_host(row))

    # --- filters ----------------------------------------------------------------------------

    def ask_filters(self) -> None:
        state, caller = self.screen.browser.state, self.screen.browser.caller

        def work() -> None:
            agents = visible_agents(state, caller)
            self.screen.post_message(FilterChoices(agents, project_list(state, caller)))

        self._run(work, "choices")

    @while_shown
    def on_filter_choices(self, message: FilterChoices) -> None:
        screen = self.screen
        if screen.is_current:
            screen.app.push_screen(FiltersScreen(screen.filters, message.agents,
                                                 message.projects))

    def filters_changed(self, message: FiltersChanged) -> None:
        screen = self.screen
        newly_of_tools = message.filters.of_tools and not screen.filters.of_tools
        screen.filters = message.filters
        if newly_of_tools and not screen.tools:  # as --tool and --failed imply --tools
            screen.tools = True
            screen.show_mode()
        screen.show_status()
        screen.search_now()

    def clear_filters(self) -> None:
        screen = self.screen
        if not screen.filters.active:
            screen.app.bell()
            return
        screen.filters = Filters()
        screen.show_status()
        screen.search_now()

    # --- view as --------------------------------------------------------------------------

    def view_as(self) -> None:
        state = self.screen.browser.state
        self._run(lambda: self.screen.post_message(SessionsLoaded(list_sessions(state))),
                  "catalog")

    @while_shown
    def on_sessions_loaded(self, message: SessionsLoaded) -> None:
        screen = self.screen
        if not screen.is_current:
            return
        browser = screen.browser

        def chosen(choice: ViewAsChoice | None) -> None:
            if choice is not None:
                browser.actions.switch_caller(choice)

        screen.app.push_screen(ViewAsScreen(message.sessions, browser.caller, browser.now),
                               chosen)

    # --- modes ----------------------------------------------------------------------------

    def toggle_order(self) -> None:
        screen = self.screen
        screen.order = "recent" if screen.order == "best" else "best"
        self._changed_mode(f"order: {'newest first' if screen.order == 'recent' else 'best match'}")

    def toggle_match(self) -> None:
        screen = self.screen
        screen.match = "exact" if screen.match == "prefix" else "prefix"
        self._changed_mode(f"match: {screen.match}")

    def toggle_group(self) -> None:
        screen = self.screen
        if screen.tools:  # kept for messages: a tool call is always a row of its own
            screen.app.bell()
            screen.notify("tool calls: one row per call (t: back to messages)", timeout=3,
                          markup=False)
            return
        screen.grouped = not screen.grouped
        self._changed_mode("one row per conversation" if screen.grouped else "one row per message")

    def toggle_tools(self) -> None:
        screen = self.screen
        screen.tools = not screen.tools
        screen.show_mode()
        self._changed_mode("searching tool calls" if screen.tools else "searching messages")

    def calls(self) -> None:
        """What an agent did: the tool calls of the scope's (or the agent filter's, else the
        highlighted row's) agent, newest first; no agent anywhere: every agent's."""
        screen, browser = self.screen, self.screen.browser
        row = screen.results.current
        if screen.scope.kind == "session":
            what = CallsWhat(session_key=screen.scope.value)
        elif screen.scope.kind == "agent":
            what = CallsWhat(agent=screen.scope.value)
        elif screen.filters.agent:
            what = CallsWhat(agent=screen.filters.agent)
        else:
            what = CallsWhat(agent=row_agent(row) if row is not None else None)
        screen.app.push_screen(CallsScreen(CoreCalls(browser.state, browser.caller), what,
                                           browser.now))

    def toggle_scope(self) -> None:
        screen = self.screen
        current = screen.results.current
        kind = SCOPES[(SCOPES.index(screen.scope.kind) + 1) % len(SCOPES)]
        if kind == "agent":
            if current is None:
                screen.notify("Highlight a row first: the scope follows it.", markup=False)
                return
            screen.scope = Scope("agent", row_agent(current))
        elif kind == "session":
            screen.scope = Scope("session", row_key(current)) if current is not None else Scope()
        else:
            screen.scope = Scope()
        self._changed_mode(f"scope: {shown(screen.scope.describe())}")

    def _changed_mode(self, what: str) -> None:
        self.screen.show_status()
        self.screen.notify(what, timeout=2, markup=False)
        self.screen.search_now()
