"""The browser's side of the tool-call index (issue 26): the search screen's tool mode (``t``),
its filters (a tool's name, failed only), a call's row, opening the conversation at the call,
and the calls screen (``c``: what an agent did, newest first). Pure formatting is tested
fast; the screens with Pilot (slow)."""

from __future__ import annotations

from typing import Any

import pytest
from rich.text import Text

from backscroll.core.search import SearchRequest
from backscroll.core.state import StateDir
from backscroll.core.tool_search import ToolHit, ToolSearchResponse
from backscroll.core.visibility import Caller, Policy
from backscroll.tui.amounts import duration_text
from backscroll.tui.screens import CallsScreen, ConversationScreen
from backscroll.tui.screens.calls import CallsWhat, agent_of, calls_count_line
from backscroll.tui.screens.filters import Filters
from backscroll.tui.text import Palette
from backscroll.tui.widgets.results import count_line, row_identity
from backscroll.tui.widgets.tool_rows import status_word, tool_prompt

from .events import BASE_MS
from .test_tui import NOW, app_for, frozen, until
from .test_tui_folding import KEY, incident

PALETTE = Palette(error="bold #ff0000", key="cyan", title="bold")


def hit(**fields: Any) -> ToolHit:
    base: dict[str, Any] = dict(
        session_key=KEY, session_id="sid", agent="ops", message_id="m1", call_id="c1",
        tool="bash", arguments="./deploy.sh billing-api v2.22.0",
        status="failed", duration_ms=2500, timestamp=BASE_MS + 3_600_000,
        excerpt="deploy.sh: deploy failed with exit code 1", score=0.0)
    base.update(fields)
    return ToolHit(**base)


def style_of(text: Text, word: str) -> str:
    at = text.plain.index(word)
    return " ".join(str(s.style) for s in text.spans if s.start <= at < s.end)


# --- fast: how a call is written ---------------------------------------------------------


def test_a_call_row_shows_tool_status_duration_time_arguments_and_session() -> None:
    row = tool_prompt(hit(), frozen, 80, PALETTE)
    lines = row.plain.split("\n")
    assert lines[0] == "bash  failed  2.5 s  2 hours ago"
    assert lines[1] == "./deploy.sh billing-api v2.22.0"
    assert lines[2] == KEY
    assert lines[3] == "deploy.sh: deploy failed with exit code 1"  # a listed call: its result
    assert style_of(row, "failed") == PALETTE.error  # the theme's error colour


@pytest.mark.parametrize(("status", "word", "style"), [
    ("ok", "ok", "green"), ("none", "no result", "dim"), ("failed", "failed", "bold #ff0000")])
def test_a_status_is_a_word_and_only_failed_takes_the_error_colour(status: str, word: str,
                                                                    style: str) -> None:
    assert status_word(status) == word
    row = tool_prompt(hit(status=status, duration_ms=None), frozen, 80, PALETTE)
    assert row.plain.split("\n")[0] == f"bash  {word}  2 hours ago"
    assert style_of(row, word) == style


def test_long_arguments_are_cut_to_the_row_on_one_line() -> None:
    row = tool_prompt(hit(arguments="x" * 50 + "\nsecond line"), frozen, 30)
    arguments = row.plain.split("\n")[1]
    assert arguments == "x" * 29 + "…"


def test_a_match_already_in_the_arguments_is_not_repeated_below_them() -> None:
    found = hit(excerpt="bash ./deploy.sh billing-api", highlights=((5, 11),))  # "./depl"…
    assert len(tool_prompt(found, frozen, 80).plain.split("\n")) == 3
    in_output = hit(excerpt="manifest unknown", highlights=((0, 8),))
    row = tool_prompt(in_output, frozen, 80, PALETTE)
    assert row.plain.split("\n")[3] == "manifest unknown"
    assert style_of(row, "manifest") == PALETTE.match


