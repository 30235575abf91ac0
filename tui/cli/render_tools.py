"""Rich renderings of tool-call answers (``search --tools``, ``calls``), for people: each call
with its tool, arguments, status and duration, and the command that opens its conversation
at that call. Transcript text is always escaped."""

from __future__ import annotations

import time
from typing import Any

from ..amounts import duration_text
from ..text import ago, highlighted, printable, shown, utc
from .render import _search_tail, console, print_opener, said

_STATUS_STYLE = {"ok": "green", "failed": "bold red", "none": "yellow"}


def duration(ms: int | None) -> str:
    return "" if ms is None else duration_text(ms)


def tool_hits(query: str, response: Any, caller: Any, what: str = "tool call") -> None:
    from rich.text import Text

    if not response.results:
        console.print(f"no tool calls for [bold]{said(query or '(the filters)')}[/] as "
                      f"{said(caller.describe())}")
    several = len({hit.host for hit in response.results}) > 1
    for hit in response.results:
        head = Text()
        head.append(shown(hit.session_key), style="bold cyan")
        if several:  # a team server's answer from several hosts: whose session each is
            head.append(f" on {shown(hit.host or '(unknown host)')}", style="cyan")
        head.append(f"  {utc(hit.timestamp, seconds=True)} · {ago(hit.timestamp, time.time)}  ",
                    style="dim")
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
        print_opener(hit.session_key, hit.message_id, caller, hit.host if several else None,
                     tools=True)
    _search_tail(response, caller, what)
