"""What the operator's search pays for ranking's totals (every session's rows and characters,
less the hidden ones'; not a test): ``_totals`` and ``_row_counts`` of
``storage/sqlite/matching.py`` reading the row schema migration 8 keeps, beside their
baseline measured in the same run, the sums over every session's index state they replaced.

    .venv/bin/python benchmarks/bench_totals.py [--sessions 10000,20000] [--hidden 5] [--runs 300]

The state is synthetic: one agent database of the current schema whose ``index_state`` holds
``--sessions`` sessions (counts, trees and leaves as the write path stores them) and no index
rows, read through a reader connection as a search reads it; the operator sees all but
``--hidden`` sessions.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Callable

from backscroll.core.indexer import INDEXER_VERSION
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionScope

# What _totals and _row_counts ran before migration 8: sums over every session.
EVERY = "SELECT coalesce(sum(rows), 0), coalesce(sum(chars), 0) FROM index_state"
SOME = f"{EVERY} WHERE session_pk IN (SELECT value FROM json_each(?))"


def build(folder: Path, sessions: int) -> StateDir:
    state = StateDir(folder, database_url="")
    rng = random.Random(sessions)
    with state.open("main", write=True) as db, db.transaction() as conn:
        conn.executemany(
            "INSERT INTO sessions (pk, key, session_id, created_at, updated_at, last_seq, leaf_id) "
            "VALUES (?, ?, ?, 0, 0, ?, ?)",
            [(pk, f"agent:main:s{pk}", str(uuid.UUID(int=rng.getrandbits(128))),
              rng.randint(2, 400), f"{rng.getrandbits(32):08x}") for pk in range(1, sessions + 1)],
        )
        conn.executemany(
            "INSERT INTO index_state (session_pk, state, indexer_version, indexed_seq, "
            "indexed_leaf, tree, rows, chars, branch_seq) VALUES (?, 'clean', ?, ?, ?, ?, ?, ?, ?)",
            [(pk, INDEXER_VERSION, seq, leaf, f"{pk} {rng.randint(1, pk)}" if pk % 3 else str(pk),
              seq // 2, seq * 180, seq)
             for pk, seq, leaf in conn.execute("SELECT pk, last_seq, leaf_id FROM sessions")],
        )
    return state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", default="10000,20000")
    parser.add_argument("--hidden", type=int, default=5)
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    print(f"load {os.getloadavg()[0]:.1f}; {args.runs} runs each, alternating; microseconds")
    print(f"{'sessions':>8}  {'call':34} {'p50':>7} {'p95':>7} {'p50 ratio':>10}")
    for sessions in (int(n) for n in args.sessions.split(",")):
        with tempfile.TemporaryDirectory() as folder:
            state = build(Path(folder), sessions)
            hidden = frozenset(range(1, sessions + 1, max(1, sessions // args.hidden)))
            scope = SessionScope(frozenset(range(1, sessions + 1)) - hidden, hidden)
            with state.open("main") as db:
                def one(sql: str, params: tuple = ()) -> tuple[int, int]:
                    return db.conn.execute(sql, params).fetchone()

                def old_totals() -> tuple[int, int]:
                    rows, chars = one(EVERY)
                    hidden_rows, hidden_chars = one(SOME, (json.dumps(sorted(scope.hidden)),))
                    return rows - hidden_rows, chars - hidden_chars

                def old_row_counts() -> tuple[int, int]:
                    return old_totals()[0], one(EVERY)[0]

                assert old_totals() == db._totals(scope)
                assert old_row_counts() == db._row_counts(scope)
                calls: dict[str, Callable[[], object]] = {
                    "baseline: _totals summing": old_totals,
                    "_totals": lambda: db._totals(scope),
                    "baseline: _row_counts summing": old_row_counts,
                    "_row_counts": lambda: db._row_counts(scope),
                }
                times = timed(calls, args.runs)
            base = {}
            for name, found in times.items():
                p50 = statistics.median(found)
                p95 = found[min(len(found) - 1, int(0.95 * len(found)))]
                kind = name.split()[-2] if name.startswith("baseline") else name
                base.setdefault(kind, p50)
                print(f"{sessions:>8}  {name:34} {p50:7.1f} {p95:7.1f} {p50 / base[kind]:9.3f}x")


def timed(calls: dict[str, Callable[[], object]], runs: int) -> dict[str, list[float]]:
    """Each call ``runs`` times, the calls taking turns, so load changes hit them alike."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for call in calls.values():
        call()  # warm
    for _ in range(runs):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            times[name].append((time.perf_counter() - start) * 1e6)
    return {name: sorted(found) for name, found in times.items()}


if __name__ == "__main__":
    main()