def test_a_match_in_the_output_is_shown_from_near_it_not_from_the_call_s_json() -> None:
    excerpt = ('bash {"command": "./deploy.sh billing-api v2.22.0"} Deploying billing-api '
               "v2.22.0 to production")
    at = excerpt.index("Deploying")
    found = hit(excerpt=excerpt, highlights=((excerpt.index("deploy"), excerpt.index("deploy") + 6),
                                             (at, at + 9)))
    line = tool_prompt(found, frozen, 200, PALETTE).plain.split("\n")[3]
    assert line == '…billing-api v2.22.0"} Deploying billing-api v2.22.0 to production'
    assert style_of(tool_prompt(found, frozen, 200, PALETTE), "Deploying") == PALETTE.match


def test_control_characters_in_a_call_are_shown_not_run() -> None:
    row = tool_prompt(hit(tool="ba\x1b[31msh", arguments="a\x07b"), frozen, 80)
    assert "\x1b" not in row.plain and "\x07" not in row.plain
    assert row.plain.startswith("ba␛[31msh")


@pytest.mark.parametrize(("ms", "said"), [
    (0, "0 ms"), (999, "999 ms"), (1000, "1.0 s"), (59_949, "59.9 s"), (60_000, "1m 00s"),
    (3_599_000, "59m 59s"), (3_600_000, "1h 00m"), (7_380_000, "2h 03m")])
def test_call_durations(ms: int, said: str) -> None:
    assert duration_text(ms) == said


def test_two_calls_of_one_message_are_two_rows() -> None:
    assert row_identity(hit(call_id="a")) != row_identity(hit(call_id="b"))


def test_the_count_line_of_tool_calls() -> None:
    response = ToolSearchResponse()
    assert count_line(SearchRequest("deploy"), [], response).plain == "no tool calls for deploy"
    assert count_line(SearchRequest(""), [], response).plain == "no tool calls to show"
    response.truncated = True
    assert count_line(SearchRequest(""), [hit()], response).plain == (
        "1 tool call, newest first · more before them")
    assert count_line(SearchRequest("x"), [hit(), hit()], response).plain == (
        "2 tool calls · more matched")


def test_tool_filters_say_themselves_only_for_tool_calls() -> None:
    filters = Filters(role="user", tool="bash", failed=True)
    assert filters.of_tools and filters.active
    assert filters.labels(tools=False) == ["user only"]
    assert filters.labels(tools=True) == ["tool bash", "failed only"]
    assert not Filters().active and not Filters().of_tools
    assert Filters(failed=True).active


def test_the_calls_window_walks_day_week_month_all() -> None:
    what = CallsWhat(agent="ops")
    assert what.window_id == "7d" and CallsWhat(session_key=KEY).window_id == "all"
    seen = []
    for _ in range(4):
        what = what.next_window()
        seen.append(what.window_id)
    assert seen == ["30d", "all", "1d", "7d"]
    assert what.since_ms(NOW) == int(NOW * 1000) - 7 * 86_400_000
    assert CallsWhat(session_key=KEY).since_ms(NOW) is None
    assert CallsWhat(agent="ops", failed=True).describe() == "agent ops · last 7 days · failed only"
    assert CallsWhat().describe() == "every agent · last 7 days"


def test_a_session_key_names_its_agent() -> None:
    assert agent_of("agent:ops:session-incident") == "ops"
    assert agent_of("agent:main:subagent:4f1c") == "main"
    assert agent_of("agent::x") is None and agent_of("ops") is None


def test_the_calls_count_line() -> None:
    assert calls_count_line([], False).plain == "no tool calls to show"
    assert calls_count_line([hit(), hit(status="ok")], True).plain == (
        "2 tool calls, newest first · 1 failed · more before them")


# --- slow: the screens ---------------------------------------------------------------------


def _rows(app: Any) -> list[Any]:
    return app.search_screen.results.rows


