"""Pilot tests of the browser for daily use: the home list of recent conversations, results
grouped by conversation, a conversation's hits and position, filters, resume, the small
things (``/``, long keys, themes, the mouse) and bad data in titles."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rich.text import Text
from textual.app import App
from textual.widgets import Input, Select, Static

from backscroll.core.catalog import SessionSummary
from backscroll.core.conversation import Outline
from backscroll.core.grouped import ConversationHit
from backscroll.core.search import SearchRequest, SearchResult
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.tui.app import BackscrollApp
from backscroll.tui.messages import FiltersChanged
from backscroll.tui.screens import ConversationScreen, Filters, FiltersScreen
from backscroll.tui.widgets import conversation_prompt, grouped_prompt, result_prompt

from .events import BASE_MS, header, msg
from .test_tui import NOW, add_session, app_for, frozen, rendered, until

pytestmark = pytest.mark.backends  # storage behaviour: on both backends

CC_KEY = "agent:cc:claude-code:5f0c8a5e-1f0e-4c7a-9d61-0d3f5b1e2a77"
CC_ID = "5f0c8a5e-1f0e-4c7a-9d61-0d3f5b1e2a77"
LONG_KEY = "agent:main:telegram:group:" + "9" * 60 + ":topic:" + "release-planning-" * 4


def tool_session(state: StateDir, key: str, source: str, cwd: str | None,
                 texts: list[tuple[str, str]], start_ms: int = 0) -> None:
    session_id = key.rsplit(":", 1)[-1]
    first = header(session_id, ms=BASE_MS + start_ms)
    if cwd is not None:
        first["cwd"] = cwd
    events, parent = [first], None
    for i, (role, text) in enumerate(texts):
        events.append(msg(f"{session_id[:4]}{i}", parent, role, text, ms=start_ms + (i + 1) * 60_000))
        parent = f"{session_id[:4]}{i}"
    with state.open(key.split(":")[1], write=True) as db:
        for event in events:
            db.append(SessionMeta(key, session_id=session_id, source=source), json.dumps(event))


def world(state: StateDir) -> StateDir:
    """A chatty conversation, two quiet ones, and a Claude Code session with a cwd."""
    add_session(state, "agent:main:main", [
        ("user", "The heron migration is stuck again."),
        *[("assistant" if i % 2 else "user", f"heron step {i}: still checking the heron logs")
          for i in range(1, 17)],
        ("user", "ok, heron done"),
    ])
    add_session(state, "agent:main:subagent:quiet", [("user", "Summarise the heron notes."),
                                                     ("assistant", "Two herons, one report.")],
                spawned_by="agent:main:main", start_ms=1_800_000)
    add_session(state, "agent:ops:main", [("user", "Is the backup done?"),
                                          ("assistant", "Backup done, no heron in sight.")],
                start_ms=3_600_000)
    tool_session(state, CC_KEY, "claude-code", "/home/me/work/shop",
                 [("user", "Refactor the heron importer"), ("assistant", "Refactored it.")],
                 start_ms=5_400_000)
    return state


async def typed(pilot: Any, app: BackscrollApp, query: str) -> None:
    await pilot.press(*query)
    await until(pilot, lambda: app.search_screen.last_request is not None
                and app.search_screen.last_request.query == query
                and app.search_screen.results.shown_for == query)


async def home(pilot: Any, app: BackscrollApp) -> None:
    await until(pilot, lambda: bool(app.search_screen.results.rows)
                and app.search_screen.results.shown_for == "")


# --- home: recent conversations ----------------------------------------------------------


@pytest.mark.slow
async def test_home_lists_recent_conversations_and_previews_the_end(state: StateDir) -> None:
    app = app_for(world(state), grouped=True)
    async with app.run_test(size=(130, 40)) as pilot:
        await home(pilot, app)
        rows = app.search_screen.results.rows
        assert all(isinstance(r, SessionSummary) for r in rows)
        assert [r.key for r in rows] == [CC_KEY, "agent:ops:main", "agent:main:subagent:quiet",
                                         "agent:main:main"]  # newest activity first
        first = app.search_screen.results.get_option_at_index(0).prompt.plain
        assert "Refactor the heron importer" in first  # the title: the first user message
        assert CC_KEY in first and "2 msgs" in first and "Claude Code" in first
        assert "ago" in first
        main = app.search_screen.results.get_option_at_index(3).prompt.plain
        assert "18 msgs" in main and "OpenClaw" in main
        assert "conversations, newest first" in app.search_screen.query_one("#count").content.plain
        await until(pilot, lambda: app.search_screen.history.shown == (CC_KEY, ""))
        assert "Refactored it." in app.search_screen.history.plain_text()  # its end
        await pilot.press("tab", "enter")
        await until(pilot, lambda: isinstance(app.screen, ConversationScreen)
                    and app.screen.outline is not None)
        position = app.screen.query_one("#conversation-position", Static).content.plain
        assert "message 2 of 2" in position  # opened at its end


@pytest.mark.slow
async def test_clearing_the_search_brings_the_home_list_back(state: StateDir) -> None:
    app = app_for(world(state), grouped=True)
    async with app.run_test(size=(130, 40)) as pilot:
        await home(pilot, app)
        await typed(pilot, app, "backup")
        assert [type(r) for r in app.search_screen.results.rows] == [ConversationHit]
        await pilot.press("escape", "escape")  # to the bar, then clear it
        await home(pilot, app)
        assert len(app.search_screen.results.rows) == 4


# --- grouped results -------------------------------------------------------------------------


@pytest.mark.slow
async def test_results_are_grouped_by_conversation_and_g_toggles(state: StateDir) -> None:
    app = app_for(world(state), grouped=True)
    async with app.run_test(size=(130, 40)) as pilot:
        await home(pilot, app)
        await typed(pilot, app, "heron")
        rows = app.search_screen.results.rows
        assert all(isinstance(r, ConversationHit) for r in rows)
        keys = [r.session.key for r in rows]
        assert sorted(keys) == sorted([CC_KEY, "agent:ops:main", "agent:main:subagent:quiet",
                                       "agent:main:main"])  # one row each, chatty or not
        chatty = next(r for r in rows if r.session.key == "agent:main:main")
        assert chatty.hits == 18
        prompt = next(app.search_screen.results.get_option_at_index(i).prompt.plain for i in range(len(rows))
                      if rows[i] is chatty)
        assert "18 hits" in prompt and "The heron migration is stuck again." in prompt
        count = app.search_screen.query_one("#count").content.plain
        assert count.startswith("4 conversations · 22 hits")
        assert "per conversation" in app.search_screen.status_bar.plain_text()
        await pilot.press("tab", "g")
        results = app.search_screen.results
        await until(pilot, lambda: results.rows and isinstance(results.rows[0], SearchResult))
        assert len(results.rows) == 22 and "per message" in app.search_screen.status_bar.plain_text()
        await pilot.press("g")
        await until(pilot, lambda: isinstance(app.search_screen.results.rows[0], ConversationHit))


# --- inside a conversation ---------------------------------------------------------------------


@pytest.mark.slow
async def test_a_conversation_opens_at_the_best_hit_and_n_walks_the_hits(state: StateDir) -> None:
    app = app_for(world(state), grouped=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await home(pilot, app)
        await typed(pilot, app, "heron")
        while app.search_screen.results.current.session.key != "agent:main:main":
            await pilot.press("down")
        best = app.search_screen.results.current.result.message_id
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConversationScreen)
                    and app.screen.view is not None and bool(app.screen.view.views)
                    and app.screen.current is not None)  # the hits are read once it shows
        screen = app.screen
        assert screen.hits[screen.current] == best
        view = screen.view
        hit = view.view_of(screen.hit_positions[screen.current])
        assert hit is not None and hit.has_class("hit")

        def position() -> str:
            return screen.query_one("#conversation-position", Static).content.plain

        assert f"hit {screen.current + 1} of 18" in position()
        await pilot.press("n")
        assert screen.hits[screen.current] != best
        await until(pilot, lambda: f"hit {screen.current + 1} of 18" in position())
        at = screen.hit_positions[screen.current]
        assert view.view_of(at).has_class("hit") and not hit.has_class("hit")
        await pilot.press("N", "N")
        await until(pilot, lambda: f"hit {screen.current + 1} of 18" in position())
        await pilot.press("g")
        await until(pilot, lambda: "message 1 of 18" in position())
        await pilot.press("G")
        await until(pilot, lambda: view.scroll_y == view.max_scroll_y and "message 18 of 18"
                    in position())
        # / searches within the conversation: new words, new hits
        await pilot.press("slash")
        find = screen.query_one("#conversation-find", Input)
        assert find.has_focus and find.value == "heron"
        find.value = ""
        await pilot.press(*"stuck", "enter")
        await until(pilot, lambda: screen.request is not None and screen.request.query == "stuck")
        await until(pilot, lambda: "hit 1 of 1" in position() and "for stuck" in position())
        assert screen.hits == ["main0"]
        await pilot.press("escape")  # closes the search line first
        assert isinstance(app.screen, ConversationScreen) and not find.display
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.search_screen)


class FakeSource:
    """A conversation without a database (the screen on a throwaway host)."""

    session_key = "agent:main:fake"

    def __init__(self, count: int) -> None:
        ids = tuple(f"f{i}" for i in range(count))
        self._outline = Outline(self.session_key, "sid", ids, ("user",) * count,
                                tuple(BASE_MS + i for i in range(count)),
                                tuple(range(1, count + 1)))
        self.windows: list[tuple[int, int]] = []

    def outline(self) -> Outline:
        return self._outline

    def window(self, start: int, stop: int) -> list[dict[str, Any]]:
        self.windows.append((start, stop))
        return [{"id": f"f{i}", "role": "user", "timestamp": BASE_MS + i,
                 "content": [{"type": "text", "text": f"message {i}"}]}
                for i in range(start, min(stop, len(self._outline)))]

    def hits(self, request: SearchRequest) -> list[str]:
        return [f"f{i}" for i in range(0, len(self._outline), 1000)]


class Host(App[None]):
    def __init__(self, screen: Any) -> None:
        super().__init__()
        self.pushed = screen

    def on_mount(self) -> None:
        self.push_screen(self.pushed)

    def report_failure(self, event: Any) -> None:
        pass


@pytest.mark.slow
async def test_a_50000_message_conversation_is_read_in_windows() -> None:
    source = FakeSource(50_000)
    screen = ConversationScreen(source, "f25000", frozen, SearchRequest("x"))
    async with Host(screen).run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: screen.view is not None and screen.view.hi > 0)
        view = screen.view
        await until(pilot, lambda: view.asked is None)  # laid out and settled
        assert 0 < len(view.views) <= 200 and view.lo <= 25_000 < view.hi
        position = screen.query_one("#conversation-position", Static)
        await until(pilot, lambda: "hit 26 of 50" in position.content.plain)  # hits follow
        for _ in range(12):
            await pilot.press("pagedown")
        await until(pilot, lambda: view.hi > 25_000 + 40)  # read on at the end
        assert len(view.views) <= 200
        for _ in range(16):  # and back up past where it opened: read on at the top
            await pilot.press("pageup")
        await until(pilot, lambda: view.lo < 25_000 - 20 and view.asked is None)
        assert len(view.views) <= 200 and len(source.windows) < 20  # no runaway reading
        top = view.top_index()
        assert top is not None and top < 25_000
        await pilot.press("G")
        await until(pilot, lambda: view.hi == 50_000)
        assert "message 50,000 of 50,000" in screen.query_one(
            "#conversation-position", Static).content.plain
        assert all(stop - start <= 40 for start, stop in source.windows)


# --- filters -------------------------------------------------------------------------------


@pytest.mark.slow
async def test_filters_show_as_labels_and_clear_with_one_key(state: StateDir) -> None:
    app = app_for(world(state), grouped=True)
    async with app.run_test(size=(150, 40)) as pilot:
        await home(pilot, app)
        await pilot.press("tab", "f")
        await until(pilot, lambda: isinstance(app.screen, FiltersScreen))
        dialog = app.screen
        agents = dialog.query_one("#filter-agent", Select)
        assert [v for _p, v in agents._options if v is not Select.NULL] == ["cc", "main", "ops"]
        projects = dialog.query_one("#filter-project", Select)
        assert "/home/me/work/shop" in [v for _p, v in projects._options]
        dialog.query_one("#filter-source", Select).value = "claude-code"
        await until(pilot, lambda: app.search_screen.filters.source == "claude-code")
        await until(pilot, lambda: [r.key for r in app.search_screen.results.rows] == [CC_KEY])
        dialog.query_one("#filter-period", Select).value = "7d"
        await until(pilot, lambda: app.search_screen.filters.period == "7d")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.search_screen)
        status = app.search_screen.status_bar.plain_text()
        assert "[Claude Code] [last 7 days] x clears" in status
        app.search_screen.search_input.focus()
        await typed(pilot, app, "heron")
        assert [r.session.key for r in app.search_screen.results.rows] == [CC_KEY]
        last_request = app.search_screen.last_request
        assert last_request.source == "claude-code" and last_request.since_ms == (
            int(NOW * 1000) - 7 * 86_400_000)
        await pilot.press("tab", "x")
        await until(pilot, lambda: len(app.search_screen.results.rows) == 4)
        assert "clears" not in app.search_screen.status_bar.plain_text()


@pytest.mark.slow
async def test_the_filters_dialog_posts_each_change_and_clears() -> None:
    changes: list[Filters] = []

    class FilterHost(Host):
        def on_filters_changed(self, message: FiltersChanged) -> None:
            changes.append(message.filters)

    screen = FiltersScreen(Filters(role="user"), ["main", "ops"], [("/w/shop", 3)])
    async with FilterHost(screen).run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert screen.query_one("#filter-role", Select).value == "user"
        screen.query_one("#filter-agent", Select).value = "ops"
        await until(pilot, lambda: bool(changes))
        assert changes[-1] == Filters(agent="ops", role="user")
        assert changes[-1].labels() == ["agent ops", "user only"]
        await pilot.press("x")
        await until(pilot, lambda: changes[-1] == Filters())
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(pilot.app.screen, FiltersScreen))


# --- resume ----------------------------------------------------------------------------------


@pytest.mark.slow
async def test_r_copies_the_resume_command_and_says_so(state: StateDir) -> None:
    world(state)
    planted = "agent:cc:claude-code:--dangerously-skip-permissions"  # an id read as an option
    tool_session(state, planted, "claude-code", "/home/me/work/shop",
                 [("user", "a session planted to be resumed")], start_ms=9_000_000)
    app = app_for(state, grouped=True)
    async with app.run_test(size=(160, 40)) as pilot:
        await home(pilot, app)
        await pilot.press("tab")
        assert app.search_screen.results.current.key == planted
        await pilot.press("r")
        await until(pilot, lambda: "no resume command: its session id is not a UUID, as the "
                    "tool's own ids are" in app.search_screen.status_bar.plain_text())
        assert app.clipboard == ""
        await pilot.press("j", "r")
        await until(pilot, lambda: "copied the resume command" in app.search_screen.status_bar.plain_text())
        assert app.clipboard == f"cd /home/me/work/shop && claude --resume {CC_ID}"
        await pilot.press("j", "r")  # an OpenClaw session: its key
        await until(pilot, lambda: app.clipboard == "agent:ops:main")
        assert "copied the session key: agent:ops:main" in app.search_screen.status_bar.plain_text()
        # from a message-level row (no summary at hand) and from the conversation
        app.search_screen.search_input.focus()
        await typed(pilot, app, "refactor")
        await pilot.press("tab", "g")
        await until(pilot, lambda: isinstance(app.search_screen.results.current, SearchResult))
        app.copy_to_clipboard("")
        await pilot.press("r")
        await until(pilot, lambda: app.clipboard.endswith(f"claude --resume {CC_ID}"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConversationScreen)
                    and app.screen.outline is not None)
        app.copy_to_clipboard("")
        await pilot.press("r")
        await until(pilot, lambda: "copied the resume command" in app.screen.query_one(
            "#conversation-position", Static).content.plain)
        assert app.clipboard.endswith(f"claude --resume {CC_ID}")


# --- the small things ---------------------------------------------------------------------------


@pytest.mark.slow
async def test_slash_focuses_the_search_bar_without_typing_a_slash(state: StateDir) -> None:
    app = app_for(world(state), grouped=True)
    async with app.run_test(size=(120, 35)) as pilot:
        await home(pilot, app)
        await typed(pilot, app, "heron")
        await pilot.press("tab")
        assert app.focused is app.search_screen.results
        await pilot.press("slash")
        assert app.focused is app.search_screen.search_input
        await pilot.pause(0.1)
        assert app.search_screen.search_input.value == "heron"


@pytest.mark.slow
async def test_slash_into_the_focused_empty_search_bar_types_nothing(state: StateDir) -> None:
    """The bar has the focus when the browser opens; "/ to focus" pressed then types no
    slash. Inside a query a slash is text."""
    app = app_for(world(state), grouped=True)
    async with app.run_test(size=(120, 35)) as pilot:
        await home(pilot, app)
        assert app.focused is app.search_screen.search_input
        await pilot.press("slash", "slash")
        assert app.search_screen.search_input.value == ""
        await pilot.press(*"src/app")
        assert app.search_screen.search_input.value == "src/app"
        app.set_keymap({"focus_search": "ctrl+f"})  # remapped: a slash is text again
        app.search_screen.search_input.value = ""
        await pilot.press("slash")
        assert app.search_screen.search_input.value == "/"


@pytest.mark.slow
async def test_long_keys_stay_readable_and_titles_are_text(state: StateDir) -> None:
    nasty = "[bold red]boom[/] \x1b[31mred\x1b[0m \u0007 " + "W" * 50_000
    add_session(state, LONG_KEY, [("user", nasty), ("assistant", "fine")])
    app = app_for(state, grouped=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await home(pilot, app)
        [summary] = app.search_screen.results.rows
        prompt = app.search_screen.results.get_option_at_index(0).prompt.plain
        title, key = prompt.splitlines()[:2]
        assert title.startswith("[bold red]boom[/] ␛[31mred␛[0m ␇ WWW") and title.endswith("…")
        assert key.startswith("agent:main:telegram:group:9") and "…" in key
        assert key.endswith("release-planning-"[-8:]) and len(key) < 60
        painted = rendered(app.search_screen.results)
        assert all(len(line) <= app.search_screen.results.size.width for line in painted.splitlines())
        assert "\x1b" not in painted and "boom" in painted


def test_rows_cut_keys_in_the_middle_only_when_they_do_not_fit() -> None:
    short = SessionSummary("agent:main:main", "main", "sid", None, None, BASE_MS, BASE_MS, 3, True,
                           False, title="hello", messages=3, last_activity=BASE_MS)
    plain = conversation_prompt(short, frozen, 60).plain.splitlines()
    assert plain == ["hello", "agent:main:main  3 hours ago · 3 msgs · OpenClaw"]
    long = SessionSummary(LONG_KEY, "main", "sid", None, None, BASE_MS, BASE_MS, 3, True, False,
                          title="hello", messages=3, last_activity=BASE_MS)
    title, key, meta = conversation_prompt(long, frozen, 50).plain.splitlines()
    assert len(key) == 50 and key.startswith("agent:main:telegram:group:") and "…" in key
    assert meta == "3 hours ago · 3 msgs · OpenClaw"
    result = SearchResult(LONG_KEY, "sid", "m1", BASE_MS, "user", "found the heron", 1.0,
                          ((10, 15),))
    hit = ConversationHit(result, long)
    lines = grouped_prompt(hit, frozen, 200, 50).plain.splitlines()
    assert lines[0] == "hello" and lines[2] == "1 hit · 3 hours ago" and lines[3] == "found the heron"
    assert result_prompt(result, frozen, 200, 50).plain.splitlines()[1] == "3 hours ago  user"


@pytest.mark.slow
async def test_the_colours_follow_the_theme(state: StateDir) -> None:
    app = app_for(world(state), grouped=True)
    async with app.run_test(size=(120, 35)) as pilot:
        await home(pilot, app)
        dark = app.search_screen.results.palette
        dark_prompt = app.search_screen.results.get_option_at_index(0).prompt
        app.theme = "textual-light"
        await until(pilot, lambda: app.search_screen.results.palette != dark)
        light = app.search_screen.results.get_option_at_index(0).prompt
        assert isinstance(light, Text) and light.plain == dark_prompt.plain
        assert [s.style for s in light.spans] != [s.style for s in dark_prompt.spans]
        assert app.search_screen.results.palette.key.endswith(app.theme_variables["text-primary"])


@pytest.mark.slow
async def test_a_click_highlights_and_a_second_click_opens(state: StateDir) -> None:
    app = app_for(world(state), grouped=True)
    async with app.run_test(size=(120, 35)) as pilot:
        await home(pilot, app)
        assert app.search_screen.results.highlighted == 0
        second_title = app.search_screen.results.rows[1].display_title
        await until(pilot, lambda: second_title in rendered(app.search_screen.results))  # laid out
        second_row_y = rendered(app.search_screen.results).splitlines().index(
            next(line for line in rendered(app.search_screen.results).splitlines() if second_title in line))
        await pilot.click("#results", offset=(5, second_row_y))
        await until(pilot, lambda: app.search_screen.results.highlighted == 1)
        assert app.screen is app.search_screen
        await until(pilot, lambda: app.search_screen.history.shown
                    == (app.search_screen.results.rows[1].key, ""))
        await pilot.click("#results", offset=(5, second_row_y))
        await until(pilot, lambda: isinstance(app.screen, ConversationScreen))


@pytest.mark.slow
async def test_the_palette_offers_the_new_commands(state: StateDir) -> None:
    app = app_for(world(state))
    async with app.run_test() as pilot:
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for wanted in ("Filters…", "Clear filters", "Toggle grouping", "Copy resume command",
                       "Toggle live follow"):
            assert wanted in titles


def test_the_key_table_has_no_clash_on_a_screen() -> None:
    from backscroll.tui import keys

    for table in (keys.SEARCH + keys.APP, keys.CONVERSATION + keys.APP, keys.FILTERS):
        seen: dict[str, str] = {}
        for entry in table:
            if not entry.bound:
                continue
            for key in entry.keys.split(","):
                assert key not in seen, (key, entry.id, seen.get(key))
                seen[key] = entry.id
