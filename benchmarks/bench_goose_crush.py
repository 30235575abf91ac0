"""Goose's ``sessions.db`` and Crush's per-project ``crush.db`` through the SQLite source kind
(not a test).

Builds a Goose database of about ``--mb`` megabytes and as big a Crush project database
(listed in ``projects.json``), with the schemas of tests/test_import_goose.py and
tests/test_import_crush.py, in WAL mode, each held open by a writer connection, then measures:

- the first sync (in-process): messages stored per second;
- ``backscroll sync`` with nothing new, as a whole process, p50 / p95 over ``--runs``;
- one new message in one session of each, then a sync (in-process).

    .venv/bin/python benchmarks/bench_goose_crush.py [--mb 50] [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backscroll.core.reconcile import reconcile_all  # noqa: E402
from backscroll.core.sources import sync_sources  # noqa: E402
from benchmarks.measure import fake_home, fill, p50_p95, process_sync, title  # noqa: E402
from tests import test_import_crush as crush  # noqa: E402
from tests import test_import_goose as goose  # noqa: E402


def build_goose(agent: goose.Agent, mb: int) -> int:
    def session(day: int) -> str:
        sid = f"2025{day // 100 % 12 + 1:02d}{day % 28 + 1:02d}_{day}"
        agent.session(sid, name=title())
        return sid

    def message(sid: str, n: int, words: str) -> None:
        if n % 2:
            agent.message("assistant", [{"type": "thinking", "thinking": words[:400]},
                                        goose.text(words)], sid=sid)
        else:
            agent.message("user", [goose.text(words)], sid=sid)

    return fill(agent.conn, agent.path, mb, session, message)


def build_crush(agent: crush.Agent, mb: int) -> int:
    def session(_n: int) -> str:
        sid = str(uuid.uuid4())
        agent.session(sid, title=title())
        return sid

    def message(sid: str, n: int, words: str) -> None:
        if n % 2:
            agent.message("assistant", [{"type": "reasoning", "data": {"thinking": words[:400]}},
                                        crush.text(words), crush.finish()], sid=sid)
        else:
            agent.message("user", [crush.text(words)], sid=sid)

    return fill(agent.conn, agent.path, mb, session, message)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    random.seed(7)
    with tempfile.TemporaryDirectory() as tmp:
        home, state, env = fake_home(Path(tmp), unset=["XDG_DATA_HOME", "GOOSE_PATH_ROOT",
                                                       "CRUSH_GLOBAL_DATA"])
        data = home / ".local" / "share"
        g = goose.Agent(data / "goose" / "sessions" / "sessions.db")
        c = crush.Agent(home / "work" / "shop")
        (data / "crush").mkdir(parents=True)
        (data / "crush" / "projects.json").write_text(json.dumps({"projects": [
            {"path": str(c.project), "data_dir": str(c.path.parent),
             "last_accessed": "2025-10-09T08:53:20Z"}]}))
        counts = build_goose(g, args.mb), build_crush(c, args.mb)
        print(f"sessions.db {g.path.stat().st_size / 1e6:.0f} MB, {counts[0]:,} messages; "
              f"crush.db {c.path.stat().st_size / 1e6:.0f} MB, {counts[1]:,} messages")
        start = time.perf_counter()
        report = sync_sources(state)
        first = time.perf_counter() - start
        print(f"first sync: {report.messages:,} messages in {first:.1f} s "
              f"({report.messages / first:,.0f}/s; indexing follows in the background)")
        reconcile_all(state)
        quiet = [process_sync(env) for _ in range(args.runs)]
        print(f"no-change `backscroll sync` (whole process): {p50_p95(quiet)}")
        gsid = g.conn.execute("SELECT id FROM sessions LIMIT 1").fetchone()[0]
        csid = c.conn.execute("SELECT id FROM sessions LIMIT 1").fetchone()[0]
        grown = []
        for _ in range(args.runs):
            g.message("user", [goose.text("one more " + uuid.uuid4().hex)], sid=gsid)
            c.message("user", [crush.text("one more " + uuid.uuid4().hex)], sid=csid)
            start = time.perf_counter()
            sync_sources(state)
            grown.append(time.perf_counter() - start)
        print(f"sync after one new message in each (in-process): {p50_p95(grown)}")
        g.conn.close()
        c.conn.close()


if __name__ == "__main__":
    main()
