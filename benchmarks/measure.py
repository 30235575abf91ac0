"""What the benchmarks that run backscroll as whole processes against a fake home share (not
a benchmark): the home and state dir for this process and its children, a ``sync`` process
timed, a search that finds a word, p50 / p95, and ``watch`` latency."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterable

from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR

CLI = [sys.executable, "-m", "backscroll.tui.cli"]
# The vocabulary of the generated conversations
WORDS = ("cart total tax rounding cache price invoice retry queue worker deploy branch merge "
         "schema index migration token parser render layout button modal session").split()


def fill(conn: sqlite3.Connection, path: Path, mb: float, session: Callable[[int], str],
         message: Callable[[str, int, str], object]) -> int:
    """A tool's database written until ``path`` holds ``mb`` megabytes: sessions of 40
    messages of 300 of ``WORDS``, each in one transaction; ``session(n)`` starts the n-th
    (and returns its id), ``message(sid, i, words)`` writes its i-th message. The number of
    messages."""
    messages = started = 0
    conn.execute("PRAGMA wal_autocheckpoint=1000")  # the file grows, as the tool's does
    while path.stat().st_size < mb * 1_000_000:
        started += 1
        conn.execute("BEGIN")
        sid = session(started)
        for i in range(40):
            message(sid, i, " ".join(random.choices(WORDS, k=300)))
            messages += 1
        conn.execute("COMMIT")
    return messages


def title() -> str:
    return " ".join(random.choices(WORDS, k=4))


def fake_home(root: Path, unset: Iterable[str] = ()) -> tuple[Path, StateDir, dict[str, str]]:
    """``root/home`` and the state dir ``root/state``, for this process and (``env``) its
    children; the variables ``unset`` (a tool's own, moving its folder) are removed from
    both."""
    home, state = root / "home", StateDir(root / "state")
    env = {**os.environ, "HOME": str(home), "BACKSCROLL_STATE_DIR": str(state.path)}
    for variable in unset:
        env.pop(variable, None)
        os.environ.pop(variable, None)
    os.environ.update(HOME=env["HOME"], BACKSCROLL_STATE_DIR=env["BACKSCROLL_STATE_DIR"])
    return home, state, env


def p50_p95(samples: list[float]) -> str:
    if not samples:
        return "no sample"
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered) * 1000:,.0f} ms, p95 {p95 * 1000:,.0f} ms"


def process_sync(env: dict[str, str]) -> float:
    """Seconds of one ``backscroll sync`` process."""
    start = time.perf_counter()
    subprocess.run([*CLI, "sync"], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def found(state: StateDir, word: str) -> bool:
    try:
        return bool(sessions_search(state, SearchRequest(query=word), OPERATOR).results)
    except Exception:  # noqa: BLE001 - a database being written
        return False


def wait_found(state: StateDir, word: str, started: float, limit: float = 30.0) -> float:
    """Seconds from ``started`` until a search finds ``word`` (polled every 5 ms), or inf."""
    while not found(state, word):
        if time.perf_counter() - started > limit:
            return float("inf")
        time.sleep(0.005)
    return time.perf_counter() - started


def watch_latency(env: dict[str, str], state: StateDir, write: Callable[[str], None],
                  appends: int) -> list[float]:
    """A ``backscroll watch`` process; then ``appends`` times, a unique word written
    (``write``) and the seconds until a search finds it (each found within 30 s)."""
    watcher = subprocess.Popen([*CLI, "watch", "--json"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    assert watcher.stdout is not None
    watcher.stdout.readline()
    time.sleep(3)  # past the watcher's catch-up sync
    latency = []
    try:
        for n in range(appends):
            word = f"latency{n}x{os.urandom(6).hex()}"
            start = time.perf_counter()
            write(word)
            latency.append(wait_found(state, word, start))
            assert latency[-1] != float("inf"), "not found in 30 s"
            time.sleep(0.2)  # apart, as messages come
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.wait(30)
    return latency
