"""Pilot tests of the browser: real state dirs built here, the real core, a frozen clock."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Checkbox, Input, OptionList, ProgressBar, Static

from backscroll.core.catalog import SessionSummary
from backscroll.core.reconcile import reconcile_agent
from backscroll.core.search import SearchRequest, SearchResponse, SearchResult
from backscroll.core.state import StateDir
from backscroll.core.status import AgentStatus, StateStatus, state_status
from backscroll.core.storage import Progress, SessionMeta
from backscroll.core.visibility import OPERATOR
from backscroll.tui import keys as keys_module
from backscroll.tui.app import BackscrollApp, make_app
from backscroll.tui.cli import main
from backscroll.tui.screens import (
    ConversationScreen,
    ExportChoice,
    ExportScreen,
    HelpScreen,
    ViewAsChoice,
    ViewAsScreen,
    default_export_path,
)
from backscroll.tui.text import printable
from backscroll.tui.widgets import EmptyState, IndexingView, StatusBar, row_anchor, row_key

from .events import BASE_MS, header, msg
from .older_schema import downgrade

NOW = BASE_MS / 1000 + 3 * 3600  # three hours after the first message
SECRET = "sk-proj-Qx7Lm2Vb9Tn4Rk8Wz3Yp6Hs1Jd5Fg0Ac2Ne7Ut9Ko4Bi6Mq"


def frozen() -> float:
    return NOW


def add_session(
    state: StateDir,
    key: str,
    texts: list[tuple[str, Any]],
    spawned_by: str | None = None,
    imported: bool = False,
    start_ms: int = 0,
) -> list[str]:
    """Store a linear conversation; returns the message ids. ``imported``: left unindexed."""
    agent = key.split(":")[1]
    prefix = key.split(":")[-1][:6]
    meta = SessionMeta(key, session_id=f"sid-{prefix}", spawned_by=spawned_by)
    events = [header(f"sid-{prefix}", ms=BASE_MS + start_ms)]
    ids, parent = [], None
    for i, (role, content) in enumerate(texts):
        entry = f"{prefix}{i}"
        events.append(msg(entry, parent, role, content, ms=start_ms + (i + 1) * 60_000))
        ids.append(entry)
        parent = entry
    with state.open(agent, write=True) as db:
        if imported:
            db.import_session(meta, [json.dumps(e) for e in events])
        else:
            for event in events:
                db.append(meta, json.dumps(event))
    return ids


def text(t: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": t}]


@pytest.fixture
def convo(state: StateDir) -> StateDir:
    add_session(
        state,
        "agent:main:main",
        [
            ("user", "Please deploy checkout-web to production."),
            ("assistant", [{"type": "thinking", "thinking": "check the pods first"},
                           {"type": "toolCall", "name": "exec",
                            "arguments": {"command": "kubectl rollout status deploy/web"}},
                           {"type": "text", "text": "Deployed checkout-web v2; six pods ready."}]),
            ("user", "Thanks, and the pelican report?"),
        ],
    )
    add_session(
        state,
        "agent:main:subagent:alpha",
        [("user", "Investigate the deploy latency graphs."),
         ("assistant", "Latency rose after the deploy at noon.")],
        spawned_by="agent:main:main",
        start_ms=600_000,
    )
    add_session(
        state,
        "agent:main:subagent:beta",
        [("user", "Write the zebra migration notes."),
         ("assistant", "The zebra migration moves three tables.")],
        spawned_by="agent:main:main",
        start_ms=1_200_000,
    )
    return state


def app_for(state: StateDir, **options: Any) -> BackscrollApp:
    """The app on ``state``; results one row per message unless ``grouped=True`` (most tests
    here are about messages; test_tui_browse.py covers conversations)."""
    options.setdefault("now", frozen)
    options.setdefault("reconcile", lambda agent: None)
    options.setdefault("auto_reconcile", False)
    options.setdefault("grouped", False)
    return make_app(state, **options)


async def until(pilot: Any, condition: Callable[[], bool], timeout: float = 15.0) -> None:
    """Let the app run until ``condition()`` holds (workers answer on other threads)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.02)


async def type_query(pilot: Any, app: BackscrollApp, query: str) -> None:
    await pilot.press(*query)
    await until(pilot, lambda: app.search_screen.last_request is not None
                and app.search_screen.last_request.query == query
                and app.search_screen.results.shown_for == query)


def rendered(widget: Widget) -> str:
    """The widget's lines as painted (segments' text), not its source content."""
    width, height = widget.size
    strips = widget.render_lines(Region(0, 0, width, height))
    return "\n".join(strip.text for strip in strips)


def previewed(app: BackscrollApp) -> bool:
    """The preview pane shows the highlighted row's conversation (not an earlier row's)."""
    current = app.search_screen.results.current
    return current is not None and app.search_screen.history.shown == (row_key(current),
                                                         row_anchor(current) or "")


def count_text(app: BackscrollApp) -> str:
    return app.search_screen.query_one("#count", Static).content.plain


# --- search, preview, conversation ---------------------------------------------------------


