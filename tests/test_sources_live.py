"""Following the sources live: ``backscroll watch`` in a real subprocess, and the browser
(sync on open, new lines in the results, the empty state's one key). Waits are on conditions
with generous deadlines (the machine may be loaded), never fixed sleeps as assertions."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from backscroll.core.reconcile import reconcile_agent
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR

from .fakehome import (
    CC_SHORT,
    CODEX_KEY,
    append,
    build_home,
    claude_user,
    codex_user,
)
from .test_tui import add_session, app_for, rendered, type_query, until

pytestmark = pytest.mark.backends  # storage behaviour: on both backends

DEADLINE_S = 60.0


@pytest.fixture
def home(data_dir: Path) -> dict[str, Path]:
    return build_home(Path.home(), data_dir)


def wait_for(condition: Callable[[], Any], what: str, timeout: float = DEADLINE_S) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"not reached in {timeout} s: {what}"
        time.sleep(0.05)


def searchable(state: StateDir, word: str) -> list[str]:
    try:
        response = sessions_search(state, SearchRequest(query=word), OPERATOR)
    except Exception:  # noqa: BLE001 - the database may not exist yet
        return []
    return [] if response.indexing else [r.session_key for r in response.results]


# ---------------------------------------------------------------- backscroll watch


def test_watch_takes_in_a_new_line_and_a_new_file_and_stops_on_ctrl_c(
        state: StateDir, home: dict[str, Path]) -> None:
    watcher = watch_process()
    lines: queue.Queue[dict[str, Any]] = queue.Queue()

    def read() -> None:
        assert watcher.stdout is not None
        for line in watcher.stdout:
            lines.put(json.loads(line))

    threading.Thread(target=read, daemon=True).start()
    try:
        watching = lines.get(timeout=DEADLINE_S)
        assert len(watching["watching"]) == 3
        first = lines.get(timeout=DEADLINE_S)  # the catch-up sync: everything, once
        assert first["read"] == 9 and first["problems"] == []

        append(home["short"], claude_user(home["short"], "w-1", "the watched kiwibanner"))
        wait_for(lambda: searchable(state, "kiwibanner"), "an appended line searchable")

        fresh = home["rollout"].with_name(
            "rollout-2026-06-01T10-00-00-0f0f0f0f-0000-4000-8000-00000000abcd.jsonl")
        append(fresh, {"timestamp": "2026-06-01T10:00:00.000Z", "type": "session_meta",
                       "payload": {"id": "0f0f0f0f-0000-4000-8000-00000000abcd", "cwd": "/x"}},
               codex_user("a brand new hedgehogsonnet"))
        wait_for(lambda: searchable(state, "hedgehogsonnet"), "a new file searchable")
        assert searchable(state, "hedgehogsonnet") == [
            "agent:codex:codex:0f0f0f0f-0000-4000-8000-00000000abcd"]
        assert searchable(state, "kiwibanner") == [f"agent:claude-code:claude-code:{CC_SHORT}"]
    finally:
        code = stopped(watcher, signal.SIGINT)
    assert code == 0
    assert "Traceback" not in (watcher.stderr.read() if watcher.stderr else "")


def watch_process(**options: Any) -> subprocess.Popen:
    """``backscroll watch --json`` in a child process, its output unbuffered."""
    return subprocess.Popen([sys.executable, "-m", "backscroll.tui.cli", "watch", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"}, **options)


def stopped(process: subprocess.Popen, signum: int) -> int | None:
    """Send ``signum`` and wait for the exit code; None (and the process killed, so no
    watcher outlives the test) when it does not stop."""
    process.send_signal(signum)
    try:
        return process.wait(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return None


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_watch_stops_cleanly_on_a_signal_even_started_with_sigint_ignored(
        state: StateDir, home: dict[str, Path], signum: int) -> None:
    # as a shell's background job starts it: SIGINT ignored
    watcher = watch_process(preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        assert watcher.stdout is not None
        assert "watching" in json.loads(watcher.stdout.readline())
    finally:
        code = stopped(watcher, signum)
    assert code == 0
    assert "Traceback" not in (watcher.stderr.read() if watcher.stderr else "")


@pytest.mark.slow
def test_watch_survives_a_source_folder_that_goes_and_comes_back(
        state: StateDir, home: dict[str, Path], tmp_path: Path) -> None:
    from backscroll.core.sources.watch import follow_sources

    stop = threading.Event()
    watched: list[int] = []
    thread = threading.Thread(
        target=follow_sources, args=(state, lambda report: None, stop),
        kwargs={"on_watching": lambda sources: watched.append(len(sources)),
                "reconcile": lambda agent: reconcile_agent(state, agent)}, daemon=True)
    thread.start()
    try:
        wait_for(lambda: watched == [3], "watching three sources")
        codex = Path.home() / ".codex"
        codex.rename(tmp_path / "codex-away")
        wait_for(lambda: watched[-1] == 2, "the vanished folder no longer watched")
        (tmp_path / "codex-away").rename(codex)
        wait_for(lambda: watched[-1] == 3, "the folder watched again")
        append(home["rollout"], codex_user("back again with the marmotsignal"))
        wait_for(lambda: searchable(state, "marmotsignal") == [CODEX_KEY],
                 "a line written after the folder came back")
    finally:
        stop.set()
        thread.join(DEADLINE_S)
    assert not thread.is_alive()


def test_a_line_written_before_the_watches_are_set_is_taken_in_at_the_first_tick(
        state: StateDir, home: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The notifier does not report what was written before its watches were in place; its
    first answer syncs everything, and comes within a tick (it came after ``CHECK_S``: the
    first watched line of bench_home took 2.6 s). ``CHECK_S`` is an hour here."""
    from backscroll.core.sources import watch

    monkeypatch.setattr(watch, "CHECK_S", 3600.0)
    stop = threading.Event()
    syncs: list[int] = []

    def on_sync(report: Any) -> None:
        if not syncs:  # the catch-up sync is done, the notifier not started yet
            append(home["short"], claude_user(home["short"], "cc-gap", "the gapwombat line"))
        syncs.append(report.events)

    thread = threading.Thread(target=watch.follow_sources, args=(state, on_sync, stop),
                              kwargs={"reconcile": lambda agent: reconcile_agent(state, agent)},
                              daemon=True)
    thread.start()
    try:
        wait_for(lambda: searchable(state, "gapwombat"), "the line written before the watches",
                 timeout=30)
    finally:
        stop.set()
        thread.join(DEADLINE_S)
    assert syncs[1:2] == [1]  # taken in by the first answer, a sync of everything


