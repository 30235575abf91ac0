"""sessions_search on PostgreSQL beside SQLite, on the same demo corpus (not a test).

Builds the demo generator's corpus (default 1,000,000 messages in 10,000 sessions of one
agent) twice with ``build_demo``: into SQLite files and into a PostgreSQL database, timing
both (import + reconciliation, messages per second). Then runs each query class as the
operator and as callers who see 10 and 1,000 sessions, on both backends in the same process,
and prints p50 / p95 per class with the PostgreSQL / SQLite ratio, then the live write path
(one event stored and indexed per transaction, p50 / p99), and the machine's load.

Without ``--url`` it starts a throwaway PostgreSQL cluster (unix socket, durable settings:
fsync and synchronous commit on) like the tests do, and removes it afterwards.

    .venv/bin/python benchmarks/bench_postgres.py [--messages 1000000] [--sessions 10000]
        [--runs 40] [--appends 2000] [--url postgresql://...] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.pgcluster

from backscroll.core.demo.state import build_demo  # noqa: E402
from backscroll.core.reconcile import reconcile_agent  # noqa: E402
from backscroll.core.search import SearchRequest, sessions_search  # noqa: E402
from backscroll.core.state import StateDir  # noqa: E402
from backscroll.core.storage import SessionMeta  # noqa: E402
from backscroll.core.visibility import OPERATOR, Caller, Policy  # noqa: E402

# (class, query, match mode): words picked from the demo's invented text
QUERIES = [
    ("rare word", "Zertifikat", "exact"),
    ("common word", "the", "exact"),
    ("two words", "connection pool", "exact"),
    ("phrase", '"connection pool exhausted"', "exact"),
    ("2-letter prefix", "co", "prefix"),
    ("accented word", "déploiement", "exact"),
    ("CJK 1 char", "数", "exact"),
    ("CJK 3 chars", "数据库", "exact"),
]
CALLERS = {"operator": None, "sees 10": 10, "sees 1,000": 1000}
SERVER_SETTINGS = "-c shared_buffers=1GB -c work_mem=32MB -c maintenance_work_mem=512MB"


def link_callers(lite: StateDir, pg: StateDir) -> dict[str, Caller]:
    """Callers whose tree holds exactly N existing sessions: a new caller session, and N of
    the corpus's sessions (spread over its whole time range) marked as spawned by it."""
    callers: dict[str, Caller] = {"operator": OPERATOR}
    with pg.open("main") as db:
        every = db.sessions()
    parents = {link for s in every for link in (s.spawned_by, s.parent_key) if link}
    # sessions that spawned nothing, so a caller's tree is exactly the ones it is given
    leaves = [s for s in every if s.key not in parents and not s.key.startswith("agent:main:bench-")]
    for offset, (label, count) in enumerate(CALLERS.items()):
        if count is None:
            continue
        key = f"agent:main:bench-caller-{count}"
        step = max(len(leaves) // count, 2)
        chosen = [s.session_id for s in leaves[offset::step][:count]]  # disjoint per caller
        for state in (lite, pg):
            with state.open("main", write=True) as db:
                db.append(SessionMeta(key), '{"type":"message","id":"c","message":{"role":"user",'
                          '"content":"benchmark caller"}}')
        relink_sqlite(lite, key, chosen)
        relink_postgres(pg, key, chosen)
        callers[label] = Caller(key, Policy("tree"))
    return callers


def relink_sqlite(state: StateDir, key: str, session_ids: list[str]) -> None:
    """Relink, then rebuild those sessions: their rows carry their tree (the scope tags
    SQLite's planner selects a tree caller's sessions by), as if spawned that way."""
    conn = sqlite3.connect(state.db_path("main"))
    with conn:
        conn.executemany(
            "UPDATE sessions SET spawned_by = ? WHERE session_id = ?", [(key, s) for s in session_ids]
        )
        conn.executemany(
            "UPDATE index_state SET state = 'dirty' WHERE session_pk = "
            "(SELECT pk FROM sessions WHERE session_id = ?)", [(s,) for s in session_ids]
        )
    conn.close()
    reconcile_agent(state, "main")


def relink_postgres(state: StateDir, key: str, session_ids: list[str]) -> None:
    import psycopg

    with psycopg.connect(state.storage.url, autocommit=True) as conn:  # type: ignore[attr-defined]
        conn.execute(
            "UPDATE backscroll.sessions SET spawned_by = %s WHERE session_id = ANY(%s)",
            (key, session_ids),
        )


def timed(state: StateDir, request: SearchRequest, caller: Caller, runs: int) -> tuple[float, float, int]:
    for _ in range(2):  # warm-up: caches, plans, the visible-session cache
        sessions_search(state, request, caller)
    times = []
    found = 0
    for _ in range(runs):
        start = time.perf_counter()
        response = sessions_search(state, request, caller)
        times.append((time.perf_counter() - start) * 1000)
        found = len(response.results)
    times.sort()
    p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
    return statistics.median(times), p95, found


def appends(state: StateDir, count: int) -> tuple[float, float]:
    """p50 and p99 (ms) of the live write path: one event stored and indexed per transaction."""
    key = f"agent:main:bench-append-{time.time_ns()}"
    times = []
    with state.open("main", write=True) as db:
        parent = None
        for n in range(count):
            event = {"type": "message", "id": f"a{n}", "parentId": parent,
                     "message": {"role": "user", "content": f"appended message {n} about a heron"}}
            start = time.perf_counter()
            db.append(SessionMeta(key), json.dumps(event))
            times.append((time.perf_counter() - start) * 1000)
            parent = f"a{n}"
    times.sort()
    return statistics.median(times), times[int(0.99 * (len(times) - 1))]


def build(state: StateDir, messages: int, sessions: int) -> float:
    start = time.perf_counter()
    build_demo(state, messages=messages, sessions=sessions, agents=1, leave_imported_pending=False)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--appends", type=int, default=2000, help="live appends timed (0: none)")
    parser.add_argument("--url", help="a PostgreSQL database, built unless it holds agents "
                        "(default: a throwaway cluster)")
    parser.add_argument("--keep", type=Path, help="keep the SQLite state here (and reuse it)")
    args = parser.parse_args()

    cluster = None
    url = args.url
    if url is None:
        from tests.pgcluster import Cluster, missing_binaries

        reason = missing_binaries()
        if reason:
            print(reason)
            return 1
        cluster = Cluster.create(settings=SERVER_SETTINGS)
        url = cluster.url(cluster.new_database())
    work = Path(tempfile.mkdtemp(prefix="bench-pg-"))
    try:
        lite = StateDir(args.keep or work / "sqlite", database_url="")
        pg = StateDir(work / "pg", database_url=url)
        lite_s = build(lite, args.messages, args.sessions) if not lite.exists() else float("nan")
        pg_s = build(pg, args.messages, args.sessions) if not pg.exists() or not pg.agents() else float("nan")
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:  # what autovacuum does in time
            conn.execute("VACUUM ANALYZE")
        callers = link_callers(lite, pg)
        load = os.getloadavg()
        print(f"\n{args.messages:,} messages in {args.sessions:,} sessions; load average "
              f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (2 cores, shared)")
        print(f"import + reconcile: SQLite {lite_s:,.1f} s ({args.messages / lite_s:,.0f} msg/s), "
              f"PostgreSQL {pg_s:,.1f} s ({args.messages / pg_s:,.0f} msg/s)")
        for _label, query, match in QUERIES:  # one pass over everything first: warm caches
            for caller in callers.values():
                for state in (lite, pg):
                    sessions_search(state, SearchRequest(query, limit=10, match=match), caller)
        print(f"\n{'class':<16} {'caller':<11} {'SQLite p50':>11} {'p95':>8} {'PG p50':>9} "
              f"{'p95':>8} {'PG/SQLite p95':>14} {'hits':>5}")
        for label, query, match in QUERIES:
            request = SearchRequest(query, limit=10, match=match)
            for who, caller in callers.items():
                l50, l95, lite_hits = timed(lite, request, caller, args.runs)
                p50, p95, pg_hits = timed(pg, request, caller, args.runs)
                same = "" if lite_hits == pg_hits else f" (SQLite {lite_hits})"
                print(f"{label:<16} {who:<11} {l50:>9.1f}ms {l95:>6.1f}ms {p50:>7.1f}ms "
                      f"{p95:>6.1f}ms {p95 / l95:>13.2f}x {pg_hits:>5}{same}")
        if args.appends:
            (l50, l99), (p50, p99) = appends(lite, args.appends), appends(pg, args.appends)
            print(f"\nappend with the index ({args.appends} events): SQLite p50 {l50:.2f} ms, "
                  f"p99 {l99:.2f} ms; PostgreSQL p50 {p50:.2f} ms, p99 {p99:.2f} ms")
        load = os.getloadavg()
        print(f"\nload average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    finally:
        from backscroll.core.storage.postgres import driver

        driver.close_all()
        if cluster is not None:
            cluster.destroy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
