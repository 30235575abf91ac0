"""Filters a person can see: agent, role, source, project (the cwd of Claude Code and Codex
sessions) and a time range; for tool calls, a tool's name and failed calls only (setting
either switches the search to tool calls, as ``--tool`` and ``--failed`` imply ``--tools``;
the role applies to messages only). ``Filters`` is the state (the search screen keeps it, shows it as
labels in the status bar, and puts it into every request: the core applies it inside the
query); ``FiltersScreen`` is the dialog.

The dialog does no I/O: the choices (the agents and projects the caller may see) are handed
over. Each change applies at once (a ``FiltersChanged`` message), so the results behind the
dialog follow; ``escape`` closes it and the filters stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Checkbox, Input, Label, Select, Static

from backscroll.core.catalog import SOURCE_NAMES

from .. import keys
from ..messages import FiltersChanged
from ..text import cut_middle, shown

DAY_MS = 86_400_000
# (id, label, length in ms)
PERIODS: tuple[tuple[str, str, int], ...] = (
    ("1d", "last 24 hours", DAY_MS),
    ("7d", "last 7 days", 7 * DAY_MS),
    ("30d", "last 30 days", 30 * DAY_MS),
    ("90d", "last 90 days", 90 * DAY_MS),
    ("365d", "last year", 365 * DAY_MS),
)
ROLES = ("user", "assistant")
PROJECT_CHARS = 60


@dataclass(frozen=True)
class Filters:
    agent: str | None = None
    role: str | None = None
    source: str | None = None  # openclaw | claude-code | codex
    project: str | None = None  # a cwd
    period: str | None = None  # an id of PERIODS
    tool: str | None = None  # tool calls of this tool only (exact name, any ASCII case)
    failed: bool = False  # failed tool calls only

    @property
    def active(self) -> bool:
        return self != Filters()

    @property
    def of_tools(self) -> bool:
        """A filter only tool calls have (set: the search is one of tool calls)."""
        return self.tool is not None or self.failed

    def since_ms(self, now_s: float) -> int | None:
        length = next((ms for pid, _label, ms in PERIODS if pid == self.period), None)
        return None if length is None else int(now_s * 1000) - length

    def labels(self, tools: bool = False) -> list[str]:
        """How the status bar names each active filter that applies (``tools``: to a search
        of tool calls, else of messages)."""
        out = []
        if self.agent:
            out.append(f"agent {shown(self.agent)}")
        if self.role and not tools:
            out.append(f"{self.role} only")
        if tools and self.tool:
            out.append(f"tool {shown(self.tool)}")
        if tools and self.failed:
            out.append("failed only")
        if self.source:
            out.append(SOURCE_NAMES.get(self.source, self.source))
        if self.project:
            out.append(f"in {cut_middle(shown(self.project), 30)}")
        if self.period:
            out.append(next(label for pid, label, _ms in PERIODS if pid == self.period))
        return out


class FiltersScreen(ModalScreen[None]):
    """The filters, each a choice; every change is posted at once as ``FiltersChanged``."""

    BINDINGS = keys.bindings(keys.FILTERS)

    def __init__(self, filters: Filters, agents: Sequence[str],
                 projects: Sequence[tuple[str, int]]) -> None:
        super().__init__()
        self.filters = filters
        self.agents = list(agents)
        self.projects = list(projects)
        if filters.project and filters.project not in {p for p, _ in self.projects}:
            self.projects.insert(0, (filters.project, 0))

    def compose(self) -> ComposeResult:
        with Vertical(id="filters-dialog", classes="dialog"):
            title = Text("Filters", style="bold")
            title.append("  each change applies at once", style="dim")
            yield Static(title, classes="dialog-title")
            yield from self._row("agent", "Agent", [(shown(a), a) for a in self.agents])
            yield from self._row("role", "Role", [(r, r) for r in ROLES])
            yield from self._row("source", "Source", [(n, s) for s, n in SOURCE_NAMES.items()])
            projects = [(_project_prompt(path, count), path) for path, count in self.projects]
            yield from self._row("project", "Project", projects)
            yield from self._row("period", "Time", [(label, pid) for pid, label, _ms in PERIODS])
            with Horizontal(classes="filter-row"):
                yield Label("Tool", classes="filter-label")
                yield Input(self.filters.tool or "", placeholder="any (a tool's name: tool calls)",
                            compact=True, id="filter-tool")
            with Horizontal(classes="filter-row"):
                yield Label("", classes="filter-label")
                yield Checkbox("failed tool calls only", self.filters.failed, compact=True,
                               id="filter-failed")
            hints = keys.hint_line(self.app, ["filters.clear", "filters.close"])
            yield Static(Text(hints, style="dim"), classes="dialog-keys")

    def _row(self, name: str, label: str, options: list[tuple[Any, str]]) -> ComposeResult:
        value = getattr(self.filters, name)
        with Horizontal(classes="filter-row"):
            yield Label(label, classes="filter-label")
            yield Select(options, prompt="any", value=value if value is not None else Select.NULL,
                         type_to_search=False, compact=True, id=f"filter-{name}")

    def on_mount(self) -> None:
        self.query_one("#filter-agent", Select).focus()

    @on(Select.Changed)
    def _changed(self, event: Select.Changed) -> None:
        name = (event.select.id or "").removeprefix("filter-")
        value = None if event.value is Select.NULL else event.value
        if getattr(self.filters, name, None) == value:
            return
        self.filters = replace(self.filters, **{name: value})
        self.post_message(FiltersChanged(self.filters))

    @on(Input.Changed, "#filter-tool")
    def _tool_changed(self, event: Input.Changed) -> None:
        self._set(tool=event.value.strip() or None)

    @on(Checkbox.Changed, "#filter-failed")
    def _failed_changed(self, event: Checkbox.Changed) -> None:
        self._set(failed=event.value)

    def _set(self, **change: Any) -> None:
        changed = replace(self.filters, **change)
        if changed != self.filters:
            self.filters = changed
            self.post_message(FiltersChanged(self.filters))

    def action_clear(self) -> None:
        for select in self.query(Select).results(Select):
            select.clear()
        self.query_one("#filter-tool", Input).value = ""
        self.query_one("#filter-failed", Checkbox).value = False
        if self.filters.active:
            self.filters = Filters()
            self.post_message(FiltersChanged(self.filters))

    def action_close(self) -> None:
        self.dismiss(None)


def _project_prompt(path: str, count: int) -> Text:
    prompt = Text(cut_middle(shown(path), PROJECT_CHARS))
    if count:
        prompt.append(f"  {count:,}", style="dim")
    return prompt
