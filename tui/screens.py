"""The browser's screens: the full conversation, and the modals (view as, export, help).

Screens do no I/O: the app loads what they show in workers and hands it to them, and they
answer with ``dismiss(value)`` or by posting a message, so each can be tested on a throwaway
host app.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import (
    Button,
    Checkbox,
    Footer,
    Input,
    OptionList,
    RadioButton,
    RadioSet,
    Static,
)
from textual.widgets.option_list import Option

from backscroll.core.catalog import SessionSummary
from backscroll.core.history import HistoryResponse
from backscroll.core.visibility import Caller

from .text import Clock, ago, printable
from .widgets import HistoryPane

OPERATOR_OPTION = "operator"


class ConversationScreen(Screen[None]):
    """The whole conversation of a result, scrolled to the hit. ``escape`` goes back."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="conversation.back"),
        Binding("j,down", "scroll_down", "Down", show=False, id="conversation.down"),
        Binding("k,up", "scroll_up", "Up", show=False, id="conversation.up"),
        Binding("g,home", "top", "Top", show=False, id="conversation.top"),
        Binding("G,end", "bottom", "Bottom", show=False, id="conversation.bottom"),
        Binding("space,pagedown", "page_down", "Page down", show=False, id="conversation.pgdn"),
        Binding("b,pageup", "page_up", "Page up", show=False, id="conversation.pgup"),
        Binding("h", "to_hit", "To hit", id="conversation.hit"),
        Binding("e", "export", "Export", id="conversation.export"),
    ]

    class ExportRequested(Message):
        def __init__(self, session_key: str) -> None:
            super().__init__()
            self.session_key = session_key

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
        title.append("  esc back · h to the hit · e export", style="dim")
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
        self.post_message(self.ExportRequested(self.response.session_key))


@dataclass(frozen=True)
class ViewAsChoice:
    key: str | None  # None: the operator
    sandboxed: bool = False


