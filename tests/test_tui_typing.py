"""Keys that arrive faster than the browser handles them (a terminal's burst, autorepeat, a
paste of keystrokes) edit the search bar in the order they were typed."""

from __future__ import annotations

import pytest
from textual import events

from backscroll.core.state import StateDir

from .test_tui import add_session, app_for, until

pytestmark = pytest.mark.slow  # a Pilot test (docs/development.md)


def burst(app, keys: list[str]) -> None:
    """Post every key at once, as the terminal driver does for a burst it read in one go."""
    for key in keys:
        char = key if len(key) == 1 else None
        app.post_message(events.Key(key, char))


async def test_a_burst_of_typing_deleting_and_typing_ends_with_the_last_query(state: StateDir) -> None:
    add_session(state, "agent:main:main", [("user", "the latency of the connection pool")])
    app = app_for(state, sources=False)
    first, second = "connection pool exhausted on edge latenc", "latency"
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.status is not None)
        burst(app, [*first, *["backspace"] * len(first), *second])
        await until(pilot, lambda: app.search_screen.search_input.value == second
                    and app.search_screen.results.shown_for == second, timeout=10)
        assert len(app.search_screen.results.rows) == 1
        burst(app, ["backspace"] * 3 + ["left", "left", *"XY", "end", *"cy"])
        await until(pilot, lambda: app.search_screen.search_input.value == "laXYtecy", timeout=10)


async def test_a_query_wider_than_the_bar_scrolls_it_to_the_cursor(state: StateDir) -> None:
    """The bar's virtual size is kept without laying the screen out (SearchBar): its
    horizontal scroll still follows the cursor."""
    add_session(state, "agent:main:main", [("user", "the latency of the connection pool")])
    app = app_for(state, sources=False)
    query = "connection pool exhausted on the edge proxy after the deploy"
    async with app.run_test(size=(40, 20)) as pilot:
        await until(pilot, lambda: app.status is not None)
        await pilot.press(*query.replace(" ", ""))
        bar = app.search_screen.search_input
        await until(pilot, lambda: bar.value == query.replace(" ", ""))
        await pilot.pause(0.1)
        assert bar.virtual_size.width == len(bar.value) + 1
        assert bar.scroll_x > 0
        assert bar.region.x <= bar.cursor_screen_offset.x < bar.region.right
