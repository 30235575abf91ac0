"""What an agent did, in order: the tool calls of one agent (or one session, or every agent
the caller may see) in a time window, newest first, with status and duration where known
(``core.tool_search.tool_calls``, what ``backscroll calls`` prints).

``w`` walks the windows (last day, week, 30 days, all time), ``f`` keeps failed calls only,
``s`` switches between the session and its agent (when opened on a session), ``enter`` opens
the conversation at the highlighted call (selected and unfolded), ``escape`` goes back.

The screen reads through the ``CallsSource`` it is handed (``CoreCalls``: the core, as the
browser's caller), in a thread worker that only posts ``CallsListed``; a caller the policy does
not grant tool calls gets the core's answer, an empty list, said as any empty list is.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.worker import Worker

from backscroll.core.errors import BackscrollError
from backscroll.core.search import SearchResponse
from backscroll.core.state import StateDir
from backscroll.core.tool_search import ToolHit, tool_calls
from backscroll.core.visibility import Caller

from .. import keys
from ..guard import while_shown
from ..messages import CallsListed
from ..text import Clock, plural, shown
from ..theme import palette_of
from ..widgets.results import ResultsList, row_identity
from .conversation import ConversationScreen, ConversationSource, CoreSource
from .filters import DAY_MS

# (id, label, length in ms; None: all time)
WINDOWS: tuple[tuple[str, str, int | None], ...] = (
    ("1d", "last day", DAY_MS),
    ("7d", "last 7 days", 7 * DAY_MS),
    ("30d", "last 30 days", 30 * DAY_MS),
    ("all", "all time", None),
)
CALLS_LIMIT = 300  # calls listed at a time (the core allows 1,000)


@dataclass(frozen=True)
class CallsWhat:
    """Whose calls: one session, one agent, or (neither) every agent the caller may see; the
    window (an id of ``WINDOWS``) and failed calls only."""

    agent: str | None = None
    session_key: str | None = None
    window: str = ""  # "" : the default, all time for a session, else the last 7 days
    failed: bool = False

    @property
    def window_id(self) -> str:
        return self.window or ("all" if self.session_key else "7d")

    def since_ms(self, now_s: float) -> int | None:
        length = next(ms for wid, _label, ms in WINDOWS if wid == self.window_id)
        return None if length is None else int(now_s * 1000) - length

    def next_window(self) -> CallsWhat:
        ids = [wid for wid, _label, _ms in WINDOWS]
        return replace(self, window=ids[(ids.index(self.window_id) + 1) % len(ids)])

    def describe(self) -> str:
        """``session agent:ops:main · last 7 days · failed only``"""
        if self.session_key:
            whose = f"session {shown(self.session_key)}"
        elif self.agent:
            whose = f"agent {shown(self.agent)}"
        else:
            whose = "every agent"
        label = next(label for wid, label, _ms in WINDOWS if wid == self.window_id)
        return f"{whose} · {label}" + (" · failed only" if self.failed else "")


class CallsSource(Protocol):
    """What the calls screen reads (``calls`` is a blocking call, run in its worker)."""

    def calls(self, what: CallsWhat, since_ms: int | None) -> SearchResponse: ...
    def conversation(self, hit: ToolHit) -> ConversationSource: ...


@dataclass(frozen=True)
class CoreCalls:
    """The calls ``caller`` may see, from the core (the operator sees every call)."""

    state: StateDir
    caller: Caller

    def calls(self, what: CallsWhat, since_ms: int | None) -> SearchResponse:
        return tool_calls(self.state, self.caller, agent=what.agent,
                          session_key=what.session_key, since_ms=since_ms, failed=what.failed,
                          limit=CALLS_LIMIT)

    def conversation(self, hit: ToolHit) -> ConversationSource:
        return CoreSource(self.state, self.caller, hit.session_key, hit.host or None)


def agent_of(session_key: str) -> str | None:
    """The agent a session key names (``agent:<id>:…``)."""
    parts = session_key.split(":")
    return parts[1] if len(parts) > 2 and parts[0] == "agent" and parts[1] else None


class CallsScreen(Screen[None]):
    BINDINGS = keys.bindings(keys.CALLS)

    def __init__(self, source: CallsSource, what: CallsWhat, now: Clock) -> None:
        super().__init__()
        self.source = source
        self.what = what
        self.session_key = what.session_key  # the session it was opened on (s: it or its agent)
        self.now = now
        self.generation = 0
        self.response: SearchResponse | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="calls-title")
        yield Static(Text("reading the tool calls…", style="dim"), id="calls-count")
        yield ResultsList(id="calls-list")
        yield Footer()

    @property
    def rows(self) -> ResultsList:
        return self.query_one("#calls-list", ResultsList)

    def on_mount(self) -> None:
        self.restyle()
        self.rows.focus()
        self.reload()

    def restyle(self) -> None:
        self.rows.restyle(palette_of(self.app))

    # --- reading ----------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the list again for ``what`` (a newer answer supersedes an older one)."""
        self.generation += 1
        self._show_title()
        self.list_calls(self.generation, self.what, self.what.since_ms(self.now()))

    @work(thread=True, exclusive=True, group="calls", exit_on_error=False)
    def list_calls(self, generation: int, what: CallsWhat, since_ms: int | None) -> None:
        try:
            response = self.source.calls(what, since_ms)
        except BackscrollError as err:  # a server gone, a session deleted: one sentence
            self.post_message(CallsListed(generation, error=str(err)))
            return
        self.post_message(CallsListed(generation, response))

    @while_shown
    def on_calls_listed(self, message: CallsListed) -> None:
        if message.generation != self.generation:
            return
        count = self.query_one("#calls-count", Static)
        if message.response is None:
            count.update(Text(shown(message.error or ""), style="yellow"))
            return
        self.response = message.response
        calls = list(message.response.results)
        current = self.rows.current
        keep = row_identity(current) if current is not None else None
        self.rows.show_rows(calls, self.now, self.what.describe(), keep)
        count.update(calls_count_line(calls, message.response.truncated))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report = getattr(self.app, "report_failure", None)
        if callable(report):
            report(event)

    def _show_title(self) -> None:
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(" tool calls ", style="bold reverse")
        title.append(f" {self.what.describe()}", style="bold")
        title.append("   " + keys.hint_line(self.app, ["calls.window", "calls.failed",
                                                        "calls.back"]), style="dim")
        self.query_one("#calls-title", Static).update(title)

    # --- keys -------------------------------------------------------------------------------

    def action_window(self) -> None:
        self.what = self.what.next_window()
        self.reload()

    def action_failed(self) -> None:
        self.what = replace(self.what, failed=not self.what.failed)
        self.reload()

    def action_scope(self) -> None:
        """On a session: its agent's calls, and back."""
        if self.session_key is None or agent_of(self.session_key) is None:
            self.app.bell()
            return
        if self.what.session_key:
            self.what = replace(self.what, session_key=None, agent=agent_of(self.session_key))
        else:
            self.what = replace(self.what, session_key=self.session_key, agent=None)
        self.reload()

    def action_cursor_down(self) -> None:
        self.rows.action_cursor_down()

    def action_cursor_up(self) -> None:
        self.rows.action_cursor_up()

    @on(OptionList.OptionSelected, "#calls-list")
    def _selected(self) -> None:
        self.action_open()

    def action_open(self) -> None:
        """The conversation at the highlighted call, the call selected and unfolded."""
        hit = self.rows.current
        if not isinstance(hit, ToolHit):
            self.app.bell()
            return
        self.app.push_screen(ConversationScreen(self.source.conversation(hit), hit.message_id,
                                                self.now, None, at_call=True, result=hit.result_id))

    def action_back(self) -> None:
        self.dismiss(None)


def calls_count_line(calls: list[ToolHit], more: bool) -> Text:
    """Above the list: how many, newest first, how many failed, and whether more are older."""
    if not calls:
        return Text("no tool calls to show", style="dim")
    line = Text(plural(len(calls), "tool call"), style="bold")
    line.append(", newest first", style="dim")
    failed = sum(1 for c in calls if c.status == "failed")
    if failed:
        line.append(f" · {failed:,} failed", style="dim")
    if more:
        line.append(" · more before them", style="dim")
    return line
