"""A conversation with one message marked (the preview pane, and the conversation screen's
body), and the pure functions that turn a history's messages into Rich text.

Transcript text is data: every text goes through ``printable`` into a ``rich.text.Text``,
never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from backscroll.core.history import HistoryResponse

from ..text import DEFAULT_PALETTE, ROLE_STYLES, Clock, Palette, ago, plain_of, printable, shown, utc

TOOL_LINE_CHARS = 160


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


def message_renderable(message: dict[str, Any], now: Clock, hit: bool = False,
                       palette: Palette = DEFAULT_PALETTE, position: str = "",
                       blocks: list[Text] | None = None) -> Group:
    """One message: a header (role, time, id; ``position`` such as "message 3 of 9") then its
    blocks (drawn here unless given: tool traffic is one dim line)."""
    if blocks is None:
        blocks = [r for b in message.get("content", []) for r in block_renderables(b)]
    role = str(message.get("role", "?"))
    if role not in ROLE_STYLES:  # tool results: compact, no header
        return Group(*blocks)
    head = Text(no_wrap=True, overflow="ellipsis")
    head.append("▶ " if hit else "", style=palette.hit)
    head.append(role, style=palette.role(role))
    ts = int(message.get("timestamp") or 0)
    head.append(f"  {ago(ts, now)} · {utc(ts)}  ", style="dim")
    head.append(shown(message.get("id") or ""), style="dim")
    if position:
        head.append(f"  {position}", style="dim")
    if not blocks:
        blocks = [Text("(nothing to show)", style="dim italic")]
    return Group(head, *blocks)


def messages_renderable(messages: Sequence[dict[str, Any]], now: Clock,
                        palette: Palette = DEFAULT_PALETTE) -> RenderableType:
    parts: list[RenderableType] = []
    for message in messages:
        if parts and message.get("role") in ROLE_STYLES:  # a tool result stays by its call
            parts.append(Text(""))
        parts.append(message_renderable(message, now, palette=palette))
    return Group(*parts)


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
        self.palette = DEFAULT_PALETTE
        self._last: tuple[HistoryResponse, str | None, Clock] | None = None
        # A hit drawn but not yet scrolled to with its laid-out place: the after-refresh
        # callback can run before the parts' Layout messages reach the screen (another task),
        # so each screen layout tries again until the hit has a place.
        self._hit_pending = False

    def compose(self) -> ComposeResult:
        yield Static(Text(self.placeholder, style="dim"), id="history-head", classes="history-part")
        yield Static("", id="history-before", classes="history-part")
        yield Static("", id="history-hit", classes="history-part hit")
        yield Static("", id="history-after", classes="history-part")

    def show_note(self, text: str | Text, style: str = "dim") -> None:
        self.shown = None
        self._last = None
        self._hit_pending = False
        note = text if isinstance(text, Text) else Text(text, style=style)
        self.query_one("#history-head", Static).update(note)
        for part in ("#history-before", "#history-after"):
            self.query_one(part, Static).update("")
        self.query_one("#history-hit", Static).display = False

    def restyle(self, palette: Palette) -> None:
        """The theme changed: draw the conversation shown in its colours."""
        self.palette = palette
        if self._last is not None:
            self.show_history(*self._last)

    def show_history(self, response: HistoryResponse, hit_id: str | None, now: Clock) -> None:
        """The conversation around ``hit_id``, scrolled to it; without one, its end."""
        self._last = (response, hit_id, now)
        messages = response.messages
        index = next((i for i, m in enumerate(messages) if m.get("id") == hit_id), None)
        head = Text(no_wrap=True, overflow="ellipsis")
        head.append(shown(response.session_key), style="bold cyan")
        head.append(f"  {shown(response.session_id)}", style="dim")
        if response.has_more:
            head.append("\n… older messages not shown", style="dim")
        if index is None:
            before, after = messages, []
        else:
            before, after = messages[:index], messages[index + 1 :]
        before_r = messages_renderable(before, now, self.palette)
        after_r = messages_renderable(after, now, self.palette)
        if response.has_newer:
            after_r = Group(after_r, Text("\n… newer messages not shown", style="dim"))
        self.query_one("#history-head", Static).update(head)
        self.query_one("#history-before", Static).update(before_r)
        self.query_one("#history-after", Static).update(after_r)
        hit = self.query_one("#history-hit", Static)
        if index is None:
            hit.display = False
        else:
            hit.update(message_renderable(messages[index], now, hit=True, palette=self.palette))
            hit.display = True
        self.shown = (response.session_key, hit_id or "")
        self.scroll_home(animate=False)
        self._hit_pending = index is not None
        if index is not None:
            self.call_after_refresh(self.scroll_to_hit)
        elif hit_id is None:
            self.call_after_refresh(self.scroll_end, animate=False, immediate=True)

    def on_mount(self) -> None:
        self.screen.screen_layout_refresh_signal.subscribe(self, self._laid_out)

    def _laid_out(self, screen: object) -> None:
        if self._hit_pending:
            self.scroll_to_hit()

    def scroll_to_hit(self) -> None:
        hit = self.query_one("#history-hit", Static)
        if not hit.display:
            self._hit_pending = False
        elif hit.virtual_region.height:  # laid out: its place is known
            self._hit_pending = False
            self.scroll_to_center(hit, animate=False, origin_visible=True, immediate=True)

    def plain_text(self) -> str:
        """What the pane shows, as plain text (tests assert on it)."""
        console_text = []
        for part in self.query(".history-part").results(Static):
            if part.display:
                console_text.append(plain_of(part.content))
        return "\n".join(console_text)
