"""The results list and the count line above it. A row is one of three things:

- a conversation (``SessionSummary``, the home list before anything is typed): its title,
  then its key, last activity, message count and source;
- a conversation found by a search (``ConversationHit``, results grouped by conversation):
  its title, key, hits and last activity, then its best hit;
- a message (``SearchResult``, one row per message): key, time and role, then the excerpt;
- a tool call (``ToolHit``, the tool mode): ``tool_rows.tool_prompt``.

Transcript text is data: everything from a transcript goes through ``printable`` (control
characters, ANSI escapes included, become visible control pictures) into a
``rich.text.Text`` (never parsed as markup), so ``[bold red]x[/]`` or ``\\x1b[31m`` in a message
shows literally. Long titles and keys are cut to the row's width.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Union

from rich.text import Text
from textual import events
from textual.geometry import Size
from textual.reactive import Reactive
from textual.strip import Strip
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from backscroll.core.catalog import SOURCE_NAMES, SessionSummary
from backscroll.core.grouped import ConversationHit
from backscroll.core.search import SearchRequest, SearchResponse, SearchResult
from backscroll.core.tool_search import ToolHit, ToolSearchResponse

from ..text import DEFAULT_PALETTE, Clock, Palette, ago, cut_middle, highlighted, plural, printable, shown
from .tool_rows import tool_prompt

Row = Union[SessionSummary, ConversationHit, SearchResult, ToolHit]


def row_key(row: Row) -> str:
    if isinstance(row, SessionSummary):
        return row.key
    if isinstance(row, ConversationHit):
        return row.session.key
    return row.session_key


def row_host(row: Row) -> str:
    """The host of a row's session ("" for one a team server stored before hosts)."""
    if isinstance(row, SessionSummary):
        return row.host
    if isinstance(row, ConversationHit):
        return row.session.host
    return row.host


def row_anchor(row: Row) -> str | None:
    """The message a row is about (a hit), or None: the conversation's end."""
    if isinstance(row, SessionSummary):
        return None
    if isinstance(row, ConversationHit):
        return row.result.message_id
    return row.message_id


def row_agent(row: Row) -> str:
    if isinstance(row, SessionSummary):
        return row.agent
    if isinstance(row, ConversationHit):
        return row.session.agent
    return row.agent or row.session_key.split(":")[1]


def row_summary(row: Row) -> SessionSummary | None:
    if isinstance(row, SessionSummary):
        return row
    if isinstance(row, ConversationHit):
        return row.session
    return None


def row_identity(row: Row) -> tuple[str, str, str]:
    anchor = row_anchor(row) or ""
    if isinstance(row, ToolHit):  # a message can make several calls
        anchor = f"{anchor}/{row.call_id or row.tool}"
    return (row_key(row), anchor, row_host(row))


def _title_line(summary: SessionSummary, palette: Palette, width: int) -> Text:
    empty = "(no message yet)" if summary.searchable else "(waiting to be indexed)"
    title = printable(summary.display_title or empty, one_line=True)
    return Text(_cut_end(title, width), style=palette.title)


def _cut_end(text: str, width: int) -> str:
    return text if not width or len(text) <= width else text[: max(width - 1, 1)] + "…"


def _key_lines(key: str, after: str, palette: Palette, width: int) -> Text:
    """The key (cut in the middle only when it is wider than the row) and ``after`` (dim):
    on one line when both fit, else ``after`` on the next line."""
    key = shown(key)
    lines = Text()
    if not width or len(key) + len(after) <= width:
        lines.append(key, style=palette.key)
        lines.append(after, style="dim")
        return lines
    lines.append(cut_middle(key, width, keep=24), style=palette.key)
    lines.append("\n" + _cut_end(after.strip(), width), style="dim")
    return lines


def conversation_prompt(summary: SessionSummary, now: Clock, width: int = 0,
                        palette: Palette = DEFAULT_PALETTE) -> Text:
    """A conversation in the home list: title, then key · last activity · messages · source."""
    messages = plural(summary.messages, "msg") if summary.searchable else "indexing…"
    after = f"  {ago(summary.last_activity, now)} · {messages} · {SOURCE_NAMES[summary.source]}"
    return Text.assemble(_title_line(summary, palette, width), "\n",
                         _key_lines(summary.key, after, palette, width))