@pytest.mark.slow
@pytest.mark.backends  # the browser on a team server too
async def test_tool_mode_finds_a_failed_call_and_opens_the_conversation_at_it(
        state: StateDir) -> None:
    app = app_for(incident(state))
    async with app.run_test(size=(140, 44)) as pilot:
        await until(pilot, lambda: app.ready and app.status is not None)
        await pilot.press("tab", "t")  # from the results: letters are commands
        screen = app.search_screen
        assert screen.tools and screen.search_input.border_title == "tool calls"
        assert "tool calls" in screen.context_line()
        # an empty bar lists the newest calls
        await until(pilot, lambda: len(_rows(app)) == 3)
        assert all(isinstance(r, ToolHit) for r in _rows(app))
        await pilot.press("slash", *"deploy")
        await until(pilot, lambda: screen.last_request is not None
                    and screen.last_request.query == "deploy" and _rows(app))
        deploy = next(r for r in _rows(app) if "./deploy.sh" in r.arguments)
        assert deploy.status == "failed"
        screen.results.highlighted = _rows(app).index(deploy)
        shown = screen.results._prompt(deploy, 400, 60).plain
        assert shown.startswith("bash  failed") and "./deploy.sh billing-api v2.22.0" in shown
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        conversation = app.screen
        await until(pilot, lambda: conversation.view is not None
                    and 1 in conversation.view.whole)  # the call's message, unfolded
        view = conversation.view
        assert view.selected == 1 and view.hit == 1
        assert "▾ bash  failed" in view.plain_text()


@pytest.mark.slow
@pytest.mark.backends  # the browser on a team server too
async def test_the_tool_filters_list_failed_calls_of_a_tool(state: StateDir) -> None:
    from backscroll.tui.messages import FiltersChanged

    app = app_for(incident(state))
    async with app.run_test(size=(140, 44)) as pilot:
        await until(pilot, lambda: app.ready and app.status is not None)
        screen = app.search_screen
        assert not screen.tools
        app.post_message(FiltersChanged(Filters(tool="BASH", failed=True)))
        await until(pilot, lambda: screen.tools and len(_rows(app)) == 2)  # implies tool mode
        assert [r.status for r in _rows(app)] == ["failed", "failed"]
        assert [r.timestamp for r in _rows(app)] == sorted(
            (r.timestamp for r in _rows(app)), reverse=True)


@pytest.mark.slow
@pytest.mark.backends  # the browser on a team server too
async def test_the_calls_screen_lists_newest_first_filters_failed_and_opens_a_call(
        state: StateDir) -> None:
    app = app_for(incident(state))
    async with app.run_test(size=(140, 44)) as pilot:
        await until(pilot, lambda: app.ready and app.status is not None)
        await until(pilot, lambda: bool(_rows(app)))  # the recent conversations
        await pilot.press("tab", "c")
        await until(pilot, lambda: isinstance(app.screen, CallsScreen))
        calls = app.screen
        assert calls.what == CallsWhat(agent="ops")
        await until(pilot, lambda: len(calls.rows.rows) == 3)
        assert [c.arguments for c in calls.rows.rows] == [  # newest first
            "git push --force origin main", "git push origin main",
            "./deploy.sh billing-api v2.22.0"]
        await pilot.press("f")
        await until(pilot, lambda: calls.what.failed and len(calls.rows.rows) == 2)
        assert {c.status for c in calls.rows.rows} == {"failed"}
        assert "failed only" in calls.query_one("#calls-title").content.plain
        await pilot.press("down", "enter")  # the older failed call: the deploy
        await until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        conversation = app.screen
        await until(pilot, lambda: conversation.view is not None
                    and 1 in conversation.view.whole)
        assert conversation.view.selected == 1
        await pilot.press("escape")
        assert app.screen is calls


