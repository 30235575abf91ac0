"""Pilot tests of reading a conversation in full: tool calls folded to one line with their
status, unfolded on demand (``enter`` on the selected message, read whole), a cut text that
says it was cut, and ``f`` / ``F`` to the next and previous failed tool call."""

from __future__ import annotations

import json
from typing import Any

import pytest
from textual.widgets import Static

from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.visibility import OPERATOR
from backscroll.tui.screens import ConversationScreen
from backscroll.tui.screens.conversation import CoreSource
from backscroll.tui.text import plain_of

from .events import BASE_MS, header, iso
from .test_tui import frozen, until
from .test_tui_browse import Host

pytestmark = pytest.mark.slow  # every test renders the browser (docs/development.md)

KEY = "agent:ops:session-incident"
LONG = "The whole story. " * 400 + "END-OF-THE-STORY"  # 6,816 characters: cut at 4,000
DEPLOY_OUTPUT = ("Deploying billing-api v2.22.0 to production\n"
                 "billing-api-6f7c9d8b5-k2x9q   0/1   ImagePullBackOff\n"
                 "deploy.sh: deploy failed with exit code 1")


def call(name: str, command: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": f"call-{command[:6]}", "name": name,
            "arguments": {"command": command}}


def result(name: str, text: str, error: bool) -> dict[str, Any]:
    return {"role": "toolResult", "toolName": name, "isError": error,
            "content": [{"type": "text", "text": text}]}


MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": [{"type": "text", "text": "Deploy billing-api v2.22.0."}]},
    {"role": "assistant", "content": [call("bash", "./deploy.sh billing-api v2.22.0")]},
    result("bash", DEPLOY_OUTPUT, True),
    {"role": "assistant", "content": [{"type": "text", "text": "The deploy failed."}]},
    {"role": "user", "content": [{"type": "text", "text": "Do whatever it takes."}]},
    {"role": "assistant", "content": [call("bash", "git push origin main")]},
    result("bash", "! [rejected] main -> main (fetch first)", True),
    {"role": "assistant", "content": [call("bash", "git push --force origin main")]},
    result("bash", "+ 4f2a9c1...9b3e7d0 main -> main (forced update)", False),
    {"role": "assistant", "content": [{"type": "text", "text": LONG}]},
]


def incident(state: StateDir) -> StateDir:
    events: list[dict[str, Any]] = [header("sid-incident")]
    parent = None
    for n, message in enumerate(MESSAGES):
        ms = BASE_MS + (n + 1) * 60_000
        events.append({"type": "message", "id": f"m{n}", "parentId": parent,
                       "timestamp": iso(ms), "message": {**message, "timestamp": ms}})
        parent = f"m{n}"
    with state.open("ops", write=True) as db:
        for event in events:
            db.append(SessionMeta(KEY, session_id="sid-incident"), json.dumps(event))
    return state


async def opened(pilot: Any, screen: ConversationScreen) -> None:
    await until(pilot, lambda: screen.view is not None and len(screen.view.views) == 10
                and screen.view.asked is None)


def shown(screen: ConversationScreen, index: int) -> str:
    """What the message at outline position ``index`` shows, as plain text."""
    assert screen.view is not None
    view = screen.view.view_of(index)
    assert view is not None
    return plain_of(view.content)


async def test_tool_calls_fold_to_one_line_with_their_status_and_unfold_on_enter(
        state: StateDir) -> None:
    screen = ConversationScreen(CoreSource(incident(state), OPERATOR, KEY), None, frozen)
    async with Host(screen).run_test(size=(120, 60)) as pilot:
        await opened(pilot, screen)
        view = screen.view
        assert view is not None
        deploy = shown(screen, 1)
        assert "▸ bash  failed  ./deploy.sh billing-api v2.22.0" in deploy
        assert "▸ bash  ok  git push --force origin main" in shown(screen, 7)
        # a result is one line too: its first line and how many more
        folded = shown(screen, 2)
        assert "↳ bash  failed · Deploying billing-api v2.22.0 to production  (+2 lines)" in folded
        assert "exit code 1" not in folded
        # the long text says it was cut, how much, and how to see it
        assert "[cut: 2,816 more characters; enter on it shows them]" in shown(screen, 9)
        assert "END-OF-THE-STORY" not in shown(screen, 9)

        # select the result (the conversation opened at its end: ] starts at the top in view)
        view.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        await pilot.press("right_square_bracket")
        assert view.selected == 0
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert view.selected == 2 and view.view_of(2).has_class("selected")
        await pilot.press("enter")
        await until(pilot, lambda: 2 in view.whole)
        unfolded = shown(screen, 2)
        assert "▾ ↳ bash  failed" in unfolded and "deploy.sh: deploy failed with exit code 1" in (
            unfolded)
        await pilot.press("enter")  # folds it again
        assert 2 not in view.whole and "exit code 1" not in shown(screen, 2)

        # the call unfolds to its arguments, whole
        await pilot.press("left_square_bracket", "enter")
        await until(pilot, lambda: 1 in view.whole)
        assert view.selected == 1
        assert "▾ bash  failed\n./deploy.sh billing-api v2.22.0" in shown(screen, 1)


async def test_a_cut_text_is_read_whole_on_enter(state: StateDir) -> None:
    screen = ConversationScreen(CoreSource(incident(state), OPERATOR, KEY), None, frozen)
    async with Host(screen).run_test(size=(120, 40)) as pilot:
        await opened(pilot, screen)
        view = screen.view
        assert view is not None
        await until(pilot, lambda: view.in_view(9))
        view.select(9)
        await pilot.press("enter")
        await until(pilot, lambda: 9 in view.whole)
        whole = shown(screen, 9)
        assert "END-OF-THE-STORY" in whole and "[cut:" not in whole


async def test_f_walks_the_failed_tool_calls_and_wraps_round(state: StateDir) -> None:
    screen = ConversationScreen(CoreSource(incident(state), OPERATOR, KEY), None, frozen)
    async with Host(screen).run_test(size=(120, 60)) as pilot:
        await opened(pilot, screen)
        view = screen.view
        assert view is not None
        position = screen.query_one("#conversation-position", Static)
        view.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        await pilot.press("f")  # the first failed call after the first message in view
        await until(pilot, lambda: view.selected == 1)
        assert "failed call 1 of 2" in position.content.plain
        await pilot.press("f")
        await until(pilot, lambda: view.selected == 5)
        assert "failed call 2 of 2" in position.content.plain
        await pilot.press("f")  # round to the first
        await until(pilot, lambda: view.selected == 1)
        await pilot.press("F")  # and back round to the last
        await until(pilot, lambda: view.selected == 5)


async def test_f_without_failed_calls_says_so(state: StateDir) -> None:
    with state.open("ops", write=True) as db:
        db.append(SessionMeta("agent:ops:quiet", session_id="q"), json.dumps(header("q")))
        db.append(SessionMeta("agent:ops:quiet", session_id="q"), json.dumps(
            {"type": "message", "id": "q1", "parentId": None, "timestamp": iso(BASE_MS + 1000),
             "message": {"role": "user", "content": [{"type": "text", "text": "hello"}]}}))
    screen = ConversationScreen(CoreSource(state, OPERATOR, "agent:ops:quiet"), None, frozen)
    async with Host(screen).run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: screen.view is not None and bool(screen.view.views))
        await pilot.press("f")
        await until(pilot, lambda: screen._failed is not None)
        await pilot.pause()
        assert any("no failed tool calls" in str(n.message) for n in screen.app._notifications)
