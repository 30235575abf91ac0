"""Transcript text for terminals, shared by the CLI (Rich) and the browser (Textual).

Transcript text is data: control characters (ANSI escapes included) are made visible one
character for one, so highlight offsets computed by the core stay valid.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import humanize
from rich.console import Group
from rich.text import Text

from .plain import plural, printable, shown  # noqa: F401 - the helpers' home for Rich users

Clock = Callable[[], float]  # epoch seconds; tests pass a frozen one

ROLE_STYLES = {"user": "bold green", "assistant": "bold magenta"}
MATCH_STYLE = "bold black on yellow"


@dataclass(frozen=True)
class Palette:
    """The colours of transcript text: the command line's defaults, or the browser's current
    theme (``tui/theme.py``), so a theme switch recolours keys, roles and matches too."""

    key: str = "bold cyan"
    user: str = ROLE_STYLES["user"]
    assistant: str = ROLE_STYLES["assistant"]
    match: str = MATCH_STYLE
    title: str = "bold"
    hit: str = "bold yellow"
    error: str = "bold red"  # a failed tool call

    def role(self, role: str) -> str:
        return {"user": self.user, "assistant": self.assistant}.get(role, "bold")


DEFAULT_PALETTE = Palette()


def ago(ms: int, now: Clock) -> str:
    return humanize.naturaltime(timedelta(seconds=now() - ms / 1000))


def utc(ms: int, seconds: bool = False) -> str:
    """``2026-11-28 06:58 UTC`` (with ``seconds``: ``06:58:16``, to tell apart the steps of one
    minute, as a timeline of tool calls needs)."""
    shape = "%Y-%m-%d %H:%M:%S UTC" if seconds else "%Y-%m-%d %H:%M UTC"
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime(shape)


def highlighted(text: str, spans: Iterable[tuple[int, int]], one_line: bool = True,
                style: str = MATCH_STYLE) -> Text:
    """Transcript text as Rich text with the matched words styled."""
    out = Text(printable(text, one_line=one_line))
    for start, end in spans:
        out.stylize(style, start, end)
    return out


def cut_middle(text: str, width: int, keep: int = 12) -> str:
    """``text`` in at most ``width`` characters (never fewer than ``keep``), an ellipsis in
    the middle: a long session key keeps its agent (the start) and what tells it apart (the
    end)."""
    width = max(width, keep)
    if len(text) <= width:
        return text
    tail = (width - 1) // 3
    return text[: width - 1 - tail] + "…" + text[len(text) - tail :]


def plain_of(renderable: Any) -> str:
    """The plain text of what a widget shows (a Group of Texts, a Text, or a Content)."""
    if isinstance(renderable, Text):
        return renderable.plain
    if isinstance(renderable, Group):
        return "\n".join(plain_of(r) for r in renderable.renderables)
    plain = getattr(renderable, "plain", None)
    return plain if isinstance(plain, str) else str(renderable)
