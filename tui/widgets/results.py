"""The results list: one option per hit (who, when, role, the excerpt with its matches), and
the count line above it.

Transcript text is data: everything from a transcript goes through ``printable`` (control
characters, ANSI escapes included, become visible control pictures) into a
``rich.text.Text`` (never parsed as markup), so ``[bold red]x[/]`` or ``\\x1b[31m`` in a message
shows literally.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.strip import Strip
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from backscroll.core.search import SearchRequest, SearchResponse, SearchResult

from ..text import ROLE_STYLES, Clock, ago, highlighted, plural, printable, shown


def result_prompt(result: SearchResult, now: Clock, max_chars: int = 400, width: int = 0) -> Text:
    """Who and when on one line (a long key is cut in the middle to fit ``width``), then the
    excerpt with its matches."""
    when = f"  {ago(result.timestamp, now)}  "
    key = shown(result.session_key)
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
    if response.searched_since is not None:
        line.append(" · recent messages only (a costly query)", style="dim")
    return line



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