class ViewAsScreen(ModalScreen[ViewAsChoice | None]):
    """Pick the caller every search runs as: the operator, or a session with its policy."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="view_as.cancel"),
        Binding("x", "toggle_sandbox", "Sandbox", id="view_as.sandbox"),
        Binding("slash", "focus_filter", "Filter", id="view_as.filter"),
        Binding("j", "cursor_down", "Down", show=False, id="view_as.down"),
        Binding("k", "cursor_up", "Up", show=False, id="view_as.up"),
    ]

    def __init__(self, sessions: Sequence[SessionSummary], current: Caller, now: Clock) -> None:
        super().__init__()
        self.sessions = [s for s in sessions if not s.incognito]
        self.current = current
        self.now = now

    def compose(self) -> ComposeResult:
        with Vertical(id="view-as-dialog", classes="dialog"):
            title = Text("View as", style="bold")
            title.append("  every search then runs as this caller, with its policy", style="dim")
            yield Static(title, classes="dialog-title")
            yield Input(placeholder="filter sessions (/)", id="view-as-filter")
            yield OptionList(id="view-as-list")
            yield Checkbox(
                "sandboxed: sees only itself and what it spawned (x)",
                value=self.current.policy.sandboxed,
                id="view-as-sandbox",
            )
            yield Static(
                Text("enter pick · x sandbox · / filter · esc cancel", style="dim"),
                classes="dialog-keys",
            )

    def on_mount(self) -> None:
        self._fill("")
        self.query_one("#view-as-list", OptionList).focus()

    def _fill(self, needle: str) -> None:
        listing = self.query_one("#view-as-list", OptionList)
        needle = needle.strip().lower()
        options: list[Option] = []
        if not needle or needle in OPERATOR_OPTION:
            prompt = Text("operator", style="bold")
            prompt.append("  every session of every agent", style="dim")
            options.append(Option(prompt, id=OPERATOR_OPTION))
        for depth, session in session_tree(self.sessions):
            label = session.label or ""
            if needle and needle not in session.key and needle not in label.lower():
                continue
            prompt = Text()
            if depth and not needle:
                prompt.append("  " * (depth - 1) + " ↳ ", style="dim")
            prompt.append(printable(session.key, one_line=True), style="bold cyan")
            if label:
                prompt.append(f"  {printable(label, one_line=True)}")
            prompt.append(f"  {ago(session.updated_at, self.now)}", style="dim")
            options.append(Option(prompt, id=session.key))
        listing.set_options(options)
        current = self.current.key or OPERATOR_OPTION
        ids = [o.id for o in options]
        listing.highlighted = ids.index(current) if current in ids else (0 if ids else None)

    @on(Input.Changed, "#view-as-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    @on(Input.Submitted, "#view-as-filter")
    def _filter_submitted(self) -> None:
        self._pick()

    @on(OptionList.OptionSelected, "#view-as-list")
    def _selected(self) -> None:
        self._pick()

    def _pick(self) -> None:
        listing = self.query_one("#view-as-list", OptionList)
        option = listing.highlighted_option
        if option is None:
            return
        sandboxed = self.query_one("#view-as-sandbox", Checkbox).value
        key = None if option.id == OPERATOR_OPTION else option.id
        self.dismiss(ViewAsChoice(key, sandboxed and key is not None))

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_toggle_sandbox(self) -> None:
        self.query_one("#view-as-sandbox", Checkbox).toggle()

    def action_focus_filter(self) -> None:
        self.query_one("#view-as-filter", Input).focus()

    def action_cursor_down(self) -> None:
        self.query_one("#view-as-list", OptionList).action_cursor_down()

    def action_cursor_up(self) -> None:
        self.query_one("#view-as-list", OptionList).action_cursor_up()

    def key_down(self) -> None:
        # Arrows move the list also while the filter has the focus.
        if self.focused is self.query_one("#view-as-filter"):
            self.action_cursor_down()

    def key_up(self) -> None:
        if self.focused is self.query_one("#view-as-filter"):
            self.action_cursor_up()


def session_tree(sessions: Sequence[SessionSummary]) -> list[tuple[int, SessionSummary]]:
    """(depth, session) in tree order: agents by name, each agent's roots newest first, every
    session followed by the sessions it spawned."""
    by_key = {s.key: s for s in sessions}
    children: dict[str | None, list[SessionSummary]] = {}
    for session in sessions:
        parent = session.spawned_by if session.spawned_by in by_key else None
        children.setdefault(parent, []).append(session)
    for kids in children.values():
        kids.sort(key=lambda s: (s.agent, -s.updated_at, s.key))
    out: list[tuple[int, SessionSummary]] = []
    seen: set[str] = set()

    def walk(session: SessionSummary, depth: int) -> None:
        if session.key in seen:  # a spawn cycle in bad data: show each session once
            return
        seen.add(session.key)
        out.append((depth, session))
        for child in children.get(session.key, []):
            walk(child, depth + 1)

    for root in children.get(None, []):
        walk(root, 0)
    for session in sessions:  # anything only reachable through a cycle
        if session.key not in seen:
            walk(session, 0)
    return out


@dataclass(frozen=True)
class ExportChoice:
    fmt: str  # markdown | json
    path: str


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
EXTENSIONS = {"markdown": ".md", "json": ".json"}


def default_export_path(session_key: str, fmt: str = "markdown") -> str:
    """``./agent-main-telegram-group-42.md`` for ``agent:main:telegram:group:42``."""
    name = _UNSAFE.sub("-", session_key).strip("-.") or "conversation"
    return f"./{name}{EXTENSIONS[fmt]}"


class ExportScreen(ModalScreen[ExportChoice | None]):
    """Choose a format and a path for the redacted export of one conversation."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="export.cancel")]

    def __init__(self, session_key: str) -> None:
        super().__init__()
        self.session_key = session_key

    def compose(self) -> ComposeResult:
        with Vertical(id="export-dialog", classes="dialog"):
            title = Text("Export ", style="bold")
            title.append(printable(self.session_key, one_line=True), style="bold cyan")
            yield Static(title, classes="dialog-title")
            yield Static(
                Text("The whole conversation, tools included, redacted.", style="dim"),
                classes="dialog-help",
            )
            with RadioSet(id="export-format"):
                yield RadioButton("Markdown", value=True, id="export-markdown")
                yield RadioButton("JSON", id="export-json")
            yield Input(default_export_path(self.session_key), id="export-path")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Export", variant="primary", id="export-ok")
                yield Button("Cancel", id="export-cancel")

    def on_mount(self) -> None:
        self.query_one("#export-path", Input).focus()

    @property
    def fmt(self) -> str:
        return "json" if self.query_one("#export-json", RadioButton).value else "markdown"

    @on(RadioSet.Changed, "#export-format")
    def _format_changed(self) -> None:
        path_input = self.query_one("#export-path", Input)
        other = "markdown" if self.fmt == "json" else "json"
        if path_input.value == default_export_path(self.session_key, other):
            path_input.value = default_export_path(self.session_key, self.fmt)

    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#export-ok")
    def _submit(self) -> None:
        path = self.query_one("#export-path", Input).value.strip()
        if not path:
            self.notify("Type a path to write the export to.", severity="warning")
            return
        self.dismiss(ExportChoice(self.fmt, path))

    @on(Button.Pressed, "#export-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class HelpScreen(ModalScreen[None]):
    """The keys, from the bindings themselves (so a remapped key shows its new name)."""

    BINDINGS = [
        Binding("escape,question_mark,f1", "close", "Close", id="help.close"),
    ]

    def __init__(self, rows: Sequence[tuple[str, str]], key_display: Callable[[str], str]
                 | None = None) -> None:
        super().__init__()
        self.rows = list(rows)
        self.key_display = key_display or (lambda key: key)

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column()
        for keys, description in self.rows:
            shown = " ".join(self.key_display(k) for k in keys.split(","))
            table.add_row(Text(shown), Text(description))
        with Vertical(id="help-dialog", classes="dialog"):
            yield Static(Text("Keys", style="bold"), classes="dialog-title")
            yield Static(table, id="help-keys")
            yield Static(
                Text(
                    "Queries: words are ANDed, \"double quotes\" make a phrase; while typing "
                    "the last word matches as a prefix (m switches to exact). "
                    "ctrl+p lists every command. esc closes this.",
                    style="dim",
                ),
                classes="dialog-help",
            )

    def action_close(self) -> None:
        self.dismiss(None)


def help_rows() -> list[tuple[str, str]]:
    """(keys, what they do) for the help screen, in reading order."""
    return [
        ("/", "focus the search bar"),
        ("j,k,down,up", "move through the results"),
        ("enter", "open the whole conversation of the highlighted result"),
        ("escape", "one step back: close a dialog, leave the conversation, clear the search"),
        ("v", "view as: search as a chosen session (its visibility policy, sandbox on/off)"),
        ("s", "scope: all agents / the highlighted result's agent / its session"),
        ("o", "order: best match / newest first"),
        ("m", "match: prefix (while typing) / exact words"),
        ("y", "copy the highlighted excerpt"),
        ("e", "export the highlighted conversation (Markdown or JSON, redacted)"),
        ("h", "in a conversation: back to the hit"),
        ("ctrl+p", "command palette"),
        ("question_mark", "this help"),
        ("q", "quit"),
    ]
