"""While typing, the browser asks for the rows that fill the list; once typing pauses, the full
page. What stays on screen is the core's own answer for the whole text (docs/browser.md,
Search as you type)."""

from __future__ import annotations

from typing import Any

import pytest

from backscroll.core.grouped import conversations_search
from backscroll.core.search import LIMIT_MAX, sessions_search
from backscroll.core.state import StateDir
from backscroll.tui.screens import search as search_screen
from backscroll.tui.widgets import row_identity

from .test_tui import add_session, app_for, until

pytestmark = pytest.mark.slow  # a Pilot test (docs/development.md)

SESSIONS = 40  # more than a full page of conversations, and of messages


def many_matches(state: StateDir) -> None:
    for i in range(SESSIONS):
        add_session(state, f"agent:main:s{i:03d}", [
            ("user", f"deploy the service number {i} to staging"),
            ("assistant", f"deployed build {i}; the rollback plan is ready"),
        ], start_ms=i * 3_600_000)


def recorder(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The requests the screen's searches were made with, in order."""
    requests: list[Any] = []
    for name, search in (("sessions_search", sessions_search),
                         ("conversations_search", conversations_search)):
        def recorded(state: Any, request: Any, caller: Any, on_pending: Any = None,
                     search: Any = search) -> Any:
            requests.append(request)
            return search(state, request, caller, on_pending=on_pending)

        monkeypatch.setattr(search_screen, name, recorded)
    return requests


@pytest.mark.parametrize("grouped", [True, False], ids=["grouped", "per message"])
async def test_typing_gets_a_first_page_then_the_core_answer_for_the_whole_text(
        state: StateDir, monkeypatch: pytest.MonkeyPatch, grouped: bool) -> None:
    many_matches(state)
    requests = recorder(monkeypatch)
    app = app_for(state, sources=False, grouped=grouped)
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: app.status is not None)
        screen = app.search_screen
        for char in "deplo":
            await pilot.press(char)
        await until(pilot, lambda: screen.results.shown_for == "deplo")
        first = [r for r in requests if r.query == "deplo"][0]
        assert first.limit < LIMIT_MAX  # a keystroke: the rows that fill the list
        await until(pilot, lambda: screen.last_request.limit == LIMIT_MAX
                    and screen.results.shown_for == "deplo" and not screen.scheduler.busy)
        full = screen.request_for("deplo")
        assert full.limit == LIMIT_MAX
        if grouped:
            expected = [row_identity(c) for c in
                        conversations_search(state, full, app.caller).conversations]
        else:
            expected = [row_identity(r) for r in sessions_search(state, full, app.caller).results]
        assert len(expected) == LIMIT_MAX
        assert [row_identity(r) for r in screen.results.rows] == expected


async def test_the_full_page_keeps_the_row_a_person_moved_to(state: StateDir) -> None:
    many_matches(state)
    app = app_for(state, sources=False)
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: app.status is not None)
        screen = app.search_screen
        screen.scheduler.settle = 2.0  # time to move on the first page, however busy the machine
        await pilot.press(*"deploy")
        await until(pilot, lambda: screen.results.shown_for == "deploy")
        assert screen.last_request.limit < LIMIT_MAX and screen.scheduler.full_page_due
        await pilot.press("down", "down")
        chosen = row_identity(screen.results.current)
        await until(pilot, lambda: screen.last_request.limit == LIMIT_MAX)
        assert len(screen.results.rows) == LIMIT_MAX
        assert row_identity(screen.results.current) == chosen
