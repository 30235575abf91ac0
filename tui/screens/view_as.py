"""The "view as" picker: the operator, or any session (incognito ones too) with its policy.

It does no I/O: the app lists the sessions in a worker and hands them over; the screen
answers with ``dismiss(ViewAsChoice)``. An incognito session is listed dimmed and marked: as
with ``--as``, searching as it works, but it never finds incognito sessions, its own
included (docs/visibility.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Checkbox, Input, OptionList, Static
from textual.widgets.option_list import Option

from backscroll.core.catalog import SessionSummary
from backscroll.core.visibility import Caller

from .. import keys
from ..text import Clock, ago, shown

OPERATOR_OPTION = "operator"


@dataclass(frozen=True)
class ViewAsChoice:
    key: str | None  # None: the operator
    sandboxed: bool = False
    host: str | None = None  # the session's host (a team server holds a key per host)


class ViewAsScreen(ModalScreen[ViewAsChoice | None]):
    """Pick the caller every search runs as: the operator, or a session with its policy."""

    BINDINGS = keys.bindings(keys.VIEW_AS)

    def __init__(self, sessions: Sequence[SessionSummary], current: Caller, now: Clock) -> None:
        super().__init__()
        self.sessions = list(sessions)
        self.current = current
        self.now = now

    def compose(self) -> ComposeResult:
        app = self.app
        with Vertical(id="view-as-dialog", classes="dialog"):
            title = Text("View as", style="bold")
            title.append("  every search then runs as this caller, with its policy", style="dim")
            yield Static(title, classes="dialog-title")
            filter_keys = keys.keys_text(app, ["view_as.filter"])
            yield Input(placeholder=f"filter sessions ({filter_keys})", id="view-as-filter")
            yield OptionList(id="view-as-list")
            yield Checkbox(
                f"{keys.entry('view_as.sandbox').description} "
                f"({keys.keys_text(app, ['view_as.sandbox'])})",
                value=self.current.policy.sandboxed,
                id="view-as-sandbox",
            )
            hints = keys.hint_line(app, ["view_as.pick", "view_as.sandbox", "view_as.filter",
                                         "view_as.cancel"])
            yield Static(Text(hints, style="dim"), classes="dialog-keys")

    def on_mount(self) -> None:
        self._fill("")
        self.query_one("#view-as-list", OptionList).focus()

    def _fill(self, needle: str) -> None:
        listing = self.query_one("#view-as-list", OptionList)
        needle = needle.strip().lower()
        options: list[Option] = []
        several = _keys_on_several_hosts(self.sessions)
        self._choices: dict[str, tuple[str, str]] = {}
        if not needle or needle in OPERATOR_OPTION:
            prompt = Text("operator", style="bold")
            prompt.append("  every session of every agent", style="dim")
            options.append(Option(prompt, id=OPERATOR_OPTION))
        for depth, session in session_tree(self.sessions):
            label = session.label or ""  # already redacted
            if needle and needle not in shown(session.key) and needle not in label.lower():
                continue
            # A key two hosts hold is two options (ids are unique): named by key and host.
            option_id = f"{session.key} {session.host}" if session.key in several else session.key
            self._choices[option_id] = (session.key, session.host)
            options.append(Option(session_prompt(session, depth, bool(needle), self.now,
                                                 session.key in several), id=option_id))
        listing.set_options(options)
        current = self.current.key or OPERATOR_OPTION
        if self.current.key in several:
            current = next((i for i, (key, host) in self._choices.items()
                            if key == self.current.key and host == self.current.host), current)
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
        key, host = self._choices.get(option.id or "", (None, ""))
        self.dismiss(ViewAsChoice(key, sandboxed and key is not None, host or None))

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


def session_prompt(session: SessionSummary, depth: int, flat: bool, now: Clock,
                   with_host: bool = False) -> Text:
    """One session: indented under its spawner (unless filtering), key (``with_host``: and
    its host), label, last activity; an incognito session dimmed and marked."""
    incognito = session.incognito
    prompt = Text(style="dim" if incognito else "")
    if depth and not flat:
        prompt.append("  " * (depth - 1) + " ↳ ", style="dim")
    prompt.append(shown(session.key), style="cyan" if incognito else "bold cyan")
    if with_host:
        prompt.append(f" on {shown(session.host or '(unknown host)')}", style="cyan")
    if session.label:
        prompt.append(f"  {shown(session.label)}")
    if incognito:
        prompt.append("  incognito", style="italic")
    prompt.append(f"  {ago(session.updated_at, now)}", style="dim")
    return prompt


def session_tree(sessions: Sequence[SessionSummary]) -> list[tuple[int, SessionSummary]]:
    """(depth, session) in tree order: agents by name, each agent's roots newest first, every
    session followed by the sessions it spawned."""
    by_key = {(s.host, s.key) for s in sessions}  # links stay within a host
    children: dict[tuple[str, str] | None, list[SessionSummary]] = {}
    for session in sessions:
        parent = (session.host, session.spawned_by or "")
        children.setdefault(parent if parent in by_key else None, []).append(session)
    for kids in children.values():
        kids.sort(key=lambda s: (s.agent, -s.updated_at, s.key, s.host))
    out: list[tuple[int, SessionSummary]] = []
    seen: set[tuple[str, str]] = set()

    def walk(session: SessionSummary, depth: int) -> None:
        if (session.host, session.key) in seen:  # a spawn cycle in bad data: show each once
            return
        seen.add((session.host, session.key))
        out.append((depth, session))
        for child in children.get((session.host, session.key), []):
            walk(child, depth + 1)

    for root in children.get(None, []):
        walk(root, 0)
    for session in sessions:  # anything only reachable through a cycle
        if (session.host, session.key) not in seen:
            walk(session, 0)
    return out


def _keys_on_several_hosts(sessions: Sequence[SessionSummary]) -> set[str]:
    hosts: dict[str, set[str]] = {}
    for session in sessions:
        hosts.setdefault(session.key, set()).add(session.host)
    return {key for key, found in hosts.items() if len(found) > 1}