@pytest.mark.backends  # the browser on either storage
@pytest.mark.slow
async def test_typing_shows_results_with_highlights(convo: StateDir) -> None:
    app = app_for(convo)
    async with app.run_test(size=(120, 35)) as pilot:
        await type_query(pilot, app, "depl")
        keys = [r.session_key for r in app.search_screen.results.results]
        assert sorted(keys) == ["agent:main:main", "agent:main:main",
                                "agent:main:subagent:alpha", "agent:main:subagent:alpha"]
        assert count_text(app) == "4 results"
        first = app.search_screen.results.results[0]
        start, end = first.highlights[0]
        assert first.excerpt[start:end].lower().startswith("depl")
        prompt = app.search_screen.results.get_option_at_index(0).prompt
        assert "hours ago" in prompt.plain  # humanized against the frozen clock
        assert first.session_key in prompt.plain
        painted = rendered(app.search_screen.results)
        assert first.session_key in painted


@pytest.mark.backends  # the browser on either storage
@pytest.mark.slow
async def test_highlight_moves_the_history_pane(convo: StateDir) -> None:
    app = app_for(convo)
    async with app.run_test(size=(120, 35)) as pilot:
        await type_query(pilot, app, "deploy")
        results = app.search_screen.results.results
        await until(pilot, lambda: app.search_screen.history.shown == (results[0].session_key,
                                                         results[0].message_id))
        assert results[0].message_id in app.search_screen.history.plain_text()
        await pilot.press("down")
        second = app.search_screen.results.results[1]
        assert app.search_screen.results.current == second
        await until(pilot, lambda: app.search_screen.history.shown == (second.session_key, second.message_id))
        shown = app.search_screen.history.plain_text()
        assert second.session_key in shown
        assert f"▶ {second.role}" in shown  # the hit is marked
        hit = app.search_screen.history.query_one("#history-hit", Static)
        assert second.excerpt.split()[0] in hit.content.renderables[1].plain


@pytest.mark.slow
async def test_history_pane_shows_tools_thinking_roles_and_times(convo: StateDir) -> None:
    app = app_for(convo)
    async with app.run_test(size=(140, 40)) as pilot:
        await type_query(pilot, app, "pelican")
        await until(pilot, lambda: previewed(app))
        shown = app.search_screen.history.plain_text()
        assert '→ exec({"command": "kubectl rollout status deploy/web"})' in shown
        assert "check the pods first" in shown
        assert "assistant  3 hours ago · " in shown
        assert "▶ user  3 hours ago" in shown


@pytest.mark.slow
async def test_enter_opens_conversation_and_escape_walks_back(convo: StateDir) -> None:
    app = app_for(convo)
    async with app.run_test(size=(120, 35)) as pilot:
        await type_query(pilot, app, "zebra")
        await until(pilot, lambda: previewed(app))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        await until(pilot, lambda: app.screen.view is not None and bool(app.screen.view.views))
        shown = app.screen.view.plain_text()
        assert "Write the zebra migration notes." in shown
        assert "The zebra migration moves three tables." in shown
        # the main screen's keys are off here: "s" does not change the scope behind it
        await pilot.press("s")
        assert app.search_screen.scope.kind == "all"
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ConversationScreen))
        assert app.search_screen.search_input.value == "zebra"
        # escape ladder: results -> search bar -> cleared
        await pilot.press("tab")
        assert app.focused is app.search_screen.results
        await pilot.press("escape")
        search_input = app.search_screen.search_input
        assert app.focused is search_input and search_input.value == "zebra"
        await pilot.press("escape")
        assert app.search_screen.search_input.value == ""
        for _ in range(3):
            await pilot.press("escape")
        assert app.is_running and app.return_code is None  # escape never quits


@pytest.mark.slow
async def test_conversation_scrolls_to_the_hit(state: StateDir) -> None:
    lines = [("user" if i % 2 == 0 else "assistant", f"filler message number {i} " * 4)
             for i in range(80)]
    lines[60] = ("user", "the needle is here")
    ids = add_session(state, "agent:main:main", lines)
    app = app_for(state)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_query(pilot, app, "needle")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        await until(pilot, lambda: app.screen.view is not None and app.screen.view.scroll_y > 0)
        view = app.screen.view
        hit = view.view_of(60)
        assert hit is not None and hit.has_class("hit")
        top, bottom = view.scroll_y, view.scroll_y + view.scrollable_content_region.height
        assert top <= hit.virtual_region.y < bottom
        assert ids[60] in view.plain_text()
        await pilot.press("g")  # the top: read when asked for (a window of messages)
        await until(pilot, lambda: ids[0] in view.plain_text() and view.scroll_y == 0)


@pytest.mark.slow
async def test_stale_answers_are_dropped(convo: StateDir) -> None:
    app = app_for(convo)
    async with app.run_test() as pilot:
        await type_query(pilot, app, "zebra")
        before = list(app.search_screen.results.results)
        fake = SearchResult("agent:main:main", "sid", "x", BASE_MS, "user", "stale", 1.0)
        from backscroll.tui.messages import SearchAnswered

        screen = app.search_screen
        screen.post_message(SearchAnswered(screen.scheduler.generation - 1, SearchRequest("old"),
                                           SearchResponse(results=[fake])))
        await pilot.pause(0.1)
        assert app.search_screen.results.results == before


