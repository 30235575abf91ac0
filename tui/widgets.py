"""The browser's widgets, the messages its workers post, and the pure functions that turn core
answers into Rich text.

Transcript text is data: everything shown from a transcript goes through ``printable`` (control
characters, ANSI escapes included, become visible control pictures) and into a
``rich.text.Text`` (never parsed as markup), so ``[bold red]x[/]`` or ``\\x1b[31m`` in a message
shows literally.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widgets import OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from backscroll.core.history import HistoryResponse
from backscroll.core.search import SearchRequest, SearchResponse, SearchResult
from backscroll.core.status import StateStatus

from .text import ROLE_STYLES, Clock, ago, highlighted, plural, printable, utc

TOOL_LINE_CHARS = 160


def result_prompt(result: SearchResult, now: Clock, max_chars: int = 400, width: int = 0) -> Text:
    """Who and when on one line (a long key is cut in the middle to fit ``width``), then the
    excerpt with its matches."""
    when = f"  {ago(result.timestamp, now)}  "
    key = printable(result.session_key, one_line=True)
    room = width - len(when) - len(result.role)
    keep = max(room - 1, 24)  # never below 24 characters: wrapping beats mangling
    if width and len(key) > keep:
        key = key[: keep - keep // 3] + "…" + key[len(key) - keep // 3 :]
    head = Text()
    head.append(key, style="bold cyan")
    head.append(when, style="dim")
    head.append(result.role, style=ROLE_STYLES.get(result.role, "bold"))
    body = highlighted(result.excerpt, result.highlights)
    if len(body) > max_chars:
        start = max(0, min(result.highlights[0][0] - 20, len(body) - max_chars)) if (
            result.highlights
        ) else 0
        body = body[start : start + max_chars]
        if start:
            body = Text("…") + body
        if start + max_chars < len(result.excerpt):
            body.append("…")
    return Text.assemble(head, "\n", body)


def count_line(request: SearchRequest | None, response: SearchResponse | None) -> Text:
    if request is None or response is None:
        return Text("type to search every conversation you may see", style="dim")
    n = len(response.results)
    if n == 0:
        line = Text("no results for ", style="dim")
        line.append(printable(request.query, one_line=True), style="bold")
        if response.indexing:
            line.append(" yet: some sessions are still being indexed", style="yellow")
        return line
    line = Text(plural(n, "result"), style="bold")
    if response.truncated:
        line.append(" · more matched", style="dim")
    if response.ranked_window:
        line.append(" · ranked among the newest matches", style="dim")
    return line


def welcome_text(status: StateStatus | None) -> Text:
    """What the preview pane says before the first search."""
    text = Text()
    if status is not None and status.agents:
        messages = sum(a.messages for a in status.agents)
        agents = len(status.agents)
        text.append(f"Search {plural(status.total_sessions, 'session')} "
                    f"({plural(messages, 'message')}) of {plural(agents, 'agent')}.\n\n",
                    style="bold")
    text.append("Type words to find where they were said; the conversation around the "
                "highlighted result shows here.\n\n", style="dim")
    for keys, what in (
        ("↑ ↓  j k", "move through the results"),
        ("enter", "open the whole conversation"),
        ("tab", "from the search bar to the results"),
        ("v", "view as another session"),
        ("s o m", "scope, order, match mode"),
        ("?", "all keys"),
    ):
        text.append(f"  {keys:<9}", style="bold cyan")
        text.append(f"{what}\n", style="dim")
    return text


def _one_line(text: str, limit: int = TOOL_LINE_CHARS) -> str:
    flat = " ".join(printable(text, one_line=True).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def block_renderables(block: dict[str, Any]) -> list[Text]:
    kind = block.get("type")
    if kind == "text":
        return [Text(printable(block.get("text", "")))]
    if kind == "thinking":
        return [Text(printable(block.get("thinking", "")), style="dim italic")]
    if kind == "image":
        return [Text(printable(block.get("placeholder", "[image]"), one_line=True), style="dim")]
    if kind == "toolCall":
        line = f"→ {block.get('name', 'tool')}({_one_line(block.get('arguments', ''))})"
        return [Text(printable(line, one_line=True), style="dim", no_wrap=True,
                     overflow="ellipsis")]
    if kind == "toolResult":
        inner = " ".join(
            b.get("text") or b.get("placeholder") or "" for b in block.get("content", [])
        )
        line = Text(no_wrap=True, overflow="ellipsis", style="dim")
        line.append(f"← {printable(str(block.get('name') or 'tool'), one_line=True)}")
        if block.get("isError"):
            line.append(" error", style="red")
        line.append(f": {_one_line(inner)}")
        return [line]
    return []


def message_renderable(message: dict[str, Any], now: Clock, hit: bool = False) -> Group:
    """One message: a header (role, time, id) then its blocks; tool traffic is one dim line."""
    blocks = [r for b in message.get("content", []) for r in block_renderables(b)]
    role = str(message.get("role", "?"))
    if role not in ROLE_STYLES:  # tool results: compact, no header
        return Group(*blocks)
    head = Text(no_wrap=True, overflow="ellipsis")
    head.append("▶ " if hit else "", style="bold yellow")
    head.append(role, style=ROLE_STYLES[role])
    ts = int(message.get("timestamp") or 0)
    head.append(f"  {ago(ts, now)} · {utc(ts)}  ", style="dim")
    head.append(printable(str(message.get("id", "")), one_line=True), style="dim")
    return Group(head, *blocks)


def messages_renderable(messages: Sequence[dict[str, Any]], now: Clock) -> RenderableType:
    parts: list[RenderableType] = []
    for message in messages:
        if parts and message.get("role") in ROLE_STYLES:  # a tool result stays by its call
            parts.append(Text(""))
        parts.append(message_renderable(message, now))
    return Group(*parts)


# --- messages posted by workers (handlers on the UI thread mutate the widgets) -------------


class SearchAnswered(Message):
    """The answer (or the validation error) for one search generation."""

    def __init__(
        self,
        generation: int,
        request: SearchRequest,
        response: SearchResponse | None = None,
        error: str | None = None,
    ) -> None:
        super().__init__()
        self.generation = generation
        self.request = request
        self.response = response
        self.error = error


class HistoryLoaded(Message):
    def __init__(
        self,
        result: SearchResult,
        response: HistoryResponse | None = None,
        error: str | None = None,
        full: bool = False,
    ) -> None:
        super().__init__()
        self.result = result
        self.response = response
        self.error = error
        self.full = full  # the whole conversation (the conversation screen), not a preview


class StatusPolled(Message):
    """Reconciliation progress; a newer one replaces an unprocessed older one."""

    def __init__(self, status: StateStatus) -> None:
        super().__init__()
        self.status = status

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, StatusPolled)


# --- widgets --------------------------------------------------------------------------------


class ResultsList(OptionList):
    """Search results; each option carries its ``SearchResult``. Records when an answer was
    painted, so the latency benchmark can time keystroke-to-repaint."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.results: list[SearchResult] = []
        self.shown_for: str | None = None  # the query text whose answer is in the options
        self.painted_for: str | None = None
        self.painted_at = 0.0
        self._now: Clock = time.time
        self._built_width = 0

    def show_results(
        self,
        results: Sequence[SearchResult],
        now: Clock,
        shown_for: str | None,
        keep: tuple[str, str] | None = None,
    ) -> None:
        """Replace the options; keep the highlight on ``keep`` (key, message id) if present."""
        self.results = list(results)
        self.shown_for = shown_for
        self._now = now
        self._rebuild()
        index = 0 if self.results else None
        if keep is not None:
            for i, result in enumerate(self.results):
                if (result.session_key, result.message_id) == keep:
                    index = i
        self.highlighted = index

    def _rebuild(self) -> None:
        width = self.scrollable_content_region.width or self.size.width or 60
        self._built_width = width
        max_chars = max(60, (width - 2) * 3)  # about three lines of excerpt
        highlighted = self.highlighted
        self.set_options(
            Option(result_prompt(r, self._now, max_chars, width - 1), id=f"r{i}")
            for i, r in enumerate(self.results)
        )
        if highlighted is not None and highlighted < len(self.results):
            self.highlighted = highlighted

    def on_resize(self) -> None:
        if self.results and self.scrollable_content_region.width != self._built_width:
            self._rebuild()

    @property
    def current(self) -> SearchResult | None:
        index = self.highlighted
        if index is None or not 0 <= index < len(self.results):
            return None
        return self.results[index]

    def render_lines(self, crop: Any) -> list[Strip]:
        lines = super().render_lines(crop)
        if self.painted_for != self.shown_for:
            self.painted_for = self.shown_for
            self.painted_at = time.perf_counter()
        return lines


