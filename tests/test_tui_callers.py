"""The browser's caller ("view as") when its session goes away: nothing of an earlier answer
stays on screen, one sentence says why (not a notification per keystroke)."""

from __future__ import annotations

from textual.widgets import Static

from backscroll.core.state import StateDir
from backscroll.tui.cli import main
from backscroll.tui.screens import ViewAsScreen

from .test_tui import add_session, app_for, count_text, type_query, until

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
        app.search_input.value = ""
        app.search_input.focus()
        await type_query(pilot, app, "latency")
        assert {r.session_key for r in app.results.results} == {ALPHA}

        assert main(["--state-dir", str(convo.path), "delete", ALPHA]) == 0
        app.search_input.value = ""
        await pilot.press(*"latency")  # a search per keystroke, each refused
        error = app.search_screen.query_one("#search-error", Static)
        await until(pilot, lambda: app.results.option_count == 0
                    and "does not exist" in str(error.content))
        await pilot.pause(0.3)
        assert count_text(app) == "nothing to show as this caller"
        assert "Latency" not in app.history.plain_text()
        # said under the bar: the only notification is the one of the switch
        assert [n.message for n in app._notifications] == [f"searching as {ALPHA} (tree)"]

        app.search_input.value = ""  # the home list: refused the same way
        await until(pilot, lambda: app.last_request is None and app.results.option_count == 0
                    and "does not exist" in str(error.content))
        assert count_text(app) == "nothing to show as this caller"
        assert len(app._notifications) == 1
