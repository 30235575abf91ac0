"""The SQLite source kind on a big OpenCode database (not a test).

Builds ``~/.local/share/opencode/opencode.db`` of about ``--mb`` megabytes with OpenCode's
schema (tests/test_import_opencode.py), in WAL mode, held open by a writer connection as
OpenCode holds it, then measures:

- the first sync (in-process): messages stored per second;
- ``backscroll sync`` with nothing new, as a whole process, p50 / p95 over ``--runs``;
- one new message in one session, then a sync (in-process): what a changed database costs;
- the latency of ``backscroll watch``: a message written (it lands in the ``-wal``) until a
  search finds it.

    .venv/bin/python benchmarks/bench_opencode.py [--mb 100] [--runs 10] [--appends 10]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backscroll.core.reconcile import reconcile_all  # noqa: E402
from backscroll.core.search import SearchRequest, sessions_search  # noqa: E402
from backscroll.core.sources import sync_sources  # noqa: E402
from backscroll.core.state import StateDir  # noqa: E402
from backscroll.core.visibility import OPERATOR  # noqa: E402
from tests.test_import_opencode import Agent, text  # noqa: E402

WORDS = ("cart total tax rounding cache price invoice retry queue worker deploy branch merge "
         "schema index migration token parser render layout button modal session").split()


def build(agent: Agent, mb: int) -> int:
    """Sessions of 40 messages (about 2 KB each, a tool part every other reply) until the
    database holds ``mb`` megabytes; the number of messages."""
    messages = 0
    agent.conn.execute("PRAGMA wal_autocheckpoint=1000")
    while agent.path.stat().st_size < mb * 1_000_000:
        sid = "ses_" + os.urandom(6).hex() + uuid.uuid4().hex[:14]
        agent.conn.execute("BEGIN")
        agent.session(sid, title=" ".join(random.choices(WORDS, k=4)))
        for n in range(40):
            words = " ".join(random.choices(WORDS, k=300))
            if n % 2:
                parts = [{"type": "reasoning", "text": words[:400]}, text(words),
                         {"type": "tool", "callID": f"c{n}", "tool": "bash",
                          "state": {"status": "completed", "input": {"command": "ls"},
                                    "output": words[:600]}}]
                agent.message("assistant", parts, sid=sid)
            else:
                agent.message("user", [text(words)], sid=sid)
            messages += 1
        agent.conn.execute("COMMIT")
    return messages


def process_sync(env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "backscroll.tui.cli", "sync"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def found(state: StateDir, word: str) -> bool:
    try:
        return bool(sessions_search(state, SearchRequest(query=word), OPERATOR).results)
    except Exception:  # noqa: BLE001 - a database being written
        return False


def p50_p95(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--appends", type=int, default=10)
    args = parser.parse_args()
    random.seed(7)
    with tempfile.TemporaryDirectory() as tmp:
        home, state = Path(tmp) / "home", StateDir(Path(tmp) / "state")
        env = {**os.environ, "HOME": str(home), "BACKSCROLL_STATE_DIR": str(state.path)}
        env.pop("XDG_DATA_HOME", None)
        os.environ.update(HOME=env["HOME"], BACKSCROLL_STATE_DIR=env["BACKSCROLL_STATE_DIR"])
        os.environ.pop("XDG_DATA_HOME", None)
        agent = Agent(home / ".local" / "share" / "opencode" / "opencode.db")
        messages = build(agent, args.mb)
        size = agent.path.stat().st_size + Path(f"{agent.path}-wal").stat().st_size
        print(f"opencode.db: {size / 1e6:.0f} MB, {messages:,} messages")
        start = time.perf_counter()
        report = sync_sources(state)
        first = time.perf_counter() - start
        print(f"first sync: {report.messages:,} message events in {first:.1f} s "
              f"({report.messages / first:,.0f}/s; indexing follows in the background)")
        reconcile_all(state)
        quiet = [process_sync(env) for _ in range(args.runs)]
        print(f"no-change `backscroll sync` (whole process): {p50_p95(quiet)}")
        sid = agent.conn.execute("SELECT id FROM session LIMIT 1").fetchone()[0]
        grown = []
        for _ in range(args.runs):
            agent.message("user", [text("one more " + uuid.uuid4().hex)], sid=sid)
            start = time.perf_counter()
            sync_sources(state)
            grown.append(time.perf_counter() - start)
        print(f"sync after one new message (in-process): {p50_p95(grown)}")
        watcher = subprocess.Popen([sys.executable, "-m", "backscroll.tui.cli", "watch", "--json"],
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   text=True)
        assert watcher.stdout is not None
        watcher.stdout.readline()
        time.sleep(3)  # past the watcher's catch-up sync
        latency = []
        try:
            for _ in range(args.appends):
                word = f"latency{uuid.uuid4().hex[:12]}"
                start = time.perf_counter()
                agent.message("user", [text(f"look at {word}")], sid=sid)
                while not found(state, word):
                    assert time.perf_counter() - start < 30, "not found in 30 s"
                    time.sleep(0.005)
                latency.append(time.perf_counter() - start)
                time.sleep(0.2)
        finally:
            watcher.send_signal(signal.SIGINT)
            watcher.wait(30)
        print(f"watch latency, a message in the -wal until found: {p50_p95(latency)}")
        agent.conn.close()


if __name__ == "__main__":
    main()
