"""The whole conversation of a result, scrolled to the hit. ``escape`` goes back; ``e`` asks
the app to export it (an ``ExportRequested`` message)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Static

from backscroll.core.history import HistoryResponse

from .. import keys
from ..messages import ExportRequested
from ..text import Clock
from ..widgets import HistoryPane


class ConversationScreen(Screen[None]):
    BINDINGS = keys.bindings(keys.CONVERSATION)

    def __init__(self, response: HistoryResponse, hit_id: str | None, now: Clock) -> None:
        super().__init__()
        self.response = response
        self.hit_id = hit_id
        self.now = now

    def compose(self) -> ComposeResult:
        count = len(self.response.messages)
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(" conversation ", style="bold reverse")
        title.append(f"  {count} message{'s' if count != 1 else ''}", style="dim")
        hints = keys.hint_line(self.app, ["conversation.back", "conversation.hit",
                                          "conversation.export"])
        title.append(f"  {hints}", style="dim")
        yield Static(title, id="conversation-title")
        yield HistoryPane(id="conversation")
        yield Footer()

    def on_mount(self) -> None:
        pane = self.query_one(HistoryPane)
        pane.show_history(self.response, self.hit_id, self.now)
        pane.focus()

    def action_back(self) -> None:
        self.dismiss(None)

    def action_scroll_down(self) -> None:
        self.query_one(HistoryPane).scroll_down(animate=False)

    def action_scroll_up(self) -> None:
        self.query_one(HistoryPane).scroll_up(animate=False)

    def action_top(self) -> None:
        self.query_one(HistoryPane).scroll_home(animate=False)

    def action_bottom(self) -> None:
        self.query_one(HistoryPane).scroll_end(animate=False)

    def action_page_down(self) -> None:
        self.query_one(HistoryPane).scroll_page_down(animate=False)

    def action_page_up(self) -> None:
        self.query_one(HistoryPane).scroll_page_up(animate=False)

    def action_to_hit(self) -> None:
        self.query_one(HistoryPane).scroll_to_hit()

    def action_export(self) -> None:
        self.post_message(ExportRequested(self.response.session_key))
