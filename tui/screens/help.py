"""The keys, drawn from the key table through the app's current keymap (so a remapped key
shows its new name), with each binding's id for ``App.set_keymap``."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from .. import keys


class HelpScreen(ModalScreen[None]):
    BINDINGS = keys.bindings(keys.HELP)

    def compose(self) -> ComposeResult:
        self.sections = keys.help_sections(self.app)
        parts: list[RenderableType] = []
        for title, rows in self.sections:  # a table per section: its own key column width
            table = Table(box=None, show_header=False, padding=(0, 2, 0, 0), expand=True)
            table.add_column(style="bold cyan", no_wrap=True, min_width=12)
            table.add_column(ratio=1)
            table.add_column(style="dim", no_wrap=True, min_width=19)
            for keys_shown, description, binding_id in rows:
                table.add_row(Text(keys_shown), Text(description), Text(binding_id))
            parts += [Text(title, style="bold"), table, Text("")]
        palette = keys.first_key(self.app, "command_palette")
        close = keys.first_key(self.app, "help.close")
        with VerticalScroll(id="help-dialog", classes="dialog"):
            yield Static(Text("Keys", style="bold"), classes="dialog-title")
            yield Static(Group(*parts), id="help-keys")
            yield Static(
                Text(
                    "Queries: words are ANDed, \"double quotes\" make a phrase; while typing "
                    f"the last word matches as a prefix ({keys.first_key(self.app, 'match')} "
                    f"switches to exact). {palette} lists every command. The right column is "
                    f"each key's id for a keymap. {close} closes this.",
                    style="dim",
                ),
                classes="dialog-help",
            )

    def action_close(self) -> None:
        self.dismiss(None)

    def action_scroll_down(self) -> None:
        self.query_one("#help-dialog", VerticalScroll).scroll_down(animate=False)

    def action_scroll_up(self) -> None:
        self.query_one("#help-dialog", VerticalScroll).scroll_up(animate=False)
