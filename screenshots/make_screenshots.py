"""Write the README's SVG screenshots of the browser, from the built-in demo only.

Builds the demo in a temporary directory (deterministic: fixed seed), drives the real app
headless with Pilot and saves one SVG per state next to this script:

    home.svg                the browser as it opens: recent conversations, the highlighted one's end
    grouped-results.svg     results grouped by conversation (hits, best hit) with its preview
    results-history.svg     one row per message (g), with the conversation around the hit
    conversation-hit.svg    a conversation at "hit 3 of 17", walked with n / N
    filters.svg             the filters dialog, its labels in the status bar
    view-as.svg             the "view as" picker
    indexing.svg            imported sessions being reconciled (results may be incomplete)
    help.svg                the keys
    usage.svg               the usage view (u): 30 days of tokens as a chart, totals by agent and model

    .venv/bin/python screenshots/make_screenshots.py [--out DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.widgets import Select

from backscroll.core.catalog import list_sessions
from backscroll.core.demo import build_demo
from backscroll.core.reconcile import reconcile_all
from backscroll.core.state import StateDir
from backscroll.core.status import StateStatus, state_status
from backscroll.core.storage import Progress
from backscroll.tui.app import BackscrollApp, make_app
from backscroll.tui.widgets import row_anchor, row_key

SIZE = (130, 36)
HITS_QUERY = "timeout"  # a demo conversation holds it 17 times: "hit 3 of 17"
HERE = Path(__file__).resolve().parent


async def until(pilot: Any, condition: Callable[[], bool], timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("the app did not reach the state to screenshot")
        await pilot.pause(0.02)
    await pilot.pause(0.15)


def previewed(app: BackscrollApp) -> bool:
    current = app.search_screen.results.current
    return current is not None and app.search_screen.history.shown == (row_key(current),
                                                         row_anchor(current) or "")


async def typed(pilot: Any, app: BackscrollApp, query: str) -> None:
    for char in query:
        await pilot.press("space" if char == " " else char)
    await until(pilot, lambda: app.search_screen.results.painted_for == query and previewed(app))


async def cleared(pilot: Any, app: BackscrollApp) -> None:
    app.search_screen.search_input.focus()
    app.search_screen.search_input.value = ""
    await until(pilot, lambda: app.search_screen.results.shown_for == "" and previewed(app))


def app_on(state: StateDir, clock: Callable[[], float], **options: Any) -> BackscrollApp:
    options.setdefault("auto_reconcile", False)
    options.setdefault("reconcile", lambda agent: None)
    options.setdefault("sources", False)  # the demo: never the transcripts of this machine
    return make_app(state, now=clock, **options)


async def shoot(state: StateDir, out: Path, clock: Callable[[], float]) -> list[Path]:
    written: list[Path] = []

    def save(app: BackscrollApp, name: str) -> None:
        path = out / name
        path.write_text(app.export_screenshot(title=f"backscroll · {name[:-4]}"), "utf-8")
        written.append(path)

    def reconciling(s: StateDir) -> StateStatus:
        """The real counts, with the imported sessions' reconciliation shown part way."""
        real = state_status(s)
        pending = sum(a.dirty for a in real.agents)
        agents = []
        for agent in real.agents:
            if agent.dirty:
                done = agent.dirty // 2
                progress = Progress("running", "demo", 1, 2001, done, agent.dirty, 640,
                                    None, "screenshot", 4_102_444_800_000)
                agent = replace(agent, progress=progress)
            agents.append(agent)
        assert pending, "the demo should leave imported sessions to reconcile"
        return replace(real, agents=agents)

    app = app_on(state, clock, status=reconciling)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.status is not None)
        app.search_screen.search_input.cursor_blink = False  # on in every shot, not by chance
        await typed(pilot, app, "deploy")
        await until(pilot, lambda: app.search_screen.search_indexing)
        save(app, "indexing.svg")

    reconcile_all(state)  # the other screenshots show the settled index

    app = app_on(state, clock)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.status is not None and bool(app.search_screen.results.rows))
        app.search_screen.search_input.cursor_blink = False  # on in every shot, not by chance
        await until(pilot, lambda: previewed(app))
        save(app, "home.svg")
        await typed(pilot, app, "connection pool")
        save(app, "grouped-results.svg")
        await pilot.press("tab", "g", "down")
        await until(pilot, lambda: app.search_screen.results.shown_for == "connection pool"
                    and not app.search_screen.grouped and previewed(app))
        save(app, "results-history.svg")
        await pilot.press("g")
        await cleared(pilot, app)
        await typed(pilot, app, HITS_QUERY)
        await pilot.press("tab")
        best = min(range(len(app.search_screen.results.rows)),
                   key=lambda n: abs(app.search_screen.results.rows[n].hits - 17))
        for _ in range(best):
            await pilot.press("down")
        await pilot.press("enter")
        await until(pilot, lambda: type(app.screen).__name__ == "ConversationScreen"
                    and app.screen.hits and app.screen.view is not None
                    and app.screen.facts_shown)
        while app.screen.current != 2:
            await pilot.press("n" if app.screen.current < 2 else "N")
        await until(pilot, lambda: app.screen.view.view_of(app.screen.hit_positions[2]) is not None)
        save(app, "conversation-hit.svg")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.search_screen)
        await cleared(pilot, app)
        await pilot.press("tab", "f")
        await until(pilot, lambda: type(app.screen).__name__ == "FiltersScreen")
        dialog = app.screen
        dialog.query_one("#filter-source", Select).value = "claude-code"
        dialog.query_one("#filter-period", Select).value = "30d"
        await until(pilot, lambda: app.search_screen.filters.period == "30d"
                    and all(r.source == "claude-code" for r in app.search_screen.results.rows))
        save(app, "filters.svg")
        await pilot.press("escape", "x")
        await until(pilot, lambda: app.screen is app.search_screen
                    and not app.search_screen.filters.active)
        await pilot.press("v")
        await until(pilot, lambda: type(app.screen).__name__ == "ViewAsScreen")
        save(app, "view-as.svg")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.search_screen)
        await pilot.press("question_mark")
        await until(pilot, lambda: type(app.screen).__name__ == "HelpScreen")
        save(app, "help.svg")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.search_screen)
        await pilot.press("u")
        await until(pilot, lambda: type(app.screen).__name__ == "UsageScreen"
                    and app.screen.reports is not None)
        await pilot.pause(0.2)
        save(app, "usage.svg")

    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="backscroll-screens-") as tmp:
        state = StateDir(Path(tmp) / "demo")
        build_demo(state)  # imported sessions stay pending: the indexing screenshot shows them
        newest = max(s.last_activity for s in list_sessions(state))
        frozen = newest / 1000 + 2 * 3600  # "2 hours ago" stays true whenever this runs

        def clock() -> float:
            return frozen

        for path in asyncio.run(shoot(state, args.out, clock)):
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