@pytest.mark.slow
async def test_validation_error_shows_inline(convo: StateDir) -> None:
    app = app_for(convo)
    async with app.run_test() as pilot:
        await pilot.press(*"?!")
        error = app.search_screen.query_one("#search-error", Static)
        await until(pilot, lambda: error.has_class("-shown"))
        assert "nothing to search for" in error.content.plain
        await pilot.press("backspace", "backspace", *"zebra")
        await until(pilot, lambda: not error.has_class("-shown"))
        await until(pilot, lambda: len(app.search_screen.results.results) == 2)
        count = app.search_screen.query_one("#count", Static)
        assert "2 results" in str(count.render())
        await pilot.press(*"?!" * 3, "home", *"?!")  # "?!zebra?!?!?!" is zebra: not refused
        await pilot.press(*["delete"] * 5)  # "?!?!?!?!": nothing to search for
        await until(pilot, lambda: error.has_class("-shown"))
        last = app.search_screen.last_request.query  # the last query answered on the way ("?!zebr?!?!?!"...)
        await until(pilot, lambda: str(count.render()) == f"below: the answer for {last}")
        assert app.search_screen.results.shown_for == last  # the last answer stays, and says whose it is


@pytest.mark.slow
async def test_toggles_change_request_and_status(convo: StateDir) -> None:
    app = app_for(convo)
    async with app.run_test(size=(140, 35)) as pilot:
        await type_query(pilot, app, "deploy")
        await pilot.press("tab")  # into the results: letters are commands now
        assert app.focused is app.search_screen.results
        await pilot.press("o")
        await until(pilot, lambda: app.search_screen.last_request.order == "recent")
        times = [r.timestamp for r in app.search_screen.results.results]
        assert times == sorted(times, reverse=True)
        await pilot.press("m")
        await until(pilot, lambda: app.search_screen.last_request.match == "exact")
        # exact: "deploy" no longer matches "deployed"
        assert all("deployed" not in r.excerpt.lower() or "deploy " in r.excerpt.lower()
                   for r in app.search_screen.results.results)
        while app.search_screen.results.current.session_key != "agent:main:subagent:alpha":
            await pilot.press("j")
        await pilot.press("s")
        assert app.search_screen.scope.kind == "agent" and app.search_screen.scope.value == "main"
        await pilot.press("s")
        await until(pilot, lambda: app.search_screen.last_request.session_key == "agent:main:subagent:alpha")
        assert {r.session_key for r in app.search_screen.results.results} == {"agent:main:subagent:alpha"}
        status = app.search_screen.status_bar.plain_text()
        assert ("as operator · per message · exact · newest first · session "
                "agent:main:subagent:alpha") in status
        await pilot.press("s")
        assert app.search_screen.scope.kind == "all"


@pytest.mark.slow
async def test_copy_puts_the_excerpt_on_the_clipboard(convo: StateDir) -> None:
    app = app_for(convo)
    async with app.run_test(size=(160, 30)) as pilot:
        await type_query(pilot, app, "zebra")
        await pilot.press("tab", "y")
        assert app.clipboard == app.search_screen.results.current.excerpt
        assert "copied the excerpt of agent:main:" in app.search_screen.status_bar.plain_text()


@pytest.mark.slow
async def test_help_lists_the_keys(convo: StateDir) -> None:
    app = app_for(convo)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("tab", "question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        painted = rendered(app.screen.query_one("#help-keys"))
        assert "view as" in painted and "ctrl+p" in painted and "escape" in painted
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen))


@pytest.mark.slow
async def test_command_palette_offers_the_browser_commands(convo: StateDir) -> None:
    app = app_for(convo)
    async with app.run_test() as pilot:
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for wanted in ("View as…", "Toggle scope", "Toggle order", "Toggle match mode",
                       "Copy excerpt", "Export conversation", "Help"):
            assert wanted in titles
        await pilot.press("ctrl+p")
        await until(pilot, lambda: app.screen.__class__.__name__ == "CommandPalette")
        await pilot.press("escape")


@pytest.mark.slow
async def test_bindings_have_ids_and_can_be_remapped(convo: StateDir) -> None:
    assert all(b.id for b in BackscrollApp.BINDINGS)
    app = app_for(convo)
    async with app.run_test() as pilot:
        app.set_keymap({"order": "ctrl+o"})
        await type_query(pilot, app, "zebra")
        await pilot.press("tab", "ctrl+o")
        await until(pilot, lambda: app.search_screen.order == "recent")


def test_every_binding_comes_from_the_key_table_and_has_an_action() -> None:
    from backscroll.tui import keys
    from backscroll.tui.screens import SearchScreen

    for owner, table in ((BackscrollApp, keys.APP), (SearchScreen, keys.SEARCH),
                         (ConversationScreen, keys.CONVERSATION), (ViewAsScreen, keys.VIEW_AS),
                         (ExportScreen, keys.EXPORT), (HelpScreen, keys.HELP),
                         (EmptyState, keys.EMPTY)):
        own = [b for b in owner.BINDINGS if b.id]
        assert [b.id for b in own] == [k.id for k in table if k.bound]
        assert all(b.id for b in owner.BINDINGS)
        for binding in own:
            assert callable(getattr(owner, f"action_{binding.action}")), binding.id


