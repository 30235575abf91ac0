"""A token can sit in any field, not only in text: message ids, session ids, keys, labels and
image types are redacted wherever they leave the core (search, history, exports, the session
list, CLI text and JSON, the browser), and terminal escapes in them never reach a terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import OptionList

from backscroll.core.catalog import list_sessions
from backscroll.core.export import export_conversation
from backscroll.core.grouped import conversations_search
from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.visibility import OPERATOR
from backscroll.tui.cli import main
from backscroll.tui.screens import ConversationScreen, ViewAsScreen

from .events import header, msg
from .test_tui import app_for, previewed, type_query, until

pytestmark = pytest.mark.backends  # storage behaviour: on both backends

TOKEN = "ghp_A1b2C3d4E5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # GitHub: masked as ghp_A1…q7R8
KEY = "agent:main:xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx"  # Slack, lower case
ESCAPES = "\x1b]0;pwned\x07\x1b[2J"  # a window-title change and a screen clear
LEAKS = (TOKEN, "abcdefghijklmnopqrstuvwx", "hunter2hunter2", "\x1b")


def seeded(state: StateDir) -> StateDir:
    meta = SessionMeta(KEY, session_id=f"sid:{TOKEN}", label="deploy password=hunter2hunter2")
    image = {"type": "image", "data": "AAAA", "mimeType": f"image/png; token={TOKEN}"}
    events = [
        header(f"sid:{TOKEN}"),
        msg(f"m:{TOKEN}", None, "user", "where is the heron report"),
        msg(f"m2{ESCAPES}", f"m:{TOKEN}", "assistant", [{"type": "text", "text": "heron found"},
                                                        image]),
    ]
    with state.open("main", write=True) as db:
        for event in events:
            db.append(meta, json.dumps(event))
    return state


def leaks(text: str) -> list[str]:
    return [leak for leak in LEAKS if leak in text]


def test_search_history_exports_and_the_session_list_redact_every_field(state: StateDir) -> None:
    seeded(state)
    response = sessions_search(state, SearchRequest("heron"), OPERATOR)
    assert len(response.results) == 2
    assert leaks(json.dumps(response.as_json(), ensure_ascii=False)) == []  # escapes: \u001b
    result = next(r for r in response.results if r.role == "user")
    assert result.message_id == "m:ghp_A1…q7R8" and result.session_id == "sid:ghp_A1…q7R8"
    assert response.as_json()["results"][0]["sessionKey"] == "agent:main:xoxb-1…uvwx"

    history = sessions_history(state, HistoryRequest(KEY, message_id=result.message_id), OPERATOR)
    assert [m["id"] for m in history.messages] == ["m:ghp_A1…q7R8", f"m2{ESCAPES}"]
    as_raw = sessions_history(state, HistoryRequest(KEY, message_id=f"m:{TOKEN}"), OPERATOR)
    assert as_raw.messages == history.messages  # an anchor may name either form
    text = json.dumps(history.as_json(), ensure_ascii=False)
    assert leaks(text) == [] and "[image image/png; token=ghp_A1…q7R8, 0 KB]" in text

    for fmt in ("markdown", "json"):
        exported = export_conversation(state, KEY, OPERATOR, fmt)
        assert not leaks(exported.replace("\x1b", "")) and "xoxb-1…uvwx" in exported
    [summary] = list_sessions(state)
    assert summary.label == "deploy password=***"
    assert TOKEN not in summary.session_id


def test_cli_text_and_json_show_no_token_and_no_escape(state: StateDir, capsys) -> None:
    seeded(state)
    base = ["--state-dir", str(state.path)]
    for argv in (
        ["search", "heron"],
        ["history", KEY],
        ["history", KEY, "--message-id", f"m:{TOKEN}"],
        ["status"],
        ["verify"],
    ):
        assert main(base + argv) == 0, argv
        out, err = capsys.readouterr()
        assert leaks(out + err) == [], (argv, out)
    assert main(base + ["history", KEY, "--message-id", f"m:{TOKEN}"]) == 0
    assert "▶ user" in capsys.readouterr().out  # the raw anchor is marked
    for argv in (["search", "heron", "--json"], ["history", KEY, "--json"], ["status", "--json"]):
        assert main(base + argv) == 0
        out, err = capsys.readouterr()
        assert TOKEN not in out and "hunter2hunter2" not in out and not leaks(err)
    assert main(base + ["delete", KEY, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["deleted"] == "agent:main:xoxb-1…uvwx"
    assert main(base + ["history", "agent:main:main\x1b[2J"]) == 2
    assert "\x1b" not in capsys.readouterr().err


@pytest.mark.slow
async def test_the_browser_shows_no_token(state: StateDir, tmp_path: Path) -> None:
    seeded(state)
    app = app_for(state)
    async with app.run_test(size=(140, 40)) as pilot:
        await type_query(pilot, app, "heron")
        await until(pilot, lambda: previewed(app))
        screen = app.search_screen
        painted = screen.results.get_option_at_index(0).prompt.plain + screen.history.plain_text()
        assert leaks(painted) == [] and "xoxb-1…uvwx" in painted and "ghp_A1…q7R8" in painted
        assert "[image image/png; token=ghp_A1…q7R8, 0 KB]" in painted
        assert "▶" in app.search_screen.history.plain_text()  # the hit is still found and marked
        await pilot.press("tab", "v")
        await until(pilot, lambda: isinstance(app.screen, ViewAsScreen))
        listing = app.screen.query_one("#view-as-list", OptionList)
        shown = "\n".join(listing.get_option_at_index(i).prompt.plain
                          for i in range(listing.option_count))
        assert leaks(shown) == [] and "xoxb-1…uvwx" in shown and "password=***" in shown
        await pilot.press("slash", *"xoxb-1", "enter")  # filtering matches what is shown
        await until(pilot, lambda: app.caller.key == KEY)  # and the real key is used
        assert leaks(app.search_screen.status_bar.plain_text()) == []


@pytest.mark.slow
async def test_home_grouped_rows_and_the_conversation_show_no_token(state: StateDir) -> None:
    seeded(state)
    with state.open("main", write=True) as db:  # a title that holds a token
        meta = SessionMeta("agent:main:other", session_id="sid-other")
        db.append(meta, json.dumps(header("sid-other")))
        db.append(meta, json.dumps(msg("o1", None, "user", f"use GITHUB_TOKEN={TOKEN} for heron")))
    grouped = conversations_search(state, SearchRequest("heron"), OPERATOR)
    assert leaks(json.dumps(grouped.as_json(), ensure_ascii=False)) == []
    app = app_for(state, grouped=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: len(app.search_screen.results.rows) == 2
                    and app.search_screen.results.shown_for == "")
        home = "\n".join(app.search_screen.results.get_option_at_index(i).prompt.plain for i in range(2))
        assert leaks(home) == [] and "GITHUB_TOKEN=ghp_A1…q7R8" in home
        await type_query(pilot, app, "heron")
        rows = "\n".join(app.search_screen.results.get_option_at_index(i).prompt.plain
                         for i in range(len(app.search_screen.results.rows)))
        assert leaks(rows) == [] and "xoxb-1…uvwx" in rows
        while app.search_screen.results.current.session.key != KEY:
            await pilot.press("down")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConversationScreen)
                    and app.screen.view is not None and bool(app.screen.view.views))
        shown = app.screen.view.plain_text() + app.screen.query_one(
            "#conversation-title").content.plain
        assert leaks(shown.replace(ESCAPES, "")) == [] and "m:ghp_A1…q7R8" in shown
        assert "\x1b" not in shown  # the escapes of an id are shown as control pictures
        await pilot.press("r")  # an OpenClaw session: its key, redacted as shown
        await until(pilot, lambda: bool(app.clipboard))
        assert leaks(app.clipboard) == []
