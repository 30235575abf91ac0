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
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backscroll.core.reconcile import reconcile_all  # noqa: E402
from backscroll.core.sources import sync_sources  # noqa: E402
from benchmarks.measure import fake_home, fill, p50_p95, process_sync, title, watch_latency  # noqa: E402
from tests.test_import_opencode import Agent, text  # noqa: E402


def build(agent: Agent, mb: int) -> int:
    """Sessions of 40 messages (about 2 KB each, a tool part every other reply) until the
    database holds ``mb`` megabytes; the number of messages."""

    def session(_n: int) -> str:
        sid = "ses_" + os.urandom(6).hex() + uuid.uuid4().hex[:14]
        agent.session(sid, title=title())
        return sid

    def message(sid: str, n: int, words: str) -> None:
        if n % 2:
            agent.message("assistant", [
                {"type": "reasoning", "text": words[:400]}, text(words),
                {"type": "tool", "callID": f"c{n}", "tool": "bash", "state": {
                    "status": "completed", "input": {"command": "ls"}, "output": words[:600]}}],
                sid=sid)
        else:
            agent.message("user", [text(words)], sid=sid)

    return fill(agent.conn, agent.path, mb, session, message)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--appends", type=int, default=10)
    args = parser.parse_args()
    random.seed(7)
    with tempfile.TemporaryDirectory() as tmp:
        home, state, env = fake_home(Path(tmp), unset=["XDG_DATA_HOME"])
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
        latency = watch_latency(env, state, lambda word: agent.message(
            "user", [text(f"look at {word}")], sid=sid), args.appends)
        print(f"watch latency, a message in the -wal until found: {p50_p95(latency)}")
        agent.conn.close()


if __name__ == "__main__":
    main()