def grouped_prompt(hit: ConversationHit, now: Clock, max_chars: int = 400, width: int = 0,
                   palette: Palette = DEFAULT_PALETTE) -> Text:
    """A conversation found: title, key · hits · last activity, each word's hits (a query of
    several: why it matched), then its best hit."""
    after = f"  {plural(hit.hits, 'hit')} · {ago(hit.session.last_activity, now)}"
    body = _excerpt(hit.result, max_chars, palette)
    key = _key_lines(hit.session.key, after, palette, width)
    if len(hit.words) > 1:
        words = " · ".join(f"{printable(w.word, one_line=True)} {w.hits:,}" for w in hit.words)
        key.append("\n" + _cut_end(words, width), style="dim")
    if _same_words(hit.session.display_title, body.plain):  # the best hit is the title
        return Text.assemble(key, "\n", body)
    return Text.assemble(_title_line(hit.session, palette, width), "\n", key, "\n", body)


def _same_words(title: str, excerpt: str, compared: int = 40) -> bool:
    """Whether an excerpt shows the title's own words (then one of them is enough)."""
    a, b = " ".join(title.split())[:compared], " ".join(excerpt.lstrip("…").split())
    return bool(a) and (a in b or b[:compared] in a)


def result_prompt(result: SearchResult, now: Clock, max_chars: int = 400, width: int = 0,
                  palette: Palette = DEFAULT_PALETTE) -> Text:
    """Who and when (a long key is cut in the middle to fit ``width``), then the excerpt
    with its matches."""
    head = _key_lines(result.session_key, f"  {ago(result.timestamp, now)}  {result.role}",
                      palette, width)
    role_at = head.plain.rfind(result.role)
    head.stylize(palette.role(result.role), role_at, role_at + len(result.role))
    return Text.assemble(head, "\n", _excerpt(result, max_chars, palette))


def _excerpt(result: SearchResult, max_chars: int, palette: Palette) -> Text:
    body = highlighted(result.excerpt, result.highlights, style=palette.match)
    if len(body) > max_chars:
        start = max(0, min(result.highlights[0][0] - 20, len(body) - max_chars)) if (
            result.highlights
        ) else 0
        if start:  # from the start of a word
            space = body.plain.rfind(" ", 0, start + 1)
            start = space + 1  # (-1 + 1: from the very start)
        body = body[start : start + max_chars]
        if start:
            body = Text("…") + body
        if start + max_chars < len(result.excerpt):
            body.append("…")
    return body


def count_line(request: SearchRequest | None, rows: Sequence[Row] | None,
               response: SearchResponse | None = None, refused: bool = False) -> Text:
    """Above the list: what it holds (``request`` None: the recent conversations;
    ``refused``: the bar's query was refused, and the list still holds ``request``'s answer)."""
    if refused and request is not None:
        line = Text("below: the answer for ", style="dim")
        line.append(printable(request.query, one_line=True), style="bold")
        return line
    if rows is None:
        return Text("type to search every conversation you may see", style="dim")
    if isinstance(response, ToolSearchResponse) and request is not None:
        return _calls_line(request, rows, response)
    if request is None or response is None:
        if not rows:
            return Text("no conversations to show", style="dim")
        line = Text(plural(len(rows), "conversation"), style="bold")
        line.append(", newest first", style="dim")
        return line
    if not rows:
        line = Text("no results for ", style="dim")
        line.append(printable(request.query, one_line=True), style="bold")
        if response.indexing:
            line.append(" yet: some sessions are still being indexed", style="yellow")
        return line
    if isinstance(rows[0], ConversationHit):
        hits = sum(r.hits for r in rows if isinstance(r, ConversationHit))
        line = Text(plural(len(rows), "conversation"), style="bold")
        line.append(f" · {plural(hits, 'hit')}", style="dim")
    else:
        line = Text(plural(len(rows), "result"), style="bold")
    if response.truncated:
        line.append(" · more matched", style="dim")
    if response.ranked_window:
        line.append(" · ranked among the newest matches", style="dim")
    if response.searched_since is not None:
        line.append(" · recent messages only (a costly query)", style="dim")
    return line