@pytest.mark.slow
async def test_a_remapped_key_shows_everywhere(convo: StateDir) -> None:
    """One key table: after set_keymap the help, the palette, the welcome note, the dialogs'
    hints and the conversation's title all name the new key, and it works."""
    app = app_for(convo)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.status is not None)
        app.set_keymap({"order": "ctrl+o", "view_as.sandbox": "ctrl+x", "conversation.find": "F"})
        await pilot.pause()
        hints = dict((what, keys) for keys, what in keys_module.welcome_hints(app))
        assert hints["scope, order, match mode"] == "s ctrl+o m"
        order = next(c for c in app.get_system_commands(app.screen) if c.title == "Toggle order")
        assert order.help == "Order: best match / newest first (ctrl+o)"

        await pilot.press("tab", "question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        painted = rendered(app.screen.query_one("#help-keys"))
        row = next(line for line in painted.splitlines() if "order: best match" in line)
        assert row.split()[0] == "ctrl+o" and row.split()[-1] == "order"
        assert not any(line.split()[:1] == ["o"] for line in painted.splitlines())
        sandbox = next(line for line in painted.splitlines() if "sandboxed:" in line)
        assert sandbox.split()[0] == "ctrl+x"
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.search_screen)

        await pilot.press("ctrl+o")  # the new key works (from the results)
        assert app.search_screen.order == "recent"
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, ViewAsScreen))
        dialog = app.screen
        assert "ctrl+x sandbox" in dialog.query_one(".dialog-keys", Static).content.plain
        checkbox = dialog.query_one(Checkbox)
        assert "(ctrl+x)" in str(checkbox.label)
        await pilot.press("ctrl+x")
        assert checkbox.value is True
        await pilot.press("escape")

        app.search_screen.search_input.focus()
        await type_query(pilot, app, "zebra")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        await until(pilot, lambda: app.screen.outline is not None)
        line = app.screen.query_one("#conversation-position", Static).content.plain
        assert "n next hit · F find · g top · esc back" in line
        await pilot.press("F")
        assert app.screen.query_one("#conversation-find", Input).has_focus


# --- view as --------------------------------------------------------------------------------


@pytest.mark.backends  # the browser on either storage
@pytest.mark.slow
async def test_view_as_changes_what_is_found(convo: StateDir) -> None:
    app = app_for(convo)
    async with app.run_test(size=(120, 35)) as pilot:
        await type_query(pilot, app, "zebra")
        assert len(app.search_screen.results.results) == 2  # the operator sees subagent beta
        await pilot.press("tab", "v")
        await until(pilot, lambda: isinstance(app.screen, ViewAsScreen))
        await pilot.press("slash", *"alpha", "enter")
        await until(pilot, lambda: app.caller.key == "agent:main:subagent:alpha")
        await until(pilot, lambda: app.search_screen.last_request is not None
                    and app.search_screen.results.shown_for == "zebra"
                    and app.caller.key == "agent:main:subagent:alpha"
                    and count_text(app) == "no results for zebra")
        assert count_text(app) == "no results for zebra"
        assert "as agent:main:subagent:alpha (tree)" in app.search_screen.status_bar.plain_text()
        # alpha still finds its own words
        app.search_screen.search_input.value = ""
        app.search_screen.search_input.focus()
        await type_query(pilot, app, "latency")
        assert {r.session_key for r in app.search_screen.results.results} == {"agent:main:subagent:alpha"}
        # the main session sees its spawned sessions; sandboxed, main sees only its own tree
        await pilot.press("tab", "v")
        await until(pilot, lambda: isinstance(app.screen, ViewAsScreen))
        await pilot.press("slash", *"main:main", "enter")
        await until(pilot, lambda: app.caller.key == "agent:main:main")
        app.search_screen.search_input.value = ""
        app.search_screen.search_input.focus()
        await type_query(pilot, app, "zebra")
        assert len(app.search_screen.results.results) == 2


@pytest.mark.slow
async def test_view_as_sandboxed_session(convo: StateDir) -> None:
    add_session(convo, "agent:main:telegram:group:7", [("user", "the zebra group chat")])
    app = app_for(convo)
    async with app.run_test(size=(120, 35)) as pilot:
        await type_query(pilot, app, "zebra")
        assert len(app.search_screen.results.results) == 3
        await pilot.press("tab", "v")
        await until(pilot, lambda: isinstance(app.screen, ViewAsScreen))
        await pilot.press("slash", *"main:main")
        app.screen.query_one(Checkbox).value = True
        await pilot.press("enter")
        await until(pilot, lambda: app.caller.key == "agent:main:main")
        assert app.caller.policy.sandboxed
        assert "(sandboxed)" in app.search_screen.status_bar.plain_text()
        await until(pilot, lambda: app.search_screen.last_request.query == "zebra"
                    and app.caller.policy.sandboxed
                    and app.search_screen.results.shown_for == "zebra"
                    and len(app.search_screen.results.results) == 2)
        assert "agent:main:telegram:group:7" not in {r.session_key for r in app.search_screen.results.results}


