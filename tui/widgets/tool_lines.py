"""How the conversation screen draws one message: tool calls and their results folded to one
line with their status (ok / failed, from the result's ``isError``; ``tool_pairs`` pairs them),
or unfolded (``expanded``): the call's arguments laid out whole, the result's output whole.

Transcript text is data: every text goes through ``printable`` into a ``rich.text.Text``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Group
from rich.text import Text

from backscroll.core.tool_pairs import FAILED, NO_RESULT, OK, arguments_preview, arguments_whole

from ..text import DEFAULT_PALETTE, Clock, Palette, printable
from .history_pane import block_renderables, message_renderable

STATUS_STYLES = {OK: "green", FAILED: "bold red", NO_RESULT: "dim"}
PREVIEW_CHARS = 160


def _status(line: Text, status: str) -> None:
    if status:
        line.append(f"  {status}", style=STATUS_STYLES.get(status, "dim"))


def _one(text: str) -> str:
    return printable(text, one_line=True)


def call_renderables(block: dict[str, Any], status: str, expanded: bool) -> list[Text]:
    """A tool call: ``▸ name  status  its arguments`` on one line, or unfolded."""
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append("▾ " if expanded else "▸ ", style="dim")
    line.append(_one(str(block.get("name") or "tool")), style="bold")
    _status(line, status)
    arguments = str(block.get("arguments", ""))
    if not expanded:
        line.append(f"  {_one(arguments_preview(arguments, PREVIEW_CHARS))}", style="dim")
        return [line]
    return [line, Text(printable(arguments_whole(arguments)), style="")]


def result_renderables(block: dict[str, Any], expanded: bool) -> list[Text]:
    """A tool result: ``↳ name  status · its first line (+n lines)``, or its output whole."""
    output = "\n".join(str(b.get("text") or b.get("placeholder") or "")
                       for b in block.get("content", []))
    status = FAILED if block.get("isError") else OK
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append("  ▾ ↳ " if expanded else "  ▸ ↳ ", style="dim")
    line.append(_one(str(block.get("name") or "tool")), style="dim bold")
    _status(line, status)
    if expanded:
        return [line, Text(printable(output), style="dim")]
    lines = [x for x in output.splitlines() if x.strip()]
    if lines:
        line.append(f" · {_one(lines[0].strip())}", style="dim")
    if len(lines) > 1:
        line.append(f"  (+{len(lines) - 1} lines)", style="dim italic")
    return [line]


def conversation_renderable(message: dict[str, Any], now: Clock, hit: bool = False,
                            palette: Palette = DEFAULT_PALETTE, statuses: Sequence[str] = (),
                            expanded: bool = False) -> Group:
    """One message of the conversation screen; ``statuses``: those of its tool calls, in
    order ("" where not known yet)."""
    blocks: list[Text] = []
    calls = 0
    for block in message.get("content", []):
        kind = block.get("type")
        if kind == "toolCall":
            status = statuses[calls] if calls < len(statuses) else ""
            calls += 1
            blocks += call_renderables(block, status, expanded)
        elif kind == "toolResult":
            blocks += result_renderables(block, expanded)
        else:
            blocks += block_renderables(block)
    return message_renderable(message, now, hit, palette, blocks=blocks)