def _calls_line(request: SearchRequest, rows: Sequence[Row],
                response: ToolSearchResponse) -> Text:
    """The count line of tool calls: found for words, or the newest listed."""
    words = request.query.strip()
    if not rows:
        line = Text("no tool calls" + (" for " if words else " to show"), style="dim")
        if words:
            line.append(printable(words, one_line=True), style="bold")
        if response.indexing:
            line.append(" yet: some sessions are still being indexed", style="yellow")
        return line
    line = Text(plural(len(rows), "tool call"), style="bold")
    if not words:
        line.append(", newest first", style="dim")
    if response.truncated:
        line.append(" · more " + ("matched" if words else "before them"), style="dim")
    if response.ranked_window:
        line.append(" · ranked among the newest matches", style="dim")
    if response.searched_since is not None:
        line.append(" · recent calls only (a costly query)", style="dim")
    return line


class ResultsList(OptionList):
    """The rows; each option carries its row. Records when an answer was painted, so the
    latency benchmark can time keystroke-to-repaint. A click highlights a row (and previews
    it); a click on the highlighted row, or a double click, opens it."""

    # The rows' height (the virtual size) changes with every answer; Textual's reactive lays
    # the whole screen out again for it, though the list's own size is fixed (1fr): the
    # scrollbar is updated by the option list itself, a repaint does the rest.
    virtual_size = Reactive(Size(0, 0), layout=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rows: list[Row] = []
        self.shown_for: str | None = None  # the query text whose answer is in the options
        self.shown_answers = 0  # answers put in the options so far
        self.painted_for: str | None = None
        self.painted_answers = 0  # of those, painted (the first page and the full one differ)
        self.painted_at = 0.0
        self.palette = DEFAULT_PALETTE
        self._now: Clock = time.time
        self._built_width = 0

    @property
    def results(self) -> list[Row]:
        return self.rows

    def show_rows(
        self,
        rows: Sequence[Row],
        now: Clock,
        shown_for: str | None,
        keep: tuple[str, str] | None = None,
    ) -> None:
        """Replace the options; keep the highlight on ``keep`` (a row identity) if present."""
        self.rows = list(rows)
        self.shown_for = shown_for
        self.shown_answers += 1
        self._now = now
        self._rebuild()
        index = 0 if self.rows else None
        if keep is not None:
            for i, row in enumerate(self.rows):
                if row_identity(row) == keep:
                    index = i
        self.highlighted = index

    show_results = show_rows

    def restyle(self, palette: Palette) -> None:
        """The theme changed: draw the rows in its colours."""
        self.palette = palette
        self._rebuild()

    def _rebuild(self) -> None:
        width = self.scrollable_content_region.width or self.size.width or 60
        self._built_width = width
        max_chars = max(60, (width - 2) * 3)  # about three lines of excerpt
        highlighted = self.highlighted
        options: list[Option | None] = []
        for i, row in enumerate(self.rows):
            options += [Option(self._prompt(row, max_chars, width - 1), id=f"r{i}"), None]
        self.set_options(options[:-1])  # a divider between two rows
        if highlighted is not None and highlighted < len(self.rows):
            self.highlighted = highlighted

    def _prompt(self, row: Row, max_chars: int, width: int) -> Text:
        if isinstance(row, SessionSummary):
            return conversation_prompt(row, self._now, width, self.palette)
        if isinstance(row, ConversationHit):
            return grouped_prompt(row, self._now, max_chars * 2 // 3, width, self.palette)
        if isinstance(row, ToolHit):
            return tool_prompt(row, self._now, width, self.palette)
        return result_prompt(row, self._now, max_chars, width, self.palette)

    def on_resize(self) -> None:
        if self.rows and self.scrollable_content_region.width != self._built_width:
            self._rebuild()

    @property
    def current(self) -> Row | None:
        index = self.highlighted
        if index is None or not 0 <= index < len(self.rows):
            return None
        return self.rows[index]

    async def _on_click(self, event: events.Click) -> None:
        event.prevent_default()  # OptionList's own click selects at once
        clicked = event.style.meta.get("option")
        if clicked is None or self._options[clicked].disabled:
            return
        if clicked == self.highlighted or event.chain > 1:
            self.highlighted = clicked
            self.action_select()
        else:
            self.highlighted = clicked

    def render_lines(self, crop: Any) -> list[Strip]:
        lines = super().render_lines(crop)
        if self.painted_answers != self.shown_answers:
            self.painted_for = self.shown_for
            self.painted_answers = self.shown_answers
            self.painted_at = time.perf_counter()
        return lines
