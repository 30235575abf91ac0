"""A session caller's view on PostgreSQL with and without the link indexes (not a test).

A `tree` caller (the runtime's default) whose visible set can only be its own spawned tree
reads that tree link by link (``reads.session_briefs(below=...)``); schema 4's indexes on
``lower(spawned_by)`` and ``lower(parent_key)`` make each step a lookup. This times the view
(``visible_sessions``, its cache emptied before each call) for callers who see 11 and 1,001
sessions in agents of 10,000 and 20,000 sessions, in a throwaway cluster, alternating rounds
with the indexes and rounds without them (dropped and made again), and prints p50 / p95 and
the ratio without / with.

    .venv/bin/python benchmarks/bench_pg_tree.py [--runs 60] [--sizes 10000 20000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.pgcluster

import psycopg  # noqa: E402

from backscroll.core import visible_sessions as visible  # noqa: E402
from backscroll.core.indexer import INDEXER_VERSION  # noqa: E402
from backscroll.core.state import StateDir  # noqa: E402
from backscroll.core.storage.postgres import schema  # noqa: E402
from backscroll.core.visibility import Caller, Policy  # noqa: E402

LINK_INDEXES = schema.MIGRATIONS[4]  # the two link indexes, as the schema makes them
TREES = {"sees 11": 10, "sees 1,001": 1000}


def fill(url: str, agent: str, sessions: int) -> dict[str, Caller]:
    """An agent of ``sessions`` sessions (every tenth spawned by the one before it, as a
    runtime's subagents are), and one caller per tree size, spawning that many of them."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO backscroll.agents (agent_id, created_at) VALUES (%s, 0)", (agent,))
        conn.execute(
            "INSERT INTO backscroll.sessions (agent_id, key, session_id, spawned_by, created_at, "
            "updated_at, state, indexer_version) "
            "SELECT %(a)s, 'agent:' || %(a)s || ':s' || g, 's' || g, CASE WHEN g %% 10 > 0 "
            "THEN 'agent:' || %(a)s || ':s' || (g - g %% 10) END, 0, 0, 'clean', %(v)s "
            "FROM generate_series(1, %(n)s) AS g",
            {"a": agent, "n": sessions, "v": INDEXER_VERSION},
        )
        callers = {}
        for offset, (label, size) in enumerate(TREES.items()):
            key = f"agent:{agent}:caller-{size}"
            conn.execute(
                "INSERT INTO backscroll.sessions (agent_id, key, session_id, created_at, "
                "updated_at, state, indexer_version) VALUES (%s, %s, %s, 0, 0, 'clean', %s)",
                (agent, key, f"caller-{size}", INDEXER_VERSION),
            )
            # sessions that spawn nothing, spread over the agent, disjoint per caller
            chosen = [f"s{10 * n + offset + 1}" for n in range(size)]
            conn.execute(
                "UPDATE backscroll.sessions SET spawned_by = %s WHERE agent_id = %s "
                "AND session_id = ANY(%s)", (key, agent, chosen),
            )
            callers[label] = Caller(key, Policy("tree"))
        conn.execute("ANALYZE backscroll.sessions")
    return callers


def view_ms(state: StateDir, agent: str, caller: Caller, runs: int) -> list[float]:
    times = []
    with state.open(agent) as db:
        for _ in range(runs):
            visible._cache.clear()
            start = time.perf_counter()
            view = visible.visible_sessions(db, caller)
            times.append((time.perf_counter() - start) * 1000)
    assert len(view.pks) == int(caller.key.rsplit("-", 1)[1]) + 1, len(view.pks)
    return times


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[18]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=60, help="calls per cell and setting")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 20_000])
    args = parser.parse_args()
    from tests.pgcluster import Cluster, missing_binaries

    reason = missing_binaries()
    if reason:
        print(reason)
        return 1
    cluster = Cluster.create()
    try:
        url = cluster.url(cluster.new_database())
        state = StateDir(Path(tempfile.mkdtemp(prefix="bench-pg-tree-")), database_url=url)
        state.storage._migrate()  # type: ignore[attr-defined]
        cells = {size: fill(url, f"a{size}", size) for size in args.sizes}
        load = os.getloadavg()
        print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (2 cores, shared); "
              f"{args.runs} calls per cell and setting, in rounds of 10, alternating")
        times: dict[tuple[int, str, bool], list[float]] = {}
        rounds = max(args.runs // 10, 1)
        for _round in range(rounds):
            for indexed in (True, False):
                with psycopg.connect(url, autocommit=True) as conn:
                    conn.execute("SET search_path TO backscroll")
                    conn.execute("DROP INDEX IF EXISTS sessions_by_spawner, sessions_by_parent")
                    if indexed:
                        conn.execute(LINK_INDEXES)
                for size, callers in cells.items():
                    for label, caller in callers.items():
                        view_ms(state, f"a{size}", caller, 1)  # a fresh plan, warm pages
                        times.setdefault((size, label, indexed), []).extend(
                            view_ms(state, f"a{size}", caller, 10))
        print(f"\n{'sessions':>9} {'caller':<11} {'indexed p50':>12} {'p95':>7} "
              f"{'without p50':>12} {'p95':>7} {'without/with':>13}")
        for size, callers in cells.items():
            for label in callers:
                with_ = times[(size, label, True)]
                without = times[(size, label, False)]
                print(f"{size:>9,} {label:<11} {statistics.median(with_):>10.1f}ms "
                      f"{p95(with_):>5.1f}ms {statistics.median(without):>10.1f}ms "
                      f"{p95(without):>5.1f}ms "
                      f"{statistics.median(without) / statistics.median(with_):>12.1f}x")
        load = os.getloadavg()
        print(f"\nload average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    finally:
        from backscroll.core.storage.postgres import driver

        driver.close_all()
        cluster.destroy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
