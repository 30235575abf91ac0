"""The export dialog: a format, a path, and whether an existing file may be replaced.

It does no I/O (not even a check that the file exists): it answers with an ``ExportChoice``
and the app's worker calls ``core.export.write_export``, which refuses an existing file
unless ``overwrite`` is set, in one sentence the app shows as a notification.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, RadioButton, RadioSet, Static

from backscroll.core.export import EXTENSIONS
from backscroll.core.redact import redact

from .. import keys
from ..text import shown


@dataclass(frozen=True)
class ExportChoice:
    fmt: str  # markdown | json | html
    path: str
    overwrite: bool = False  # replace the file if it exists


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def default_export_path(session_key: str, fmt: str = "markdown") -> str:
    """``./agent-main-telegram-group-42.md`` for ``agent:main:telegram:group:42``."""
    name = _UNSAFE.sub("-", redact(session_key)).strip("-.") or "conversation"
    return f"./{name}{EXTENSIONS[fmt]}"


class ExportScreen(ModalScreen[ExportChoice | None]):
    """Choose a format and a path for the redacted export of one conversation."""

    BINDINGS = keys.bindings(keys.EXPORT)

    def __init__(self, session_key: str) -> None:
        super().__init__()
        self.session_key = session_key

    def compose(self) -> ComposeResult:
        with Vertical(id="export-dialog", classes="dialog"):
            title = Text("Export ", style="bold")
            title.append(shown(self.session_key), style="bold cyan")
            yield Static(title, classes="dialog-title")
            yield Static(
                Text("The whole conversation, tools included, redacted.", style="dim"),
                classes="dialog-help",
            )
            with RadioSet(id="export-format"):
                yield RadioButton("Markdown", value=True, id="export-markdown")
                yield RadioButton("JSON", id="export-json")
                yield RadioButton("HTML (one page, works offline)", id="export-html")
            yield Input(default_export_path(self.session_key), id="export-path")
            yield Checkbox("overwrite the file if it exists", value=False, id="export-overwrite")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Export", variant="primary", id="export-ok")
                yield Button("Cancel", id="export-cancel")

    def on_mount(self) -> None:
        self.query_one("#export-path", Input).focus()

    @property
    def fmt(self) -> str:
        for fmt in ("json", "html"):
            if self.query_one(f"#export-{fmt}", RadioButton).value:
                return fmt
        return "markdown"

    @on(RadioSet.Changed, "#export-format")
    def _format_changed(self) -> None:
        """A default path follows the format; a path the person typed stays."""
        path_input = self.query_one("#export-path", Input)
        if path_input.value in {default_export_path(self.session_key, f) for f in EXTENSIONS}:
            path_input.value = default_export_path(self.session_key, self.fmt)

    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#export-ok")
    def _submit(self) -> None:
        path = self.query_one("#export-path", Input).value.strip()
        if not path:
            self.notify("Type a path to write the export to.", severity="warning")
            return
        overwrite = self.query_one("#export-overwrite", Checkbox).value
        self.dismiss(ExportChoice(self.fmt, path, overwrite))

    @on(Button.Pressed, "#export-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
