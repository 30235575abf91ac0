"""The browser shows a session's facts beside its conversation and the usage of the last 30
days as a chart (issue 26), from the hand-built fixture of tests/test_facts.py."""

from __future__ import annotations

import pytest
from textual.widgets import Sparkline, Static

from backscroll.core.facts import Usage
from backscroll.core.usage import UsageLine, UsageReport
from backscroll.tui.amounts import cost_text, duration_text, facts_summary, tokens_text
from backscroll.tui.screens import ConversationScreen, UsageScreen
from backscroll.tui.screens.usage import daily_tokens

from .test_facts import DAY2, FACTS_A, fill, ms
from .test_tui import app_for, rendered, type_query, until


def test_amounts_read_at_a_glance_and_unknown_is_a_dash() -> None:
    assert [tokens_text(n) for n in (None, 0, 950, 12_345, 4_560_000)] == [
        "-", "0", "950", "12.3k", "4.56M"]
    assert [cost_text(c) for c in (None, 0.0, 0.0042, 0.75, 1234.5)] == [
        "-", "$0", "$0.0042", "$0.75", "$1,234.50"]
    assert [duration_text(ms) for ms in (None, 59_000, 61_000, 3_600_000 * 3 + 60_000)] == [
        "-", "59.0 s", "1m 01s", "3h 01m"]
    line = facts_summary(FACTS_A)
    assert line.startswith("claude-x, gpt-y · 111 in · 26 out · 1k cache read · 50 cache write")
    assert "$0.75" in line and "3 tool calls (1 failed)" in line and "4 files edited" in line


def test_the_chart_has_a_bar_for_every_day_of_the_window() -> None:
    report = UsageReport("2026-11-01", "2026-11-04", "day",
                         [UsageLine("2026-11-02", Usage(10, 5, None, None, None)),
                          UsageLine("2026-11-04", Usage(1, None, 2, None, 0.5))],
                         Usage(11, 5, 2, None, 0.5), [])
    assert daily_tokens(report) == [0, 15, 0, 3]


@pytest.mark.slow
async def test_the_conversation_shows_its_facts_and_i_opens_them_all(state) -> None:
    fill(state)
    app = app_for(state)
    async with app.run_test(size=(140, 40)) as pilot:
        await type_query(pilot, app, "parser")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        panel = app.screen.query_one("#conversation-facts", Static)
        await until(pilot, lambda: panel.display and "claude-x" in rendered(panel))
        assert "3 tool calls (1 failed)" in rendered(panel)
        assert "/work/alpha/x.py" not in rendered(panel)  # one line: the files counted
        await pilot.press("i")
        await until(pilot, lambda: "/work/alpha/x.py" in rendered(panel))
        assert "src/new.rs" in rendered(panel)
        await pilot.press("i")
        await until(pilot, lambda: "/work/alpha/x.py" not in rendered(panel))


@pytest.mark.slow
async def test_u_opens_the_usage_chart_and_totals(state) -> None:
    fill(state)
    # the browser's clock on the fixture's second day: its two days end the 30-day window
    app = app_for(state, now=lambda: ms(DAY2, "12:00:00") / 1000)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.press("tab", "u")
        await until(pilot, lambda: isinstance(app.screen, UsageScreen))
        screen = app.screen
        await until(pilot, lambda: screen.reports is not None)
        chart = screen.query_one("#usage-chart", Sparkline)
        assert chart.display and len(chart.data) == 30
        assert list(chart.data)[-2:] == [107 + 20 + 1000 + 50, 11 + 6]
        tables = rendered(screen.query_one("#usage-tables", Static))
        assert "by agent" in tables and "by model" in tables and "claude-x" in tables
        assert "$0.75" in tables
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, UsageScreen))