class HistoryPane(VerticalScroll):
    """A conversation with one message marked: before / hit / after, scrolled to the hit."""

    DEFAULT_CSS = """
    HistoryPane > .history-part { height: auto; }
    HistoryPane > #history-hit { display: none; }
    """

    def __init__(self, placeholder: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.placeholder = placeholder
        self.shown: tuple[str, str] | None = None  # (session key, hit message id)

    def compose(self) -> ComposeResult:
        yield Static(Text(self.placeholder, style="dim"), id="history-head", classes="history-part")
        yield Static("", id="history-before", classes="history-part")
        yield Static("", id="history-hit", classes="history-part hit")
        yield Static("", id="history-after", classes="history-part")

    def show_note(self, text: str | Text, style: str = "dim") -> None:
        self.shown = None
        note = text if isinstance(text, Text) else Text(text, style=style)
        self.query_one("#history-head", Static).update(note)
        for part in ("#history-before", "#history-after"):
            self.query_one(part, Static).update("")
        self.query_one("#history-hit", Static).display = False

    def show_history(self, response: HistoryResponse, hit_id: str | None, now: Clock) -> None:
        messages = response.messages
        index = next((i for i, m in enumerate(messages) if m.get("id") == hit_id), None)
        head = Text(no_wrap=True, overflow="ellipsis")
        head.append(printable(response.session_key, one_line=True), style="bold cyan")
        head.append(f"  {printable(response.session_id, one_line=True)}", style="dim")
        if response.has_more:
            head.append("\n… older messages not shown", style="dim")
        if index is None:
            before, after = messages, []
        else:
            before, after = messages[:index], messages[index + 1 :]
        before_r = messages_renderable(before, now)
        after_r = messages_renderable(after, now)
        if response.has_newer:
            after_r = Group(after_r, Text("\n… newer messages not shown", style="dim"))
        self.query_one("#history-head", Static).update(head)
        self.query_one("#history-before", Static).update(before_r)
        self.query_one("#history-after", Static).update(after_r)
        hit = self.query_one("#history-hit", Static)
        if index is None:
            hit.display = False
        else:
            hit.update(message_renderable(messages[index], now, hit=True))
            hit.display = True
        self.shown = (response.session_key, hit_id or "")
        self.scroll_home(animate=False)
        if index is not None:
            self.call_after_refresh(self.scroll_to_hit)

    def scroll_to_hit(self) -> None:
        hit = self.query_one("#history-hit", Static)
        if hit.display:
            self.scroll_to_center(hit, animate=False, origin_visible=True, immediate=True)

    def plain_text(self) -> str:
        """What the pane shows, as plain text (tests assert on it)."""
        console_text = []
        for part in self.query(".history-part").results(Static):
            if part.display:
                console_text.append(_plain(part.content))
        return "\n".join(console_text)


def _plain(renderable: Any) -> str:
    """The plain text of a Static's content (a Group of Texts, a Text, or a Content)."""
    if isinstance(renderable, Text):
        return renderable.plain
    if isinstance(renderable, Group):
        return "\n".join(_plain(r) for r in renderable.renderables)
    plain = getattr(renderable, "plain", None)
    return plain if isinstance(plain, str) else str(renderable)


@dataclass(frozen=True)
class IndexingView:
    """What the status bar says about reconciliation, derived from a ``StateStatus``."""

    running: bool
    done: int
    total: int
    pending: int
    messages: int
    rate: float

    @classmethod
    def of(cls, status: StateStatus | None) -> IndexingView:
        if status is None:
            return cls(False, 0, 0, 0, 0, 0.0)
        live = [a.progress for a in status.agents if a.progress.running]
        return cls(
            running=bool(live),
            done=sum(p.sessions_done for p in live),
            total=sum(p.sessions_total for p in live),
            pending=status.pending_sessions,
            messages=sum(p.messages_done for p in live),
            rate=sum(p.rate for p in live),
        )


class StatusBar(Horizontal):
    """Reconciliation progress (a ProgressBar bound to reactives), then caller and modes."""

    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text; }
    StatusBar > Static { width: auto; height: 1; padding: 0 1; }
    StatusBar > #status-index { width: auto; }
    StatusBar > ProgressBar { width: 24; height: 1; display: none; }
    StatusBar > ProgressBar.-running { display: block; }
    StatusBar > #status-note { color: $warning; }
    StatusBar > #status-spacer { width: 1fr; }
    """

    done: reactive[int] = reactive(0)
    total: reactive[int] = reactive(1)

    def compose(self) -> ComposeResult:
        yield Static("", id="status-index")
        yield ProgressBar(total=1, show_eta=False, id="status-progress").data_bind(
            progress=StatusBar.done, total=StatusBar.total
        )
        yield Static("", id="status-note")
        yield Static("", id="status-spacer")
        yield Static("", id="status-caller")

    def show(self, indexing: IndexingView, incomplete: bool, sessions: int, context: str) -> None:
        bar = self.query_one(ProgressBar)
        bar.set_class(indexing.running, "-running")
        if indexing.running:
            self.total = max(indexing.total, indexing.done, 1)
            self.done = indexing.done
            text = f"indexing {indexing.done:,}/{indexing.total:,} sessions"
            if indexing.messages:
                text += f" · {indexing.messages:,} msgs"
        elif indexing.pending:
            text = f"{plural(indexing.pending, 'session')} awaiting indexing"
        elif sessions:
            text = f"{plural(sessions, 'session')} indexed"
        else:
            text = "no sessions yet"
        self.query_one("#status-index", Static).update(Text(text))
        note = "results may be incomplete" if incomplete else ""
        self.query_one("#status-note", Static).update(Text(note))
        self.query_one("#status-caller", Static).update(Text(context, no_wrap=True,
                                                             overflow="ellipsis"))

    def plain_text(self) -> str:
        parts = [_plain(s.content) for s in self.query(Static).results(Static)]
        return " ".join(p for p in parts if p)
