"""The browser when a search cannot run: a "view as" caller whose session goes away (nothing
of an earlier answer stays on screen), a server gone away (the earlier answer stays, marked as
such); one line under the bar says why, not a notification per keystroke."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from backscroll.core.errors import Unreachable
from backscroll.core.ingest import delete_session
from backscroll.core.state import StateDir
from backscroll.tui.screens import ViewAsScreen

from .test_tui import add_session, app_for, count_text, type_query, until

pytestmark = pytest.mark.slow  # Pilot tests (docs/development.md)

ALPHA = "agent:main:subagent:alpha"


async def test_a_caller_deleted_while_the_browser_views_as_it_shows_nothing(state: StateDir) -> None:
    add_session(state, "agent:main:main", [("user", "Please deploy checkout-web.")])
    add_session(state, ALPHA, [("user", "Investigate the deploy latency graphs."),
                               ("assistant", "Latency rose after the deploy at noon.")],
                spawned_by="agent:main:main", start_ms=600_000)
    convo = state
    app = app_for(convo)
    async with app.run_test(size=(120, 35)) as pilot:
        await pilot.press("tab", "v")
        await until(pilot, lambda: isinstance(app.screen, ViewAsScreen))
        await pilot.press("slash", *"alpha", "enter")
        await until(pilot, lambda: app.caller.key == ALPHA)
        app.search_screen.search_input.value = ""
        app.search_screen.search_input.focus()
        await type_query(pilot, app, "latency")
        assert {r.session_key for r in app.search_screen.results.results} == {ALPHA}

        delete_session(convo, ALPHA)  # as `backscroll delete` does, from another process
        app.search_screen.search_input.value = ""
        await pilot.press(*"latency")  # a search per keystroke, each refused
        error = app.search_screen.query_one("#search-error", Static)
        await until(pilot, lambda: app.search_screen.results.option_count == 0
                    and "does not exist" in str(error.content))
        await pilot.pause(0.3)
        assert count_text(app) == "nothing to show as this caller"
        assert "Latency" not in app.search_screen.history.plain_text()
        # said under the bar: no notification but the one of the switch (which may already
        # have timed out on a loaded machine)
        assert {n.message for n in app._notifications} <= {f"searching as {ALPHA} (tree)"}

        app.search_screen.search_input.value = ""  # the home list: refused the same way
        await until(pilot, lambda: app.search_screen.last_request is None
                    and app.search_screen.results.option_count == 0
                    and "does not exist" in str(error.content))
        assert count_text(app) == "nothing to show as this caller"
        assert len(app._notifications) == 1


async def test_a_search_the_storage_cannot_answer_keeps_the_last_answer_marked(
        state: StateDir, monkeypatch: pytest.MonkeyPatch) -> None:
    from backscroll.tui.screens import search as search_screen

    add_session(state, "agent:main:main", [("user", "Please deploy checkout-web.")])
    app = app_for(state)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_query(pilot, app, "deploy")
        assert len(app.search_screen.results.results) == 1

        def server_gone(*args, **kwargs):
            raise Unreachable("cannot connect to postgresql://db.example/backscroll: connection "
                              "refused " + "and more detail " * 10)

        monkeypatch.setattr(search_screen, "sessions_search", server_gone)
        await pilot.press(*" checkout")
        error = app.search_screen.query_one("#search-error", Static)
        await until(pilot, lambda: "cannot connect" in str(error.content))
        assert count_text(app) == "below: the answer for deploy"
        assert len(app.search_screen.results.results) == 1 and not app._notifications
        assert error.size.height == 1  # one line, however long the sentence


async def test_a_sync_that_fails_leaves_no_progress_behind(state: StateDir) -> None:
    """A reader's browser syncs the local sources on open and is refused: the status bar must
    not say "syncing 0/3 files" for the rest of the run."""
    from backscroll.core.sources.sync import SyncReport
    from backscroll.tui.messages import SourcesSynced, SyncProgress

    add_session(state, "agent:main:main", [("user", "Please deploy checkout-web.")])
    app = app_for(state, sources=False)  # the sync's messages come from this test alone
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.status is not None)
        app.post_message(SyncProgress(0, 3))
        await until(pilot, lambda: "syncing 0/3 files" in app.search_screen.status_bar.plain_text())
        app.post_message(SourcesSynced(SyncReport(sources=1, problems=[
            "the database role may not do this (permission denied for table sessions)"])))
        await until(pilot, lambda: "syncing" not in app.search_screen.status_bar.plain_text())