@pytest.mark.slow
async def test_view_as_an_incognito_session_matches_the_cli(
    convo: StateDir, capsys: pytest.CaptureFixture[str]
) -> None:
    """View as lists an incognito session (dimmed, marked) and searches as it exactly like
    ``backscroll search --as KEY``: it finds what its policy allows, never an incognito
    session, its own included."""
    (convo.path / "config.toml").write_text('[tools.sessions]\nvisibility = "agent"\n')
    incognito = "agent:main:subagent:incognito-1"
    add_session(convo, incognito, [("user", "the zebra incognito note")],
                spawned_by="agent:main:main", start_ms=1_800_000)
    assert main(["search", "zebra", "--as", incognito, "--state-dir", str(convo.path),
                 "--json"]) == 0
    cli = {(r["sessionKey"], r["messageId"]) for r in json.loads(capsys.readouterr().out)["results"]}
    assert cli and all(key != incognito for key, _ in cli)
    app = app_for(convo)
    async with app.run_test(size=(120, 35)) as pilot:
        await pilot.press("tab", "v")
        await until(pilot, lambda: isinstance(app.screen, ViewAsScreen))
        listing = app.screen.query_one("#view-as-list", OptionList)
        ids = [listing.get_option_at_index(i).id for i in range(listing.option_count)]
        assert incognito in ids
        prompt = listing.get_option_at_index(ids.index(incognito)).prompt
        assert prompt.style == "dim" and prompt.plain.split(incognito)[1].startswith("  incognito")
        await pilot.press("slash", *"incognito-1", "enter")
        await until(pilot, lambda: app.caller.key == incognito)
        assert "as agent:main:subagent:incognito-1 (agent)" in app.search_screen.status_bar.plain_text()
        app.search_screen.search_input.focus()
        await type_query(pilot, app, "zebra")
        await until(pilot, lambda: app.search_screen.last_request.query == "zebra"
                    and app.search_screen.results.shown_for == "zebra")
        assert {(r.session_key, r.message_id) for r in app.search_screen.results.results} == cli


class Host(App[None]):
    """A throwaway app to run one screen on."""

    def __init__(self, screen: Any) -> None:
        super().__init__()
        self.to_push = screen
        self.answer: Any = "unset"

    def compose(self) -> ComposeResult:
        yield Static("host")

    def on_mount(self) -> None:
        self.push_screen(self.to_push, self._done)

    def _done(self, value: Any) -> None:
        self.answer = value


def summary(key: str, incognito: bool = False, spawned_by: str | None = None) -> SessionSummary:
    return SessionSummary(key, key.split(":")[1], "sid", None, spawned_by, BASE_MS, BASE_MS, 3,
                          True, incognito)


@pytest.mark.slow
async def test_view_as_screen_lists_incognito_sessions_dimmed() -> None:
    """Incognito sessions are listed (``--as`` accepts them too), dimmed and marked."""
    sessions = [summary("agent:main:main"),
                summary("agent:main:subagent:incognito-42", incognito=True),
                summary("agent:ops:main")]
    host = Host(ViewAsScreen(sessions, OPERATOR, frozen))
    async with host.run_test() as pilot:
        listing = host.screen.query_one("#view-as-list", OptionList)
        ids = [listing.get_option_at_index(i).id for i in range(listing.option_count)]
        assert ids == ["operator", "agent:main:main", "agent:main:subagent:incognito-42",
                       "agent:ops:main"]
        incognito = listing.get_option_at_index(2).prompt
        assert "incognito" in incognito.plain.split("incognito-42", 1)[1]  # the marker
        assert incognito.style == "dim"
        assert listing.get_option_at_index(1).prompt.style == ""
        await pilot.press("j", "j", "j", "x", "enter")
        assert host.answer == ViewAsChoice("agent:ops:main", True)


@pytest.mark.slow
async def test_view_as_screen_escape_cancels() -> None:
    host = Host(ViewAsScreen([summary("agent:main:main")], OPERATOR, frozen))
    async with host.run_test() as pilot:
        await pilot.press("escape")
        assert host.answer is None


# --- export ---------------------------------------------------------------------------------


@pytest.mark.backends  # the browser on either storage
@pytest.mark.slow
async def test_export_writes_a_redacted_file(state: StateDir, tmp_path: Path) -> None:
    add_session(state, "agent:main:main", [
        ("user", f"our key is OPENAI_API_KEY={SECRET} for the walrus project"),
        ("assistant", "Noted the walrus project key."),
    ])
    target = tmp_path / "out" / "walrus.md"
    target.parent.mkdir()
    app = app_for(state)
    async with app.run_test(size=(120, 35), notifications=True) as pilot:
        await type_query(pilot, app, "walrus")
        await pilot.press("tab", "e")
        await until(pilot, lambda: isinstance(app.screen, ExportScreen))
        path_input = app.screen.query_one("#export-path", Input)
        assert path_input.value == "./agent-main-main.md"
        path_input.value = str(target)
        await pilot.press("enter")
        await until(pilot, target.exists)
        await until(pilot, lambda: any("exported" in n.message for n in app._notifications))
    body = target.read_text()
    assert "# agent:main:main" in body and "walrus project" in body
    assert "OPENAI_API_KEY=" in body
    assert SECRET[8:-6] not in body and SECRET not in body
    assert target.stat().st_mode & 0o077 == 0  # private by default


