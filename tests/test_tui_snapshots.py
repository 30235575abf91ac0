"""SVG snapshots of the browser's main states (pytest-textual-snapshot).

Deterministic by construction: data built here with fixed ids and times, a frozen clock for
the humanized times, no reconciliation thread, and progress from a fixed status. Update with
``pytest tests/test_tui_snapshots.py --snapshot-update`` and look at the SVGs before
committing them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from textual.widgets import Input

from backscroll.core.state import StateDir
from backscroll.core.status import StateStatus, state_status
from backscroll.core.storage import Progress
from backscroll.tui.app import BackscrollApp, make_app
from backscroll.tui.screens import ConversationScreen

from .events import BASE_MS
from .test_tui import add_session, previewed

pytestmark = pytest.mark.slow  # every test renders the browser (docs/development.md)

NOW = BASE_MS / 1000 + 5 * 3600
FAR_FUTURE_MS = 4_102_444_800_000  # 2100-01-01: a lease that never runs out in a snapshot


def frozen() -> float:
    return NOW


def build(state: StateDir) -> StateDir:
    add_session(state, "agent:main:main", [
        ("user", "Deploy checkout-web v2.11.6 to production, please."),
        ("assistant", [
            {"type": "thinking", "thinking": "Roll out, then watch the error rate."},
            {"type": "toolCall", "name": "exec",
             "arguments": {"command": "kubectl -n prod set image deploy/checkout-web web=v2.11.6"}},
        ]),
        ("toolResult", [{"type": "text", "text": "deployment.apps/checkout-web image updated"}]),
        ("assistant", "checkout-web v2.11.6 is rolled out (6/6 pods ready). Watching errors."),
        ("user", "Getting 500s from checkout-web since the deploy!"),
        ("assistant", ("The connection pool is exhausted after the deploy; I suggest a "
                       "rollback to v2.11.5 now and a look at the pool settings afterwards.")),
        ("user", "Roll back. And the café menu [bold]markup[/] stays literal."),
    ])
    add_session(state, "agent:ops:telegram:group:42", [
        ("user", "Is the nightly backup done? We deploy at noon."),
        ("assistant", "Backup finished at 03:12 UTC; 41 GB, verified. Good to deploy."),
    ], start_ms=3_600_000)
    add_session(state, "agent:main:subagent:4f1c", [
        ("user", "Summarise the deploy incident for the changelog."),
        ("assistant", "Deploy of v2.11.6 caused pool exhaustion; rolled back within 9 minutes."),
    ], spawned_by="agent:main:main", start_ms=7_200_000)
    return state


def snapshot_app(state: StateDir, **options: Any) -> BackscrollApp:
    options.setdefault("now", frozen)
    options.setdefault("reconcile", lambda agent: None)
    options.setdefault("auto_reconcile", False)
    options.setdefault("poll_interval", 0.05)
    return make_app(state, **options)


def waiting_for(condition: Callable[[BackscrollApp], bool], *keys: str) -> Callable[..., Any]:
    """A run_before that types ``keys`` and lets the app run until ``condition`` holds."""

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        deadline = time.monotonic() + 10
        for field in app.screen.query(Input):
            field.cursor_blink = False  # a blinking cursor would make the snapshot flaky
        while app.status is None:
            await pilot.pause(0.02)
        for key in keys:
            await pilot.press(key)
        while not condition(app):
            assert time.monotonic() < deadline, "snapshot state not reached"
            await pilot.pause(0.02)
        await pilot.pause(0.1)

    return run_before


def preview_shown(app: BackscrollApp) -> bool:
    return (previewed(app) and app.search_screen.results.painted_for == app.search_screen.search_input.value
            and app.search_screen.last_request is not None)


def test_snapshot_empty_state_dir(snap_compare: Any) -> None:
    app = snapshot_app(StateDir("/nonexistent/backscroll-snapshot-state"))

    def sources_listed(a: BackscrollApp) -> bool:
        return a.search_screen.query_one("#empty").display and a.live.listed is not None

    assert snap_compare(app, terminal_size=(100, 30), run_before=waiting_for(sources_listed))


def test_snapshot_results_with_history(snap_compare: Any, state: StateDir) -> None:
    app = snapshot_app(build(state))
    assert snap_compare(app, terminal_size=(130, 36),
                        run_before=waiting_for(preview_shown, *"deploy", "down"))


def test_snapshot_indexing_in_progress(snap_compare: Any, state: StateDir) -> None:
    build(state)
    add_session(state, "agent:main:imported:old", [("user", "the deploy runbook, imported")],
                imported=True)

    def status(s: StateDir) -> StateStatus:
        real = state_status(s)
        running = Progress("running", "run", BASE_MS, BASE_MS + 4000, 2, 5, 1840,
                           "agent:main:imported:old", "snapshot", FAR_FUTURE_MS)
        return replace(real, agents=[replace(a, progress=running, dirty=3) for a in real.agents
                                     if a.agent == "main"] +
                       [a for a in real.agents if a.agent != "main"])

    app = snapshot_app(state, status=status)
    assert snap_compare(app, terminal_size=(130, 36),
                        run_before=waiting_for(preview_shown, *"deploy"))


def test_snapshot_narrow_terminal(snap_compare: Any, state: StateDir) -> None:
    app = snapshot_app(build(state))
    assert snap_compare(app, terminal_size=(80, 24),
                        run_before=waiting_for(preview_shown, *"pool"))


def home_shown(app: BackscrollApp) -> bool:
    results = app.search_screen.results
    return bool(results.rows) and results.shown_for == "" and previewed(app)


def test_snapshot_home_recent_conversations(snap_compare: Any, state: StateDir) -> None:
    app = snapshot_app(build(state))
    assert snap_compare(app, terminal_size=(130, 36), run_before=waiting_for(home_shown))


def test_snapshot_grouped_results(snap_compare: Any, state: StateDir) -> None:
    build(state)
    add_session(state, "agent:main:subagent:9d2e", [
        ("user", "Collect every deploy of checkout-web this week."),
        *[("assistant", f"Deploy {n}: checkout-web v2.11.{n} went out without errors.")
          for n in range(1, 6)],
    ], spawned_by="agent:main:main", start_ms=9_000_000)
    app = snapshot_app(state)
    assert snap_compare(app, terminal_size=(130, 36),
                        run_before=waiting_for(preview_shown, *"deploy"))


def test_snapshot_conversation_at_hit_3_of_17(snap_compare: Any, state: StateDir) -> None:
    turns: list[tuple[str, Any]] = []
    for n in range(1, 18):
        turns.append(("user", f"Pool check {n}: is the connection pool healthy on db-{n}?"))
        turns.append(("assistant", f"db-{n} has {40 - n} idle connections; nothing to do."))
    add_session(state, "agent:ops:main", turns)
    app = snapshot_app(state)

    async def run_before(pilot: Any) -> None:
        await waiting_for(preview_shown, *"pool")(pilot)
        await pilot.press("enter")
        deadline = time.monotonic() + 10
        while not (isinstance(app.screen, ConversationScreen) and app.screen.view is not None
                   and app.screen.view.views and app.screen.facts_shown):
            assert time.monotonic() < deadline
            await pilot.pause(0.02)
        screen = app.screen
        while screen.current != 2:
            await pilot.press("n" if screen.current < 2 else "N")
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=(110, 30), run_before=run_before)


def test_snapshot_conversation_screen(snap_compare: Any, state: StateDir) -> None:
    app = snapshot_app(build(state))

    def conversation_open(a: BackscrollApp) -> bool:  # its facts line shown too
        return isinstance(a.screen, ConversationScreen) and a.screen.facts_shown

    async def run_before(pilot: Any) -> None:
        await waiting_for(preview_shown, *"rollback")(pilot)
        await pilot.press("enter")
        await waiting_for(conversation_open)(pilot)

    assert snap_compare(app, terminal_size=(110, 30), run_before=run_before)
