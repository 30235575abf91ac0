"""Rich renderings of tool-call answers (``search --tools``, ``calls``), for people: each call
with its tool, arguments, status and duration, and the command that opens its conversation
at that call. Transcript text is always escaped."""

from __future__ import annotations

import shlex
import time
from typing import Any

from backscroll.core.redact import redact

from ..text import ago, highlighted, printable, shown
from .render import _search_tail, console, said

_STATUS_STYLE = {"ok": "green", "failed": "bold red", "none": "yellow"}


def duration(ms: int | None) -> str:
    if ms is None:
        return ""
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def tool_hits(query: str, response: Any, caller: Any, what: str = "tool call") -> None:
    from rich.text import Text

    if not response.results:
        console.print(f"no tool calls for [bold]{said(query or '(the filters)')}[/] as "
                      f"{said(caller.describe())}")
    for hit in response.results:
        head = Text()
        head.append(shown(hit.session_key), style="bold cyan")
        head.append(f"  {ago(hit.timestamp, time.time)}  ", style="dim")
        head.append(printable(hit.tool, one_line=True), style="bold magenta")
        head.append(f"  {hit.status if hit.status != 'none' else 'no result'}",
                    style=_STATUS_STYLE.get(hit.status, ""))
        if hit.duration_ms is not None:
            head.append(f"  {duration(hit.duration_ms)}", style="dim")
        console.print(head)
        console.print(Text(printable(hit.arguments, one_line=True), style="bold"), no_wrap=True,
                      overflow="ellipsis")
        if hit.excerpt:
            console.print(highlighted(hit.excerpt, hit.highlights, one_line=False))
        opener = (f"backscroll history {shlex.quote(redact(hit.session_key))} --message-id "
                  f"{shlex.quote(hit.message_id)} --include-tools")
        # a message id is transcript text: an escape sequence in it must not reach the terminal
        console.print(Text(printable(f"open: {opener}", one_line=True), style="dim"), "\n")
    _search_tail(response, caller, what)