async def export_to(pilot: Any, app: BackscrollApp, target: Path, overwrite: bool) -> None:
    await pilot.press("tab", "e")
    await until(pilot, lambda: isinstance(app.screen, ExportScreen))
    app.screen.query_one("#export-path", Input).value = str(target)
    checkbox = app.screen.query_one("#export-overwrite", Checkbox)
    assert checkbox.value is False  # off by default
    if overwrite:
        await pilot.press("tab", "space")  # from the path to the checkbox, as a person would
        assert checkbox.value is True
        await pilot.press("tab")  # to the Export button
    await pilot.press("enter")
    await until(pilot, lambda: not isinstance(app.screen, ExportScreen))


@pytest.mark.slow
async def test_export_refuses_an_existing_file_unless_asked(state: StateDir, tmp_path: Path) -> None:
    add_session(state, "agent:main:main", [("user", "the walrus project"), ("assistant", "ok")])
    target = tmp_path / "walrus.md"
    target.write_bytes(b"my own notes, not an export\n")
    app = app_for(state)
    async with app.run_test(size=(120, 35), notifications=True) as pilot:
        await type_query(pilot, app, "walrus")
        await export_to(pilot, app, target, overwrite=False)
        await until(pilot, lambda: any(n.severity == "error" for n in app._notifications))
        refused = next(n for n in app._notifications if n.severity == "error")
        assert refused.message == (f"{target} already exists: choose another path or "
                                   "overwrite it")
        assert target.read_bytes() == b"my own notes, not an export\n"
        assert not any("exported" in n.message for n in app._notifications)
        app.search_screen.search_input.focus()
        await export_to(pilot, app, target, overwrite=True)
        await until(pilot, lambda: any("exported" in n.message for n in app._notifications))
    body = target.read_text()
    assert body.startswith("# agent:main:main") and "the walrus project" in body
    assert target.stat().st_mode & 0o077 == 0


@pytest.mark.slow
async def test_export_screen_json_path_follows_format() -> None:
    host = Host(ExportScreen("agent:main:telegram:group:42"))
    async with host.run_test() as pilot:
        path = host.screen.query_one("#export-path", Input)
        assert path.value == "./agent-main-telegram-group-42.md"
        host.screen.query_one("#export-json").value = True
        await pilot.pause()
        assert path.value == "./agent-main-telegram-group-42.json"
        await pilot.press("enter")
        assert host.answer == ExportChoice("json", "./agent-main-telegram-group-42.json")


@pytest.mark.slow
async def test_export_screen_overwrite_checkbox() -> None:
    host = Host(ExportScreen("agent:main:main"))
    async with host.run_test() as pilot:
        host.screen.query_one("#export-overwrite", Checkbox).value = True
        await pilot.press("enter")
        assert host.answer == ExportChoice("markdown", "./agent-main-main.md", overwrite=True)


def test_default_export_path_is_sanitized() -> None:
    assert default_export_path("agent:main:../../etc/passwd") == "./agent-main-..-..-etc-passwd.md"
    assert default_export_path("agent:x:a b/c", "json") == "./agent-x-a-b-c.json"


# --- transcript text is data ----------------------------------------------------------------


@pytest.mark.slow
async def test_markup_and_ansi_in_messages_render_literally(state: StateDir) -> None:
    nasty = "[bold red]x[/] \x1b[31mred alert\x1b[0m [link=https://evil]y[/link] \x07 end"
    add_session(state, "agent:main:main", [("user", nasty), ("assistant", "ok")])
    app = app_for(state)
    async with app.run_test(size=(170, 35)) as pilot:
        await type_query(pilot, app, "alert")
        await until(pilot, lambda: previewed(app))
        painted = rendered(app.search_screen.results)
        assert "[bold red]x[/]" in painted
        assert "\x1b" not in painted
        hit = app.search_screen.history.query_one("#history-hit")
        literal = "[bold red]x[/] ␛[31mred alert␛[0m [link=https://evil]y[/link] ␇ end"
        await until(pilot, lambda: literal in rendered(hit))  # once the pane is laid out
        pane = rendered(hit)
        assert "\x1b" not in pane and "\x07" not in pane


def test_printable_keeps_offsets() -> None:
    raw = "a\x1b[31mb\tc\nd\x9bz"
    assert printable(raw) == "a␛[31mb\tc\nd\ufffdz"
    assert printable(raw, one_line=True) == "a␛[31mb c d\ufffdz"
    assert len(printable(raw, one_line=True)) == len(raw)


# --- friendly states, status bar, reconciliation ------------------------------------------


@pytest.mark.slow
async def test_empty_state_dir_says_how_to_start(tmp_path: Path) -> None:
    app = app_for(StateDir(tmp_path / "nothing-here"))
    async with app.run_test(size=(100, 30)) as pilot:
        empty = app.search_screen.query_one("#empty-text", Static)
        await until(pilot, lambda: app.search_screen.query_one("#empty").display
                    and "No transcript folders found" in rendered(empty))
        painted = rendered(empty)
        assert "~/.claude/projects, ~/.codex/sessions, ~/.openclaw" in painted
        assert "backscroll sources add KIND PATH" in painted
        assert "backscroll import openclaw PATH" in painted
        assert "backscroll demo" in painted
        assert not app.search_screen.query_one("#body").display
        await pilot.press(*"anything")
        await pilot.pause(0.2)
        assert app.search_screen.results.results == [] and app.is_running


