"""The browser keeps up with what others store, and takes nothing in by looking: a standing
search follows another writer; a browser on a team server syncs no local transcript unless
the settings say so; a late worker message meets a screen already taken down; and the small
things of issue 22 (the position line after wrapping, made-up labels as titles, quitting,
the filters' drop-downs, the incognito sessions the list leaves out)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Footer, Select, Static
from textual.widgets._select import SelectOverlay

from backscroll.core.catalog import visible_session_list
from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.reconcile import reconcile_agent
from backscroll.core.search import SearchRequest
from backscroll.core.sources.settings import sync_on_open
from backscroll.core.sources.sync import SyncReport
from backscroll.core.state import StateDir
from backscroll.core.status import state_status
from backscroll.core.storage import SessionMeta
from backscroll.core.visibility import OPERATOR
from backscroll.tui.messages import (
    ConversationOpened,
    HitsFound,
    HomeLoaded,
    SearchAnswered,
    SourcesListed,
    SourcesSynced,
    SourcesWatching,
    StatusPolled,
    SyncOnOpen,
    SyncProgress,
    WindowRead,
)
from backscroll.tui.screens import ConversationScreen, FiltersScreen

from .events import header, msg
from .fakehome import build_home
from .test_tui import add_session, app_for, count_text, type_query, until
from .test_tui_browse import FakeSource, Host, frozen, tool_session

NEVER = 3600.0  # a status poll interval the test never waits for: it polls by itself


# --- 12: what another process stores shows without typing --------------------------------


@pytest.mark.backends
@pytest.mark.slow
async def test_a_standing_search_shows_what_another_writer_stores(state: StateDir) -> None:
    add_session(state, "agent:main:main", [("user", "the heron migration"),
                                           ("assistant", "heron moved")])
    app = app_for(state, sources=False, poll_interval=NEVER, grouped=True)
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: app.status is not None)
        await type_query(pilot, app, "heron")
        assert [r.session.key for r in app.search_screen.results.results] == ["agent:main:main"]
        await pilot.press(*" kiwi")
        await until(pilot, lambda: app.search_screen.results.shown_for == "heron kiwi")
        assert count_text(app) == "no results for heron kiwi"

        # another writer (as `backscroll watch` in another process would): a core call
        add_session(state, "agent:main:other", [("user", "a heron kiwi sighting")],
                    start_ms=600_000)
        app.poll_status()  # what the status timer does every few seconds
        await until(pilot, lambda: [r.session.key for r in app.search_screen.results.results]
                    == ["agent:main:other"])
        assert app.search_screen.search_input.value == "heron kiwi"  # nothing was typed
        assert count_text(app).startswith("1 conversation")

        # the selection stays where it was when more arrives
        add_session(state, "agent:main:third", [("user", "kiwi and heron again")],
                    start_ms=1_200_000)
        app.poll_status()
        await until(pilot, lambda: len(app.search_screen.results.results) == 2)
        assert app.search_screen.results.current.session.key == "agent:main:other"


@pytest.mark.backends
@pytest.mark.slow
async def test_the_home_list_shows_a_conversation_another_writer_stores(state: StateDir) -> None:
    add_session(state, "agent:main:main", [("user", "the heron migration")])
    app = app_for(state, sources=False, poll_interval=NEVER, grouped=True)
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: len(app.search_screen.results.results) == 1)
        add_session(state, "agent:ops:main", [("user", "is the backup done?")],
                    start_ms=600_000)
        app.poll_status()
        await until(pilot, lambda: [r.key for r in app.search_screen.results.results]
                    == ["agent:ops:main", "agent:main:main"])


# --- 13: a browser on a team server takes nothing in by looking ---------------------------


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
@pytest.mark.slow
async def test_opening_the_browser_on_a_server_leaves_it_unchanged(
        state: StateDir, data_dir: Path) -> None:
    build_home(Path.home(), data_dir)  # private local transcripts, found by default
    add_session(state, "agent:main:main", [("user", "the team's own conversation")])
    assert state.shared and not sync_on_open(state)
    before = [(s.key, s.messages) for s in visible_session_list(state, OPERATOR)]
    app = app_for(state, poll_interval=0.05)  # sources=True: as `backscroll --database URL`
    async with app.run_test(size=(120, 35)) as pilot:
        # the browser decided: sources held, or (the bug) a first sync done and reported
        await until(pilot, lambda: "synced" in app.search_screen.status_bar.plain_text(),
                    timeout=60)
        assert state.agents() == ["main"]
        assert "local sources not synced here (L follows them)" in app.search_screen.status_bar.plain_text()
        assert not app.live.following
        assert state.agents() == ["main"]
        assert [(s.key, s.messages) for s in visible_session_list(state, OPERATOR)] == before
        await pilot.press("tab", "L")  # the explicit act: follow them, into the server
        assert any("this machine's transcripts go into PostgreSQL at" in n.message
                   for n in app._notifications)
        await until(pilot, lambda: len(state.agents()) > 1, timeout=60)


def test_sync_on_open_is_a_setting_true_on_local_files_false_on_a_server(tmp_path: Path) -> None:
    local = StateDir(tmp_path / "state", database_url="")
    server = StateDir(tmp_path / "state", database_url="postgresql://u@db.example/backscroll")
    assert sync_on_open(local) and not sync_on_open(server)
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "config.toml").write_text("[sync]\non_open = true\n")
    assert sync_on_open(server)
    (tmp_path / "state" / "config.toml").write_text("[sync]\non_open = false\n")
    assert not sync_on_open(local)
    (tmp_path / "state" / "config.toml").write_text('[sync]\non_open = "yes"\n')
    with pytest.raises(Exception, match="sync.on_open must be true or false"):
        sync_on_open(local)


# --- a worker's message after the screen's widgets are gone -------------------------------


@pytest.mark.slow
async def test_worker_messages_after_the_widgets_are_gone_are_dropped(state: StateDir) -> None:
    add_session(state, "agent:main:main", [("user", "the heron migration")])
    app = app_for(state, sources=False, poll_interval=NEVER)
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: app.status is not None and bool(app.search_screen.results.results))
        screen = app.search_screen
        status = state_status(state)
        await screen.remove_children()  # as Textual does first when the browser quits
        assert app.ready  # the screen itself is still there
        report = SyncReport(sources=1, files=1, read=1, events=2, messages=2,
                            sessions={"agent:main:main"})
        for message in (SourcesSynced(report), SyncProgress(1, 3), SourcesWatching([]),
                        SourcesListed([]), StatusPolled(status), SyncOnOpen(False)):
            app.post_message(message)
        request = SearchRequest("heron")
        screen.post_message(SearchAnswered(screen.scheduler.generation, request, error="x"))
        screen.post_message(HomeLoaded(screen.scheduler.generation, []))
        await pilot.pause()
        app.live._refresh()  # the refresh timer a sync started
        app.live.contents_changed({"agent:main:main"})
        await until(pilot, lambda: app.live._refresh_timer is None)  # it fired: nothing to refresh
        await pilot.pause()
        assert app._exception is None and app.is_running


@pytest.mark.slow
async def test_a_conversation_screen_taken_down_drops_its_late_windows() -> None:
    source = FakeSource(100)
    screen = ConversationScreen(source, "f50", frozen, SearchRequest("x"))
    host = Host(screen)
    async with host.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: screen.view is not None and screen.view.asked is None)
        outline = source.outline()
        await screen.remove_children()
        window = source.window(0, 40)
        for message in (WindowRead(0, window, "center", 10), WindowRead(40, window, "after", None),
                        HitsFound(SearchRequest("x"), ["f1"]),
                        ConversationOpened(outline, [], 0, window, 0)):
            screen.post_message(message)
        await pilot.pause()
        await pilot.pause()
        assert host._exception is None and host.is_running


# --- lows ---------------------------------------------------------------------------------


class HitsAt(FakeSource):
    def hits(self, request: SearchRequest) -> list[str]:
        return ["f5", "f60", "f133"]


@pytest.mark.slow
async def test_wrapping_back_to_the_last_hit_names_its_message() -> None:
    source = HitsAt(140)
    screen = ConversationScreen(source, "f5", frozen, SearchRequest("x"))
    async with Host(screen).run_test(size=(100, 30)) as pilot:
        position = screen.query_one("#conversation-position", Static)
        await until(pilot, lambda: "hit 1 of 3" in position.content.plain
                    and screen.view is not None and screen.view.asked is None)
        await pilot.press("N")  # from the first hit round to the last
        await until(pilot, lambda: "hit 3 of 3" in position.content.plain
                    and screen.view.asked is None and screen.view.in_view(133))
        await pilot.pause()
        assert "message 134 of 140" in position.content.plain
        await pilot.press("n")  # and round again to the first
        await until(pilot, lambda: "hit 1 of 3" in position.content.plain
                    and screen.view.asked is None and screen.view.in_view(5))
        await pilot.pause()
        assert "message 6 of 140" in position.content.plain


@pytest.mark.backends
def test_a_made_up_label_gives_way_to_the_first_message(state: StateDir, tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for sid, name in (("0b7c41d2-5f0e-4c7a-9d61-0d3f5b1e2a77", "{}.jsonl"),
                      ("7e1a9c55-2b4d-4f1e-8a3c-5d6e7f8a9b0c", "{}.jsonl.reset.2026-11-30T07-42")):
        events = [header(sid), msg(f"{sid[:4]}0", None, "user", "Plan the heron release"),
                  msg(f"{sid[:4]}1", f"{sid[:4]}0", "assistant", "Planned.")]
        (folder / name.format(sid)).write_text("".join(json.dumps(e) + "\n" for e in events))
    import_openclaw(state, folder, agent="main")
    reconcile_agent(state, "main")
    listed = visible_session_list(state, OPERATOR)
    assert sorted(s.label.split(" ")[0] for s in listed) == ["imported", "reset"]
    assert [s.display_title for s in listed] == ["Plan the heron release"] * 2
    # a label someone wrote still wins
    meta = SessionMeta("agent:main:named", session_id="sid-named", label="Release notes")
    with state.open("main", write=True) as db:
        for event in (header("sid-named"), msg("n0", None, "user", "first words")):
            db.append(meta, json.dumps(event))
    named = next(s for s in visible_session_list(state, OPERATOR) if s.key == "agent:main:named")
    assert named.display_title == "Release notes"


@pytest.mark.slow
async def test_the_footer_names_ctrl_q_and_q_quits_only_outside_the_bar(state: StateDir) -> None:
    add_session(state, "agent:main:main", [("user", "the heron migration")])
    app = app_for(state, sources=False, poll_interval=NEVER)
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: bool(app.search_screen.results.results))
        footer = app.search_screen.query_one(Footer)
        await until(pilot, lambda: bool(footer.query("FooterKey")))  # composed after a frame
        shown = [(k.key_display, k.description) for k in footer.query("FooterKey")]
        assert ("^q", "Quit") in shown
        assert app.search_screen.search_input.has_focus
        await pilot.press("q")  # in the search bar q is text
        assert app.search_screen.search_input.value == "q" and app.return_code is None
        await pilot.press("ctrl+q")
        assert app.return_code == 0
    app = app_for(state, sources=False, poll_interval=NEVER)
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: bool(app.search_screen.results.results))
        await pilot.press("tab")
        assert app.return_code is None
        await pilot.press("q")  # from the list q quits
        assert app.return_code == 0


@pytest.mark.slow
async def test_a_filters_drop_down_opens_inside_its_dialog(state: StateDir) -> None:
    for n in range(12):  # twelve projects: a long list
        tool_session(state, f"agent:cc:claude-code:5f0c8a5e-1f0e-4c7a-9d61-0d3f5b1e2a{n:02d}",
                     "claude-code", f"/home/me/src/project-{n}", [("user", f"work {n}")],
                     start_ms=n * 60_000)
    app = app_for(state, sources=False, poll_interval=NEVER)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: bool(app.search_screen.results.results))
        await pilot.press("tab", "f")
        await until(pilot, lambda: isinstance(app.screen, FiltersScreen))
        screen = app.screen
        dialog = screen.query_one("#filters-dialog")
        for name in ("agent", "project", "period"):
            select = screen.query_one(f"#filter-{name}", Select)
            select.focus()
            await pilot.press("enter")
            overlay = select.query_one(SelectOverlay)
            await until(pilot, lambda: select.expanded and overlay.region.height > 1)
            await pilot.pause(0.1)
            assert dialog.region.contains_region(overlay.region), (name, overlay.region,
                                                                   dialog.region)
            await pilot.press("escape")
            await until(pilot, lambda: not select.expanded)


@pytest.mark.backends
@pytest.mark.slow
async def test_the_status_bar_says_incognito_sessions_are_not_listed(state: StateDir) -> None:
    add_session(state, "agent:main:main", [("user", "the heron migration")])
    add_session(state, "agent:main:subagent:incognito-a1", [("user", "private words")],
                start_ms=600_000)
    app = app_for(state, sources=False, poll_interval=NEVER, grouped=True)
    async with app.run_test(size=(140, 35)) as pilot:
        await until(pilot, lambda: app.status is not None and bool(app.search_screen.results.results))
        assert [r.key for r in app.search_screen.results.results] == ["agent:main:main"]
        assert count_text(app).startswith("1 conversation")
        await until(pilot, lambda: "2 sessions (1 incognito not listed), up to date"
                    in app.search_screen.status_bar.plain_text())
