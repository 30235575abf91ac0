"""The usage view (``u`` from the search screen): the last 30 days of tokens as a chart, one
bar per UTC day, and the totals by agent and by model, as the caller may see them
(``core.usage.usage_report``, the sums ``backscroll usage`` prints).

The chart is Textual's ``Sparkline``: thirty bars read at a glance (which days were busy);
the numbers are in the tables under it. Days without usage are bars of zero height.
"""

from __future__ import annotations

from typing import Callable

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Sparkline, Static
from textual.worker import Worker

from backscroll.core.errors import BackscrollError
from backscroll.core.state import StateDir
from backscroll.core.usage import UsageReport, days_between, tokens, usage_report
from backscroll.core.visibility import Caller

from .. import keys
from ..amounts import cost_text, tokens_text
from ..guard import while_shown
from ..messages import UsageRead
from ..text import Clock, shown

CHART_DAYS = 30
BY = ("day", "agent", "model")

Reader = Callable[[str], UsageReport]  # by -> the report of the last CHART_DAYS days


def core_reader(state: StateDir, caller: Caller, now: Clock) -> Reader:
    """The reports as the core gives them to ``caller`` (its visibility), the window ending
    today by the browser's clock."""
    return lambda by: usage_report(state, caller, since=f"{CHART_DAYS - 1}d", by=by,
                                   now_ms=int(now() * 1000))


def daily_tokens(report: UsageReport) -> list[int]:
    """Every day of the report's window, in order, with its tokens (0 for a day without)."""
    found = {line.key: tokens(line.usage) for line in report.lines}
    return [found.get(day, 0) for day in days_between(report.since_day, report.until_day)]


def totals_table(report: UsageReport, title: str) -> Table:
    table = Table(title=title, title_justify="left", expand=True, box=None, padding=(0, 2, 0, 0))
    table.add_column(report.by, ratio=1, overflow="ellipsis", no_wrap=True)
    for column in ("in", "out", "cache read", "cache write", "cost"):
        table.add_column(column, justify="right", no_wrap=True)
    for line in report.lines:
        name = Text(shown(line.key)) if line.key is not None else Text("(none)", style="dim")
        table.add_row(name, *(tokens_text(n) for n in line.usage[:4]), cost_text(line.usage.cost))
    return table


class UsageScreen(Screen[None]):
    BINDINGS = keys.bindings(keys.USAGE)

    def __init__(self, read: Reader, who: str) -> None:
        super().__init__()
        self.read = read
        self.who = who
        self.reports: dict[str, UsageReport] | None = None

    def compose(self) -> ComposeResult:
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(" usage ", style="bold reverse")
        title.append(f" the last {CHART_DAYS} days (UTC) · tokens per day · as {shown(self.who)}")
        yield Static(title, id="usage-title")
        with VerticalScroll(id="usage-body"):
            yield Static(Text("reading the usage…", style="dim"), id="usage-summary")
            yield Sparkline([], id="usage-chart")
            yield Static("", id="usage-axis")
            yield Static("", id="usage-tables")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#usage-chart", Sparkline).display = False
        self.load()

    @work(thread=True, exclusive=True, group="usage", exit_on_error=False)
    def load(self) -> None:
        try:
            self.post_message(UsageRead({by: self.read(by) for by in BY}))
        except BackscrollError as err:  # one sentence, never a traceback
            self.post_message(UsageRead(None, str(err)))

    @while_shown
    def on_usage_read(self, message: UsageRead) -> None:
        summary = self.query_one("#usage-summary", Static)
        if message.reports is None:
            summary.update(Text(message.error or "", style="red"))
            return
        self.reports = days = message.reports
        by_day = days["day"]
        series = daily_tokens(by_day)
        total = by_day.total
        line = Text()
        line.append(f"{tokens_text(tokens(total))} tokens", style="bold")
        line.append(f" · {cost_text(total.cost)} · busiest day "
                    f"{tokens_text(max(series, default=0))} tokens")
        for warning in by_day.warnings:
            line.append(f"\n{warning}", style="yellow")
        if not by_day.lines:
            line = Text(f"no usage recorded from {by_day.since_day} through {by_day.until_day}",
                        style="dim")
        summary.update(line)
        chart = self.query_one("#usage-chart", Sparkline)
        chart.data = series
        chart.display = bool(by_day.lines)
        axis = Text(no_wrap=True)
        axis.append(by_day.since_day, style="dim")
        axis.append(" … ", style="dim")
        axis.append(by_day.until_day, style="dim")
        self.query_one("#usage-axis", Static).update(axis if by_day.lines else "")
        tables = [totals_table(days["agent"], "by agent"), Text(""),
                  totals_table(days["model"], "by model")]
        self.query_one("#usage-tables", Static).update(Group(*tables) if by_day.lines else "")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_failure(event)  # type: ignore[attr-defined]

    def action_close(self) -> None:
        self.dismiss(None)