@pytest.mark.slow
async def test_unreadable_database_is_one_notification(convo: StateDir) -> None:
    broken = convo.path / "agents" / "broken" / "sessions.sqlite"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"this is not sqlite at all" * 100)
    app = app_for(convo)
    async with app.run_test(notifications=True) as pilot:
        await pilot.press(*"zebra")
        await until(pilot, lambda: any(n.severity == "error" for n in app._notifications))
        error = next(n for n in app._notifications if n.severity == "error")
        assert "broken" in error.message and "\n" not in error.message
        assert "Traceback" not in error.message
        assert app.is_running
        app.search_screen.search_input.value = ""
        await pilot.pause(0.1)


@pytest.mark.backends  # the browser on either storage
@pytest.mark.slow
async def test_indexing_then_results_after_reconciliation(state: StateDir) -> None:
    add_session(state, "agent:main:main", [("user", "nothing to see")])
    add_session(state, "agent:main:imported:one", [("user", "the walrus of old"),
                                                   ("assistant", "walrus noted")], imported=True)
    started: list[str] = []
    app = app_for(state, reconcile=started.append, poll_interval=0.05)
    async with app.run_test(size=(120, 35)) as pilot:
        await type_query(pilot, app, "walrus")
        assert set(started) == {"main"}  # the searches asked for a reconciliation
        assert app.search_screen.results.results == []
        assert "still being indexed" in count_text(app)
        await until(pilot, lambda: "awaiting indexing" in app.search_screen.status_bar.plain_text())
        assert "results may be incomplete" in app.search_screen.status_bar.plain_text()
        await asyncio.to_thread(reconcile_agent, state, "main")
        await until(pilot, lambda: len(app.search_screen.results.results) == 2)
        await until(pilot, lambda: "results may be incomplete"
                    not in app.search_screen.status_bar.plain_text())
        assert count_text(app) == "2 results"
        assert "sessions, up to date" in app.search_screen.status_bar.plain_text()


@pytest.mark.slow
async def test_the_home_list_drops_indexing_once_reconciliation_is_done(state: StateDir) -> None:
    """A conversation listed as "indexing…" is listed again with its messages when
    reconciliation finishes (counts of sessions and messages do not move then)."""
    add_session(state, "agent:main:main", [("user", "nothing to see")])
    add_session(state, "agent:main:imported:one", [("user", "the walrus of old"),
                                                   ("assistant", "walrus noted")], imported=True)
    app = app_for(state, poll_interval=0.05)
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: len(app.search_screen.results.rows) == 2)
        assert [r.searchable for r in app.search_screen.results.rows if r.key.endswith("one")] == [False]
        await asyncio.to_thread(reconcile_agent, state, "main")
        await until(pilot, lambda: len(app.search_screen.results.rows) == 2
                    and all(r.searchable for r in app.search_screen.results.rows))


@pytest.mark.slow
async def test_auto_reconcile_on_start_uses_the_background_reconciler(state: StateDir) -> None:
    add_session(state, "agent:main:imported:one", [("user", "the narwhal")], imported=True)
    app = make_app(state, now=frozen, poll_interval=0.05)  # the real start_background
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.status is not None and app.status.agents
                    and not app.status.pending_sessions and not app.status.reconciling)
        await type_query(pilot, app, "narwhal")
        assert len(app.search_screen.results.results) == 1


@pytest.mark.slow
async def test_a_database_of_an_older_schema_is_upgraded_and_listed(state: StateDir) -> None:
    """A state written by an older backscroll (readers refuse it: they never migrate) is
    upgraded by the background reconciliation the browser starts, then listed as usual."""
    import sqlite3

    add_session(state, "agent:main:one", [("user", "the first"), ("assistant", "yes")])
    add_session(state, "agent:main:two", [("user", "the second"), ("assistant", "no")],
                start_ms=600_000)
    path = state.db_path("main")
    downgrade(path, 6)
    assert state_status(state).agents[0].state == "older schema"
    app = make_app(state, now=frozen, poll_interval=0.05, grouped=True)  # the real reconciler
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: len(app.search_screen.results.rows) == 2)  # the home list: two sessions
        await until(pilot, lambda: app.status is not None and app.status.agents[0].state == "ok")
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] >= 7
        assert conn.execute("SELECT count(*) FROM branch_messages").fetchone()[0] == 4


@pytest.mark.slow
async def test_auto_reconcile_starts_each_pending_agent_once_off_the_ui_thread(
    state: StateDir,
) -> None:
    """The status worker only reads and posts; the handler decides, once per agent, and the
    start itself (it opens the database) runs in a worker too."""
    add_session(state, "agent:main:imported:one", [("user", "the narwhal")], imported=True)
    calls: list[tuple[str, bool]] = []
    polled_on: list[bool] = []

    def record(agent: str) -> None:
        calls.append((agent, threading.current_thread() is threading.main_thread()))

    def status(s: StateDir) -> StateStatus:
        polled_on.append(threading.current_thread() is threading.main_thread())
        return state_status(s)

    app = app_for(state, reconcile=record, auto_reconcile=True, status=status,
                  poll_interval=0.02)
    async with app.run_test() as pilot:
        await until(pilot, lambda: bool(calls))
        await until(pilot, lambda: len(polled_on) >= 4)  # still pending: nothing reconciles
        assert calls == [("main", False)]
        assert not any(polled_on)