# ---------------------------------------------------------------- the browser


def live_app(state: StateDir, **options: Any) -> Any:
    if state.shared:  # a server takes the local sources in on open only when set to
        state.path.mkdir(parents=True, exist_ok=True)
        state.config_path.write_text("[sync]\non_open = true\n")
    options.setdefault("reconcile", lambda agent: reconcile_agent(state, agent))
    options.setdefault("poll_interval", 0.05)
    return app_for(state, **options)


@pytest.mark.slow
async def test_the_browser_syncs_on_open_and_shows_new_lines(state: StateDir,
                                                             home: dict[str, Path]) -> None:
    add_session(state, "agent:main:main", [("user", "an old conversation")])
    app = live_app(state)
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: "synced" in app.search_screen.status_bar.plain_text(), timeout=DEADLINE_S)
        await until(pilot, lambda: "watching 3 sources" in app.search_screen.status_bar.plain_text()
                    or "synced" in app.search_screen.status_bar.plain_text())
        await until(pilot, lambda: not sessions_search(state, SearchRequest(query="x"),
                                                       OPERATOR).indexing, timeout=DEADLINE_S)
        await type_query(pilot, app, "kiwibanner")
        assert app.search_screen.results.results == []
        append(home["short"], claude_user(home["short"], "live-1", "the live kiwibanner"))
        await until(pilot, lambda: [r.message_id for r in app.search_screen.results.results] == ["live-1"],
                    timeout=DEADLINE_S)
        assert "synced 1 new message" in app.search_screen.status_bar.plain_text()
        await until(pilot, lambda: "the live kiwibanner" in app.search_screen.history.plain_text())


@pytest.mark.slow
async def test_the_empty_state_lists_the_sources_and_takes_them_in(state: StateDir,
                                                                   home: dict[str, Path]) -> None:
    app = live_app(state)
    async with app.run_test(size=(120, 35)) as pilot:
        text = app.search_screen.query_one("#empty-text")
        await until(pilot, lambda: "Press t to take them in" in rendered(text), timeout=DEADLINE_S)
        painted = rendered(text)
        for kind, where in (("claude-code", "~/.claude/projects  3 files"),
                            ("codex", "~/.codex/sessions  1 file"), ("openclaw", "~/.openclaw  5")):
            assert any(kind in line and where in line for line in painted.splitlines())
        assert state.agents() == []  # nothing is read before the person asks
        await pilot.press("t")
        bars: list[str] = []  # "synced ..." shows for a few seconds: what the bar said meanwhile

        def shown() -> bool:
            bars.append(app.search_screen.status_bar.plain_text())
            return app.search_screen.query_one("#body").display

        try:
            await until(pilot, lambda: shown() and any("synced" in bar for bar in bars),
                        timeout=DEADLINE_S)
        except AssertionError:
            raise AssertionError(f"body shown: {app.search_screen.query_one('#body').display}, "
                                 f"the bar said: {list(dict.fromkeys(bars))[-6:]}") from None
        assert len(state.agents()) == 4
        assert app.focused is app.search_screen.search_input


@pytest.mark.slow
async def test_live_follow_is_toggled_from_the_palette(state: StateDir,
                                                       home: dict[str, Path]) -> None:
    add_session(state, "agent:main:main", [("user", "an old conversation")])
    app = live_app(state)
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: app.live.following
                    and "watching 3" in app.search_screen.status_bar.plain_text(),
                    timeout=DEADLINE_S)
        command = next(c for c in app.get_system_commands(app.screen)
                       if c.title == "Toggle live follow")
        assert command.help.endswith("(L)")
        command.callback()
        await until(pilot, lambda: "live follow off" in app.search_screen.status_bar.plain_text())
        assert not app.live.following
        command.callback()
        await until(pilot, lambda: "watching 3 sources" in app.search_screen.status_bar.plain_text(),
                    timeout=DEADLINE_S)


@pytest.mark.slow
async def test_the_demo_never_reads_the_sources(state: StateDir, home: dict[str, Path]) -> None:
    add_session(state, "agent:main:main", [("user", "made-up conversation")])
    app = live_app(state, sources=False)
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.status is not None)
        await pilot.pause(0.3)
        assert not app.live.following and state.agents() == ["main"]