@pytest.mark.slow
async def test_a_caller_without_the_grant_sees_no_calls_as_if_none_matched(
        state: StateDir) -> None:
    caller = Caller(KEY, Policy(visibility="agent"))  # toolCalls not granted
    app = app_for(incident(state), caller=caller)
    async with app.run_test(size=(140, 44)) as pilot:
        await until(pilot, lambda: app.ready and app.status is not None)
        await pilot.press("tab", "t")
        screen = app.search_screen
        await pilot.press("slash", *"deploy")
        await until(pilot, lambda: screen.last_request is not None
                    and screen.last_request.query == "deploy")
        assert _rows(app) == []
        count = screen.query_one("#count").content.plain
        assert count == "no tool calls for deploy"  # as for words that match nothing


@pytest.mark.slow
async def test_the_filters_dialog_takes_a_tool_name_and_failed_only() -> None:
    from textual.widgets import Checkbox, Input

    from backscroll.tui.messages import FiltersChanged
    from backscroll.tui.screens import FiltersScreen

    from .test_tui_browse import Host

    changes: list[Filters] = []

    class FilterHost(Host):
        def on_filters_changed(self, message: FiltersChanged) -> None:
            changes.append(message.filters)

    screen = FiltersScreen(Filters(agent="ops"), ["main", "ops"], [])
    async with FilterHost(screen).run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        screen.query_one("#filter-tool", Input).focus()
        await pilot.press(*"exec")  # letters in the field are text, not the dialog's keys
        await until(pilot, lambda: bool(changes) and changes[-1].tool == "exec")
        assert isinstance(pilot.app.screen, FiltersScreen)
        screen.query_one("#filter-failed", Checkbox).value = True
        await until(pilot, lambda: changes[-1] == Filters(agent="ops", tool="exec", failed=True))
        screen.query_one("#filter-tool", Input).value = "  "  # blank: any tool
        await until(pilot, lambda: changes[-1] == Filters(agent="ops", failed=True))
        screen.query_one("#filter-failed", Checkbox).focus()
        await pilot.press("x")
        await until(pilot, lambda: changes[-1] == Filters())
        assert not screen.query_one("#filter-failed", Checkbox).value


@pytest.mark.slow
def test_snapshot_tool_mode_results(snap_compare: Any, state: StateDir) -> None:
    """Tool mode: the bar titled "tool calls", call rows (a failed one in the error colour),
    the preview at the highlighted call, "tool calls" in the status bar."""
    from .test_tui_snapshots import build, preview_shown, snapshot_app, waiting_for

    app = snapshot_app(incident(build(state)), now=frozen)

    async def run_before(pilot: Any) -> None:
        await waiting_for(preview_shown, "tab", "t", "slash", *"deploy")(pilot)
        app.clear_notifications()  # "searching tool calls" shows for 2 s: not in the picture
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=(130, 36), run_before=run_before)


@pytest.mark.slow
async def test_c_in_a_conversation_lists_its_session_s_switches_to_its_agent(
        state: StateDir) -> None:
    app = app_for(incident(state))
    async with app.run_test(size=(140, 44)) as pilot:
        await until(pilot, lambda: app.ready and app.status is not None)
        await until(pilot, lambda: bool(_rows(app)))
        await pilot.press("tab", "enter")
        await until(pilot, lambda: isinstance(app.screen, ConversationScreen)
                    and app.screen.view is not None)
        conversation = app.screen
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, CallsScreen))
        calls = app.screen
        assert calls.what == CallsWhat(session_key=KEY)  # all time: a session is short
        await until(pilot, lambda: len(calls.rows.rows) == 3)
        assert {c.session_key for c in calls.rows.rows} == {KEY}
        await pilot.press("s")
        await until(pilot, lambda: calls.what == CallsWhat(agent="ops")
                    and calls.response is not None and len(calls.rows.rows) == 3)
        await pilot.press("w")  # 7 days -> 30 days
        assert calls.what.window_id == "30d"
        await pilot.press("escape")
        assert app.screen is conversation
        await pilot.press("escape")
        assert app.screen is app.search_screen
        await pilot.press("t", "g")  # tool calls are never grouped: g says so, changes nothing
        assert app.search_screen.tools and app.search_screen.grouped is False