def running_status(path: str, done: int, total: int) -> StateStatus:
    far = int(time.time() * 1000) + 3_600_000
    progress = Progress("running", "run", BASE_MS, BASE_MS + 2000, done, total, 1200,
                        "agent:main:x", "me", far)
    return StateStatus(path, [AgentStatus("main", total, 5000, 1200, total - done, 0, progress)])


@pytest.mark.slow
async def test_status_bar_shows_progress_while_reconciling(convo: StateDir) -> None:
    app = app_for(convo, status=lambda s: running_status(str(s.path), 2, 5))
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.status is not None)
        bar = app.search_screen.status_bar.query_one(ProgressBar)
        await until(pilot, lambda: bar.total == 5 and bar.progress == 2)
        assert bar.display and bar.has_class("-running")
        text = app.search_screen.status_bar.plain_text()
        assert "indexing 2/5 sessions · 1,200 msgs" in text
        assert "results may be incomplete" in text


def test_indexing_view_sums_running_agents() -> None:
    status = running_status("/x", 3, 9)
    idle = replace(status.agents[0], agent="ops", progress=status.agents[0].progress._replace(
        state="idle"), dirty=0)
    view = IndexingView.of(StateStatus("/x", [status.agents[0], idle]))
    assert (view.running, view.done, view.total, view.pending) == (True, 3, 9, 6)
    assert IndexingView.of(None).running is False


@pytest.mark.slow
async def test_status_bar_widget_on_a_host() -> None:
    class BarHost(App[None]):
        def compose(self) -> ComposeResult:
            yield StatusBar()

    host = BarHost()
    async with host.run_test() as pilot:
        bar = host.query_one(StatusBar)
        bar.show(IndexingView(False, 0, 0, 3, 0, 0.0), True, 10, "as operator")
        await pilot.pause()
        assert "3 sessions awaiting indexing" in bar.plain_text()
        assert not bar.query_one(ProgressBar).has_class("-running")
        bar.show(IndexingView(False, 0, 0, 0, 0, 0.0), False, 10, "as operator")
        await pilot.pause()
        assert "10 sessions, up to date" in bar.plain_text()
        assert "may be incomplete" not in bar.plain_text()


@pytest.mark.slow
async def test_fast_typing_on_a_slow_index_runs_one_search_at_a_time(
    convo: StateDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Single flight: while a (slow) search runs, keystrokes only mark the text as changed;
    the newest text is searched when it ends, and only its answer is shown."""
    from backscroll.tui.screens import search as app_module

    searched: list[str] = []
    running: list[int] = []
    real = app_module.sessions_search
    release = threading.Event()  # the first search stays "slow" until every key is typed

    def slow(state: Any, request: Any, caller: Any, on_pending: Any = None) -> Any:
        running.append(1)
        assert len(running) == 1, "two searches ran at once"
        try:
            searched.append(request.query)
            release.wait(10)
            return real(state, request, caller, on_pending=on_pending)
        finally:
            running.pop()

    monkeypatch.setattr(app_module, "sessions_search", slow)
    app = app_for(convo)
    async with app.run_test() as pilot:
        await pilot.press(*"zebra")
        release.set()
        await until(pilot, lambda: app.search_screen.results.shown_for == "zebra")
        assert searched[0] == "z" and searched[-1] == "zebra"
        assert len(searched) < 5  # the keys typed during a search were coalesced
        assert [r.session_key for r in app.search_screen.results.results] == ["agent:main:subagent:beta"] * 2


@pytest.mark.slow
async def test_a_late_message_to_a_status_bar_being_taken_down_is_dropped(convo: StateDir) -> None:
    # A worker's message (a sync's progress, a status poll) can arrive while the browser
    # quits and the bar's parts are already gone: it is dropped, not a NoMatches traceback.
    app = app_for(convo)
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: app.status is not None)
        bar = app.search_screen.status_bar
        await bar.remove_children()
        bar.show_live("syncing 1/3 files")
        bar.flash("copied")
        bar.show_filters(["agent ops"], "x")
        bar.show(IndexingView(True, 1, 3, 0, 10, 1.0), False, 3, "as operator")
        assert bar.plain_text() == ""


@pytest.mark.slow
def test_the_browser_can_start_a_helper_process_while_textual_holds_stderr(
    tmp_path: Path,
) -> None:
    """Textual captures stderr (descriptor -1) while it runs; a big backfill's helper
    process must still start (a fresh interpreter: no tracker started by earlier tests)."""
    script = (
        "import asyncio, os, sys\n"
        "from backscroll.core import helper_process\n"
        "from backscroll.core.state import StateDir\n"
        "from backscroll.tui.app import make_app\n"
        "helper_process._usable_cpus = lambda: 2\n"
        "app = make_app(StateDir(sys.argv[1]), auto_reconcile=False, sources=False)\n"
        "async def main():\n"
        "    async with app.run_test():\n"
        "        assert sys.stderr.fileno() < 0\n"
        "        pool = helper_process.start_helper()\n"
        "        assert pool.submit(os.getpid).result() != os.getpid()\n"
        "        pool.shutdown()\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "state")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
