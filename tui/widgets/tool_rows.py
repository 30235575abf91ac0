"""How the browser draws one tool call found or listed (``core.tool_search.ToolHit``): the
rows of the search screen's tool mode and of the calls screen.

A row is three or four lines: the tool, its status (ok / failed / no result: failed in the
theme's error colour), its duration and its time; the arguments on one line, cut to the
row's width; the session's key; then one line of the matching text with its matches (from
near the first match the arguments line lacks), or of a listed call's result.

Transcript text is data: every text goes through ``printable`` into a ``rich.text.Text``.
"""

from __future__ import annotations

from rich.text import Text

from backscroll.core.tool_search import ToolHit

from ..amounts import duration_text
from ..text import DEFAULT_PALETTE, Clock, Palette, ago, cut_middle, highlighted, printable, shown

STATUS_WORDS = {"ok": "ok", "failed": "failed", "none": "no result"}


def status_word(status: str) -> str:
    """A call's status as a person reads it: the core's ``none`` is ``no result``."""
    return STATUS_WORDS.get(status, status)


def status_style(status: str, palette: Palette) -> str:
    if status == "failed":
        return palette.error
    return "green" if status == "ok" else "dim"


def _cut_end(text: str, width: int) -> str:
    return text if not width or len(text) <= width else text[: max(width - 1, 1)] + "…"


def call_head(hit: ToolHit, now: Clock, palette: Palette = DEFAULT_PALETTE) -> Text:
    """``tool  status  duration  time``: the call's first line."""
    head = Text()
    head.append(printable(hit.tool, one_line=True), style="bold")
    head.append("  ")
    head.append(status_word(hit.status), style=status_style(hit.status, palette))
    if hit.duration_ms is not None:
        head.append(f"  {duration_text(hit.duration_ms)}", style="dim")
    head.append(f"  {ago(hit.timestamp, now)}", style="dim")
    return head


def tool_prompt(hit: ToolHit, now: Clock, width: int = 0, palette: Palette = DEFAULT_PALETTE,
                excerpt: bool = True) -> Text:
    """A tool call's row: its head, its arguments on one line (cut to ``width``), its
    session, and (``excerpt``) one line of the text: a word search's match (unless the
    arguments show it already), or a listed call's result, dim."""
    arguments = _cut_end(printable(hit.arguments, one_line=True), width) or "(no arguments)"
    session = shown(hit.session_key)
    lines = Text.assemble(call_head(hit, now, palette), "\n",
                          Text(arguments, style=palette.title), "\n",
                          Text(cut_middle(session, width, keep=24) if width else session,
                               style=palette.key))
    if not excerpt or not hit.excerpt.strip() or (hit.highlights and _shows_match(hit)):
        return lines
    if hit.highlights:  # a match, from near the first one the arguments lack
        body = highlighted(hit.excerpt, hit.highlights, style=palette.match)
        start = _news_start(hit)
        if start:
            cut = Text()
            cut.append("…", style="dim")
            body = cut.append_text(body[start:])
    else:  # a listed call's result: its start
        body = Text(printable(hit.excerpt, one_line=True), style="dim")
    if width and len(body) > width:  # on one line
        body = body[: max(width - 1, 1)]
        body.append("…", style="dim")
    lines.append("\n")
    lines.append_text(body)
    return lines


def _news_start(hit: ToolHit, before: int = 20) -> int:
    """Where the excerpt's news starts: a little before the first match the arguments line
    does not show already (the excerpt of a match in the output begins with the call's own
    JSON, which the row shows above it), at the start of a word."""
    arguments = hit.arguments.lower()
    first = next((a for a, b in hit.highlights if hit.excerpt[a:b].lower() not in arguments),
                 None)
    if first is None or first <= before:
        return 0
    space = hit.excerpt.rfind(" ", 0, first - before + 1)
    return space + 1 if space >= 0 else 0


def _shows_match(hit: ToolHit) -> bool:
    """Whether the arguments line already holds every matched word (then the excerpt only
    repeats it)."""
    words = {hit.excerpt[a:b].lower() for a, b in hit.highlights}
    arguments = hit.arguments.lower()
    return all(w in arguments for w in words)
