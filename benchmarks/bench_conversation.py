"""Opening and scrolling a long conversation (not a test): SPEC's bad-input case, a
conversation of 50,000 messages "opens in under a second and scrolls smoothly".

Builds (once, under ``/tmp``) a state with one conversation of ``--messages`` user and
assistant messages (a tool call and its result every tenth turn), indexed, then measures:

- core: the outline (cold: its cache emptied first; read from the stored branch messages,
  and computed from the log as while they lag behind it), ``sessions_history`` of the newest
  20 messages (read in a window, and from the whole log as while they lag), the first
  window of 60 messages and the hits of a word, against the baseline measured in the same
  run: ``sessions_history`` of the whole branch, what the browser read before windows;
- browser: from ``enter`` on the result to the conversation laid out at its hit (with the
  outline not read yet, and after the preview read it), and one ``pagedown`` (handled and
  painted) at a time through ~600 messages, windows read on the way, against paging through a
  conversation of 80 messages shown whole (the baseline).

    .venv/bin/python benchmarks/bench_conversation.py [--messages 50000] [--runs 7]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path
from unittest import mock

from backscroll.core import conversation
from backscroll.core.conversation import conversation_outline, conversation_window, session_hits
from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.reconcile import reconcile_all
from backscroll.core.search import SearchRequest
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.storage.sqlite.browsing import BrowseReads
from backscroll.core.visibility import OPERATOR
from backscroll.tui.app import make_app
from backscroll.tui.screens import ConversationScreen

KEY = "agent:main:long"
BASE_MS = 1_780_000_000_000


def prepare(messages: int) -> StateDir:
    path = Path(f"/tmp/backscroll-bench-conversation/m{messages}")
    state = StateDir(path)
    if (path / ".ready").is_file():
        reconcile_all(state)  # a state from an older backscroll: upgraded, caught up
        return state
    lines = [json.dumps({"type": "session", "version": 3, "id": "long",
                         "timestamp": "2026-05-28T00:00:00Z", "cwd": "/work/long"})]
    parent = None
    for i in range(messages):
        role = "user" if i % 2 == 0 else "assistant"
        content: list[dict] = [{"type": "text", "text": f"turn {i}: the heron count on shelf "
                                f"{i % 97} is {i % 13}, checking the ledger again"}]
        if role == "assistant" and i % 10 == 1:
            content.append({"type": "toolCall", "name": "exec", "arguments": {"cmd": "ls"}})
        lines.append(json.dumps({"type": "message", "id": f"m{i}", "parentId": parent,
                                 "timestamp": BASE_MS + i * 1000,
                                 "message": {"role": role, "content": content,
                                             "timestamp": BASE_MS + i * 1000}}))
        parent = f"m{i}"
        if role == "assistant" and i % 10 == 1:
            lines.append(json.dumps({"type": "message", "id": f"t{i}", "parentId": parent,
                                     "timestamp": BASE_MS + i * 1000 + 500,
                                     "message": {"role": "toolResult", "toolName": "exec",
                                                 "content": [{"type": "text", "text": "a b c"}]}}))
            parent = f"t{i}"
    short = [json.dumps({"type": "message", "id": f"s{i}", "parentId": f"s{i - 1}" if i else None,
                         "timestamp": BASE_MS + i, "message": {"role": "user", "content":
                         f"shortone {i}: a shorter talk, shown whole"}}) for i in range(80)]
    with state.open("main", write=True) as db:
        db.import_session(SessionMeta(KEY, session_id="long"), lines)
        db.import_session(SessionMeta("agent:main:short", session_id="short"), short)
    reconcile_all(state)
    (path / ".ready").write_text("ready\n")
    return state


def timed(call, runs: int) -> list[float]:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(runs):
        conversation._cache.clear()  # cold: the outline is read again
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def row(name: str, samples: list[float], base: list[float] | None) -> str:
    ratio = f"{statistics.median(samples) / statistics.median(base):>8.2f}" if base else f"{'':>8}"
    return (f"{name:<44}{len(samples):>5}{statistics.median(samples):>9.1f}"
            f"{percentile(samples, 0.95):>9.1f}{ratio}")


def core(state: StateDir, runs: int) -> None:
    history = timed(lambda: sessions_history(state, HistoryRequest(
        KEY, limit=None, include_tools=True, max_bytes=8 * 1024 * 1024), OPERATOR), runs)
    outline = timed(lambda: conversation_outline(state, OPERATOR, KEY), runs)
    newest = HistoryRequest(KEY, limit=20)  # what an agent's sessions_history asks by default
    window = timed(lambda: sessions_history(state, newest, OPERATOR), runs)
    with mock.patch.object(BrowseReads, "branch_messages", lambda *_: None):  # as if lagging
        computed = timed(lambda: conversation_outline(state, OPERATOR, KEY), runs)
        window_whole = timed(lambda: sessions_history(state, newest, OPERATOR), runs)
    middle = len(conversation_outline(state, OPERATOR, KEY)) // 2

    def opened() -> None:
        conversation_outline(state, OPERATOR, KEY)
        conversation_window(state, OPERATOR, KEY, middle - 30, middle + 30)
        session_hits(state, OPERATOR, SearchRequest("ledger", session_key=KEY))

    opening = timed(opened, runs)
    warm = []
    for _ in range(runs):
        start = time.perf_counter()
        conversation_window(state, OPERATOR, KEY, middle, middle + 60)
        warm.append((time.perf_counter() - start) * 1000)
    print(f"\n{'core (ms; ratio of p50 against the whole history)':<44}{'runs':>5}{'p50':>9}"
          f"{'p95':>9}{'ratio':>8}")
    print(row("history of the whole branch (baseline)", history, history))
    print(row("outline, cold", outline, history))
    print(row("outline, cold, computed from the log", computed, history))
    print(row("history, newest 20, read in a window", window, history))
    print(row("history, newest 20, from the whole log", window_whole, history))
    print(row("outline + first window + hits, cold", opening, history))
    print(row("a window of 60 messages, outline cached", warm, history))


async def _open(pilot, app, cold: bool) -> float:  # type: ignore[no-untyped-def]
    """Enter on the highlighted row until the conversation is laid out at its hit; ``cold``:
    its outline not read yet (else the preview, which reads it, came first)."""
    if cold:
        conversation._cache.clear()
    start = time.perf_counter()
    press = asyncio.create_task(pilot.press("enter"))  # not waiting for the app to go idle:
    while not (isinstance(app.screen, ConversationScreen) and app.screen.view is not None
               and app.screen.view.views and app.screen.view.asked is None):  # laid out
        await asyncio.sleep(0.001)
    elapsed = (time.perf_counter() - start) * 1000
    await press
    await pilot.pause()
    return elapsed


async def _pages(pilot, count: int) -> list[float]:  # type: ignore[no-untyped-def]
    steps = []
    for _ in range(count):
        start = time.perf_counter()
        await pilot.press("pagedown")
        await pilot.pause()
        steps.append((time.perf_counter() - start) * 1000)
    return steps


async def browser(state: StateDir, runs: int) -> None:
    app = make_app(state, auto_reconcile=False, sources=False)
    cold, warm = [], []
    async with app.run_test(size=(120, 35)) as pilot:
        while app.status is None or not app.search_screen.results.rows:
            await pilot.pause(0.02)
        await pilot.press(*"ledger")
        while app.search_screen.results.shown_for != "ledger":
            await pilot.pause(0.01)
        for n in range(runs * 2):
            if n % 2:  # let the preview read the outline first, as after a glance at it
                while app.search_screen.history.shown is None or app.search_screen.history.shown[0] != KEY:
                    await pilot.pause(0.01)
            (warm if n % 2 else cold).append(await _open(pilot, app, cold=not n % 2))
            if n == runs * 2 - 1:
                long_steps = await _pages(pilot, 60)  # ~600 messages at 120x35
            await pilot.press("escape")
            while app.screen is not app.search_screen:
                await pilot.pause(0.01)
        # the baseline: paging through a short conversation, all of it shown at once
        app.search_screen.search_input.value = ""
        await pilot.press(*"shortone")
        while app.search_screen.results.shown_for != "shortone" or not app.search_screen.results.rows:
            await pilot.pause(0.01)
        await _open(pilot, app, cold=False)
        short_steps = await _pages(pilot, 30)
    print(f"\n{'browser (ms; ratio against the short one)':<44}{'runs':>5}{'p50':>9}{'p95':>9}"
          f"{'ratio':>8}")
    print(row("enter to laid out at its hit, outline cold", cold, None))
    print(row("enter to laid out at its hit, after preview", warm, None))
    print(row("pagedown, short conversation (baseline)", short_steps, short_steps))
    print(row("pagedown, long conversation (windows)", long_steps, short_steps))
    verdict = "under" if percentile(cold, 0.95) < 1000 else "over"
    print(f"\ncold opening p95 {percentile(cold, 0.95):.0f} ms: {verdict} the one second asked for")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    started = time.perf_counter()
    state = prepare(args.messages)
    print(f"state: {state.path} ({args.messages:,} messages in one conversation; ready in "
          f"{time.perf_counter() - started:.1f} s)")
    core(state, args.runs)
    asyncio.run(browser(state, args.runs))


if __name__ == "__main__":
    main()
