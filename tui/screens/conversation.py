"""A whole conversation, opened at a hit (or at its end), read in windows.

``n`` / ``N`` walk the hits of the query it was opened with; ``/`` searches within it (the
hits are then those of the new words); a position line says "hit 3 of 17 · message 120 of
317"; ``g`` / ``G`` go to the top and the bottom; ``h`` back to the current hit. ``escape``
closes the search line, then goes back; ``e`` and ``r`` ask the app to export it or to copy
the command that resumes it (messages). Tool calls show folded, with their status: ``]`` / ``[``
select a message, ``enter`` unfolds it (read whole: no text cut), ``f`` / ``F`` go to the
next / previous failed tool call. Opened at a tool call (``at_call``: a row of tool calls), the
message making it is selected and unfolded, and so is its result. ``c`` lists the session's
tool calls (the calls screen).

Its reads (the outline, windows, hits) go through a ``ConversationSource`` in thread workers
that only post messages; a test hands it a fake source and runs it on a throwaway host app.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Input, Static
from textual.worker import Worker

from backscroll.core.catalog import visible_session
from backscroll.core.conversation import (
    Outline,
    conversation_outline,
    conversation_window,
    failed_tool_results,
    session_hits,
)
from backscroll.core.errors import ValidationError
from backscroll.core.facts import Facts
from backscroll.core.search import SearchRequest
from backscroll.core.state import StateDir
from backscroll.core.visibility import Caller

from .. import keys
from ..amounts import facts_lines, facts_summary
from ..guard import while_shown
from ..messages import (
    CallsRequested,
    ConversationOpened,
    ExportRequested,
    FactsRead,
    FailedFound,
    HitsFound,
    ResumeRequested,
    WholeRead,
    WindowRead,
)
from ..text import Clock, cut_middle, plural, shown
from ..theme import palette_of
from ..widgets.conversation_view import WINDOW, ConversationView

FLASH_S = 6.0
CUT_NOTE = "… [cut: {more:,} more characters; enter on it shows them]"
WHOLE_CHARS = 1_000_000  # a field read whole (as an export reads it)


class ConversationSource(Protocol):
    """What the conversation screen reads (blocking calls, run in its workers)."""

    session_key: str

    def outline(self) -> Outline: ...
    def window(self, start: int, stop: int) -> list[dict[str, Any]]: ...
    def hits(self, request: SearchRequest) -> list[str]: ...
    # optional (a test's source may lack them): one message read whole; the failed calls;
    # the session's facts
    # def whole(self, index: int) -> dict[str, Any]: ...
    # def failed(self) -> list[int]: ...
    # def facts(self) -> Facts | None: ...


@dataclass(frozen=True)
class CoreSource:
    """A conversation as the core gives it to ``caller`` (visibility and redaction there)."""

    state: StateDir
    caller: Caller
    session_key: str
    host: str | None = None  # the session's (a team server holds a key per host)
    any_word: bool = False  # found by conversation matching: a hit holds any word

    def outline(self) -> Outline:
        return conversation_outline(self.state, self.caller, self.session_key, self.host)

    def window(self, start: int, stop: int) -> list[dict[str, Any]]:
        return conversation_window(self.state, self.caller, self.session_key, start, stop,
                                   host=self.host, cut_note=CUT_NOTE)

    def whole(self, index: int) -> dict[str, Any]:
        return conversation_window(self.state, self.caller, self.session_key, index, index + 1,
                                   WHOLE_CHARS, host=self.host, cut_note=CUT_NOTE)[0]

    def failed(self) -> list[int]:
        return failed_tool_results(self.state, self.caller, self.session_key, self.host)

    def facts(self) -> Facts | None:
        return visible_session(self.state, self.caller, self.session_key, self.host).facts

    def hits(self, request: SearchRequest) -> list[str]:
        return session_hits(self.state, self.caller,
                            request._replace(session_key=self.session_key, host=self.host or None),
                            any_word=self.any_word)


class ConversationScreen(Screen[None]):
    BINDINGS = keys.bindings(keys.CONVERSATION)

    def __init__(self, source: ConversationSource, anchor: str | None, now: Clock,
                 request: SearchRequest | None = None, title: str = "",
                 at_call: bool = False, result: str | None = None) -> None:
        """``anchor``: the message to open at (None: the end); ``request``: the query whose
        hits ``n`` / ``N`` walk (None: no hits until ``/``); ``at_call``: the anchor makes a
        tool call, shown selected and unfolded, as is ``result``, the message answering it."""
        super().__init__()
        self.source = source
        self.anchor = anchor
        self.at_call = at_call
        self.result = result
        self.now = now
        self.request = request
        self.title_text = title
        self.outline: Outline | None = None
        self.hits: list[str] = []
        self.hit_positions: list[int] = []  # outline positions of the hits, in order
        self.current: int | None = None  # index into hits
        self._flash = ""
        self._opening = False  # opened, its hits not asked for yet
        self._focus: int | None = None  # the message last brought into view (a hit, g, G)
        self._failed: tuple[Outline, list[int]] | None = None  # failed results, once read
        self.facts: Facts | None = None
        self._facts_read = False
        self.facts_open = False  # the whole facts panel (files), else its one line

    # --- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="conversation-title")
        yield Static("", id="conversation-facts", markup=False)
        yield Static(Text("opening the conversation…", style="dim"), id="conversation-view")
        yield Static("", id="conversation-position")
        yield Input(placeholder="search within this conversation (enter: go, esc: close)",
                    id="conversation-find")
        yield Footer()

    def _title(self) -> Text:
        width = max(self.app.size.width - 2, 40)
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(" conversation ", style="bold reverse")
        key = cut_middle(shown(self.source.session_key), max(24, width // 2), keep=24)
        title.append(f" {key}", style=palette_of(self.app).key)
        if self.title_text:
            title.append(f"  {shown(self.title_text)}", style="bold")
        return title

    @property
    def view(self) -> ConversationView | None:
        found = self.query(ConversationView)
        return found.first() if found else None

    def on_mount(self) -> None:
        self.query_one("#conversation-find", Input).display = False
        self.query_one("#conversation-facts", Static).display = False
        self.open_conversation()
        self.read_facts()

    # --- reading ----------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="conversation", exit_on_error=False)
    def open_conversation(self) -> None:
        """The outline and the window around the anchor; the hits follow (``find``), so the
        conversation shows without waiting for them."""
        outline = self.source.outline()
        focus = outline.index_of(self.anchor)
        if focus is None:
            focus = max(len(outline) - 1, 0)
        start = max(0, min(focus - WINDOW // 2, len(outline) - WINDOW))
        messages = self.source.window(start, start + WINDOW)
        self.post_message(ConversationOpened(outline, [], start, messages, focus))

    @work(thread=True, exclusive=True, group="window", exit_on_error=False)
    def read_window(self, start: int, stop: int, where: str, focus: int | None) -> None:
        self.post_message(WindowRead(start, self.source.window(start, stop), where, focus))

    @work(thread=True, exclusive=True, group="whole", exit_on_error=False)
    def read_whole(self, index: int) -> None:
        self.post_message(WholeRead(index, self._whole(index)))

    def _whole(self, index: int) -> dict[str, Any]:
        whole = getattr(self.source, "whole", None)
        return whole(index) if whole is not None else self.source.window(index, index + 1)[0]

    @work(thread=True, exclusive=True, group="call", exit_on_error=False)
    def read_call(self, indices: list[int]) -> None:
        """The call's message and its result, read whole (opened at a call)."""
        for index in indices:
            self.post_message(WholeRead(index, self._whole(index)))

    @work(thread=True, exclusive=True, group="failed", exit_on_error=False)
    def read_failed(self, outline: Outline, forward: bool) -> None:
        failed = getattr(self.source, "failed", None)
        self.post_message(FailedFound(outline, failed() if failed is not None else [], forward))

    @work(thread=True, exclusive=True, group="facts", exit_on_error=False)
    def read_facts(self) -> None:
        facts = getattr(self.source, "facts", None)
        if facts is not None:
            self.post_message(FactsRead(facts()))

    @while_shown
    def on_facts_read(self, message: FactsRead) -> None:
        self.facts, self._facts_read = message.facts, True
        self.show_facts()

    def show_facts(self) -> None:
        """The facts beside the conversation: one line, or (``i``) every fact and file."""
        panel = self.query_one("#conversation-facts", Static)
        if not self._facts_read:
            return
        if self.facts_open:
            panel.update(Text("\n".join(facts_lines(self.facts))))
        else:
            panel.update(Text(f" {facts_summary(self.facts)}", no_wrap=True,
                              overflow="ellipsis", style="dim"))
        panel.set_class(self.facts_open, "open")
        panel.display = True

    @property
    def facts_shown(self) -> bool:
        """The facts were read and are on screen (a test waits for it)."""
        return self._facts_read

    def action_toggle_facts(self) -> None:
        self.facts_open = not self.facts_open
        self.show_facts()

    @work(thread=True, exclusive=True, group="hits", exit_on_error=False)
    def find(self, request: SearchRequest, opening: bool = False) -> None:
        try:
            self.post_message(HitsFound(request, self.source.hits(request), opening=opening))
        except ValidationError as err:
            self.post_message(HitsFound(request, None, str(err), opening=opening))

    @while_shown
    async def on_conversation_opened(self, message: ConversationOpened) -> None:
        self.outline = message.outline
        view = ConversationView(message.outline, self.now, id="conversation")
        view.palette = palette_of(self.app)
        await self.query_one("#conversation-view").remove()
        await self.mount(view, after=self.query_one("#conversation-facts"))
        self.watch(view, "scroll_y", lambda: self.show_position(), init=False)
        self._set_hits(message.hits, self.anchor, message.focus)
        # the anchor is marked at once (it is the best hit); the hits, read next, confirm it
        view.hit = message.focus if self.anchor is not None else None
        where = "center" if self.anchor is not None else "bottom"
        await view.show_window(message.start, message.messages, message.focus, where)
        if self.at_call and message.outline.index_of(self.anchor) is not None:  # (not rewound)
            view.select(message.focus)
            answer = message.outline.index_of(self.result)
            self.read_call([message.focus] + ([answer] if answer is not None else []))
        view.focus()
        self.show_position(message.focus)
        self._opening = True  # the hits are read once it is laid out (on_..._settled)

    @while_shown
    def on_conversation_view_settled(self, _message: ConversationView.Settled) -> None:
        """The hits of a long conversation take a while to read: asked for once the opened
        conversation is on screen, so they do not slow its first layout."""
        if self._opening and self.request is not None and self.request.query.strip():
            self.find(self.request, opening=True)
        self._opening = False

    @while_shown
    async def on_window_read(self, message: WindowRead) -> None:
        view = self.view
        if view is None:
            return
        if message.where in ("before", "after"):
            await view.add_messages(message.start, message.messages, message.where)
        else:
            await view.show_window(message.start, message.messages, message.focus, message.where)
            self.show_position(message.focus)

    @while_shown
    def on_hits_found(self, message: HitsFound) -> None:
        if message.hits is None:
            if not message.opening:
                self.notify(message.error or "", severity="warning", markup=False)
            return
        self.request = message.request
        top = self.view.top_index() if self.view is not None else 0
        self._set_hits(message.hits, self.anchor if message.opening else None, top)
        if message.opening and self.current is not None and self.view is not None and (
                self.hits[self.current] == self.anchor):
            self.view.mark_hit(self.hit_positions[self.current])  # opened at it already
            self.show_position(self.hit_positions[self.current])
            return
        if not self.hits:
            self.notify(f"no hits for {shown(message.request.query)} in this conversation",
                        markup=False, timeout=3)
            self.show_position()
            return
        self.go_to_hit(self.current or 0)

    def _set_hits(self, hits: list[str], prefer: str | None, near: int | None) -> None:
        """The hits in outline order; the current one is ``prefer`` if it is a hit, else the
        first at or after outline position ``near``."""
        outline = self.outline
        assert outline is not None
        kept = sorted((p, h) for h in hits if (p := outline.index_of(h)) is not None)
        self.hits = [h for _, h in kept]
        self.hit_positions = [p for p, _ in kept]
        if not kept:
            self.current = None
        elif prefer in self.hits:
            self.current = self.hits.index(prefer)  # type: ignore[arg-type]
        else:
            after = [n for n, p in enumerate(self.hit_positions) if p >= (near or 0)]
            self.current = after[0] if after else 0

    @while_shown
    def on_whole_read(self, message: WholeRead) -> None:
        if self.view is not None:
            self.view.expand(message.index, message.message)

    @while_shown
    def on_failed_found(self, message: FailedFound) -> None:
        self._failed = (message.outline, message.positions)
        self.go_to_failed(message.forward)

    def on_conversation_view_need_messages(self, message: ConversationView.NeedMessages) -> None:
        self.read_window(message.start, message.stop, message.where, None)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_failure(event)  # type: ignore[attr-defined]

    # --- the position line --------------------------------------------------------------

    @while_shown
    def show_position(self, index: int | None = None) -> None:
        outline = self.outline
        line = Text(no_wrap=True, overflow="ellipsis")
        if outline is None:
            return
        if self.hits and self.current is not None:
            line.append(f" hit {self.current + 1:,} of {len(self.hits):,}", style="bold")
            line.append(" · ", style="dim")
        elif self.request is not None and self.request.query.strip():
            line.append(" no hits", style="dim")
            line.append(" · ", style="dim")
        if index is not None:
            self._focus = index
        elif self.view is not None:  # scrolled: the message brought into view while it shows
            in_view = self._focus is not None and self.view.in_view(self._focus)
            index = self._focus if in_view else self.view.top_index()
        said = _said_at(outline, index)
        total = outline.said_total
        line.append(f"message {said:,} of {total:,}" if total else plural(0, "message"),
                    style="bold" if not self.hits else "")
        if self.request is not None and self.request.query.strip():
            line.append(f"  for {shown(self.request.query)}", style="dim")
        if self._flash:
            line.append(f"   {self._flash}", style="bold")
        else:
            hints = keys.hint_line(self.app, ["conversation.next", "conversation.find",
                                              "conversation.top", "conversation.back"])
            line.append(f"   {hints}", style="dim")
        self.query_one("#conversation-position", Static).update(line, layout=False)  # one row

    def flash(self, text: str) -> None:
        """Say on the position line what just happened (what was copied), for a while."""
        self._flash = text
        self.show_position()
        self.set_timer(FLASH_S, self._unflash)

    @while_shown
    def _unflash(self) -> None:
        self._flash = ""
        self.show_position()

    # --- moving -------------------------------------------------------------------------------

    def go_to(self, index: int, where: str = "center") -> None:
        """Bring outline position ``index`` into view, reading its window when not shown."""
        view = self.view
        if view is None or self.outline is None:
            return
        if view.bring_into_view(index, where):
            self.show_position(index)
            return
        total = len(self.outline)
        if where == "top":
            start = 0
        elif where == "bottom":
            start = max(0, total - WINDOW)
        else:
            start = max(0, min(index - WINDOW // 2, total - WINDOW))
        self.read_window(start, start + WINDOW, where, index)

    def go_to_hit(self, n: int) -> None:
        if not self.hits:
            self.app.bell()
            self.notify("no hits here: press / to search within the conversation", markup=False,
                        timeout=3)
            return
        self.current = n % len(self.hits)
        position = self.hit_positions[self.current]
        if self.view is not None:
            self.view.mark_hit(position)
        self.go_to(position)

    def action_next_hit(self) -> None:
        self.go_to_hit(0 if self.current is None else self.current + 1)

    def action_previous_hit(self) -> None:
        self.go_to_hit(-1 if self.current is None else self.current - 1)

    def action_to_hit(self) -> None:
        self.go_to_hit(self.current or 0)

    def action_top(self) -> None:
        self.go_to(0, "top")

    def action_bottom(self) -> None:
        if self.outline is not None:
            self.go_to(len(self.outline) - 1, "bottom")

    def _scroll(self, how: str) -> None:
        view = self.view
        if view is not None:
            getattr(view, how)(animate=False)

    def action_scroll_down(self) -> None:
        self._scroll("scroll_down")

    def action_scroll_up(self) -> None:
        self._scroll("scroll_up")

    def action_page_down(self) -> None:
        self._scroll("scroll_page_down")

    def action_page_up(self) -> None:
        self._scroll("scroll_page_up")

    # --- selecting, unfolding, failed calls -----------------------------------------------

    def _selection(self) -> int | None:
        """The selected message if it shows, else the first message in view."""
        view = self.view
        if view is None:
            return None
        if view.selected is not None and view.in_view(view.selected):
            return view.selected
        return view.top_index()

    def select(self, index: int) -> None:
        view = self.view
        if view is None or self.outline is None or not len(self.outline):
            return
        index = min(max(index, 0), len(self.outline) - 1)
        view.select(index)
        if view.in_view(index):
            self.show_position(index)
        else:
            self.go_to(index)

    def _step_selection(self, step: int) -> None:
        view = self.view
        current = self._selection()
        if view is None or current is None:
            return
        shown_already = view.selected == current
        self.select(current + step if shown_already else current)

    def action_select_next(self) -> None:
        self._step_selection(1)

    def action_select_previous(self) -> None:
        self._step_selection(-1)

    def action_toggle_fold(self) -> None:
        """Unfold the selected message (read whole), or fold it again."""
        view = self.view
        index = self._selection()
        if view is None or index is None:
            return
        view.select(index)
        if index in view.whole:
            view.collapse(index, None)
        else:
            self.read_whole(index)

    def action_next_failed(self) -> None:
        self._failed_step(True)

    def action_previous_failed(self) -> None:
        self._failed_step(False)

    def _failed_step(self, forward: bool) -> None:
        if self.outline is None:
            return
        if self._failed is None or self._failed[0] is not self.outline:
            self.read_failed(self.outline, forward)  # read once per outline
        else:
            self.go_to_failed(forward)

    def go_to_failed(self, forward: bool) -> None:
        """Select the message holding the next (previous) failed tool call after (before) the
        selection, round to the first (last)."""
        outline = self.outline
        if self._failed is None or outline is None:
            return
        results = self._failed[1]
        if not results:
            self.app.bell()
            self.notify("no failed tool calls in this conversation", markup=False, timeout=3)
            return
        calls = [_call_of(outline, r) for r in results]
        here = self._selection()
        here = -1 if here is None else here
        if forward:
            n = next((k for k, c in enumerate(calls) if c > here), 0)
        else:
            n = next((k for k in range(len(calls) - 1, -1, -1) if calls[k] < here),
                     len(calls) - 1)
        self.select(calls[n])
        self.flash(f"failed call {n + 1:,} of {len(calls):,}")

    # --- searching within -----------------------------------------------------------------

    def action_find(self) -> None:
        find = self.query_one("#conversation-find", Input)
        find.display = True
        if self.request is not None and not find.value:
            find.value = self.request.query
        find.focus()

    @on(Input.Submitted, "#conversation-find")
    def _find_submitted(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            return
        base = self.request or SearchRequest(event.value)
        self.find(base._replace(query=event.value, session_key=self.source.session_key,
                                match="prefix"))
        if self.view is not None:
            self.view.focus()

    def action_back(self) -> None:
        find = self.query_one("#conversation-find", Input)
        if find.display:
            find.display = False
            if self.view is not None:
                self.view.focus()
            return
        self.dismiss(None)

    # --- the app's part -----------------------------------------------------------------------

    def action_export(self) -> None:
        self.post_message(ExportRequested(self.source.session_key, _host(self.source)))

    def action_resume(self) -> None:
        self.post_message(ResumeRequested(self.source.session_key, _host(self.source)))

    def action_calls(self) -> None:
        """This session's tool calls, newest first (the calls screen), as the same caller."""
        self.post_message(CallsRequested(self.source.session_key))

    def restyle(self) -> None:
        self.query_one("#conversation-title", Static).update(self._title(), layout=False)
        if self.view is not None:
            self.view.restyle(palette_of(self.app))


def _said_at(outline: Outline, index: int | None) -> int:
    """The number of the user or assistant message at ``index`` (or the nearest one before
    it, for tool traffic)."""
    if index is None or not len(outline):
        return 0
    index = min(max(index, 0), len(outline) - 1)
    while index > 0 and not outline.said[index]:
        index -= 1
    return outline.said[index] or 1


def _call_of(outline: Outline, result: int) -> int:
    """The message holding the call a tool result answers: the nearest assistant message
    before it (the result itself when there is none)."""
    for n in range(result - 1, -1, -1):
        if outline.roles[n] == "assistant":
            return n
        if outline.roles[n] == "user":
            break
    return result


def _host(source: ConversationSource) -> str | None:
    """The host of a source's session, when it names one (a test's source may not)."""
    return getattr(source, "host", None)
