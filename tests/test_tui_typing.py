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
