"""What one status read costs (the browser's status bar polls it; not a test).

``state_status`` on a state dir, p50/p95 over ``--runs`` calls, beside its baseline measured
in the same run: the count of stored messages as it was before schema migration 6, a scan of
every event, which was most of a status read at a million messages.

    .venv/bin/python benchmarks/bench_status.py [--state DIR] [--messages 1000000] [--runs 30]

Without ``--state`` it uses (and builds if needed) bench_search.py's cached state of
``--messages`` messages.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from bench_data import ensure, state_path

from backscroll.core.state import StateDir
from backscroll.core.status import state_status

# (+kind: the index is not used, as before it existed)
BASELINE = "SELECT count(*) FROM events WHERE +kind = 'message'"


def timed(call, runs: int) -> list[float]:
    call()  # warm
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state", type=Path, help="a state dir (default: bench_search's)")
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/backscroll-bench"))
    args = parser.parse_args()
    if args.state is None:
        ensure(args.cache, args.messages)
        args.state = state_path(args.cache, args.messages)
    state = StateDir(args.state)

    def baseline() -> None:
        for agent in state.agents():
            with state.open(agent) as db:
                db.conn.execute(BASELINE).fetchone()

    status = timed(lambda: state_status(state), args.runs)
    scan = timed(baseline, args.runs)
    messages = sum(a.messages for a in state_status(state).agents)
    print(f"{args.state}: {messages:,} stored messages; load {os.getloadavg()[0]:.1f}")
    print(f"{'':34} {'p50 ms':>8} {'p95 ms':>8}")
    for name, times in (("state_status", status), ("baseline: count by scanning events", scan)):
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        print(f"{name:34} {statistics.median(times):8.1f} {p95:8.1f}")
    print(f"the baseline count alone over a whole status read: "
          f"{statistics.median(scan) / statistics.median(status):.1f}x")


if __name__ == "__main__":
    main()
