"""What "deleted means gone" costs (not a test).

Two measurements, each beside its baseline run in the same process on the same data:

1. import + reconciliation throughput with ``secure_delete`` on (freed pages are zeroed) and
   off (the baseline), alternating runs;
2. the latency of ``delete`` with the purge (FTS5 ``optimize``, zeroed pages, a truncating
   WAL checkpoint) against the plain delete transaction (the baseline).

    .venv/bin/python benchmarks/bench_delete.py [--messages 100000] [--runs 3] [--deletes 20]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench_reconcile import write_archive

from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.ingest import delete_session
from backscroll.core.reconcile import reconcile_all
from backscroll.core.state import StateDir
from backscroll.core.storage.sqlite import driver
from backscroll.core.storage.sqlite.writes import Writes


def ingest(archive: Path, state: StateDir, secure: bool) -> tuple[float, int]:
    driver.SECURE_DELETE = secure
    start = time.perf_counter()
    import_openclaw(state, archive)
    messages = sum(r.messages for r in reconcile_all(state))
    return time.perf_counter() - start, messages


def delete_times(state: StateDir, keys: list[str], purge: bool) -> list[float]:
    real = Writes.purge
    if not purge:
        Writes.purge = lambda self, only_if_pending=False: True  # the plain transaction
    try:
        times = []
        for key in keys:
            start = time.perf_counter()
            delete_session(state, key)
            times.append(time.perf_counter() - start)
        return times
    finally:
        Writes.purge = real


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--deletes", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "openclaw"
        sessions, messages = write_archive(archive, args.messages, args.sessions, seed=11)
        print(f"{sessions:,} sessions, {messages:,} user/assistant messages\n")
        rates: dict[bool, list[float]] = {True: [], False: []}
        states: dict[bool, StateDir] = {}
        for run in range(args.runs):
            for secure in ((True, False) if run % 2 else (False, True)):
                state = StateDir(Path(tmp) / f"state-{run}-{secure}")
                seconds, indexed = ingest(archive, state, secure)
                rates[secure].append(indexed / seconds)
                states[secure] = state
        driver.SECURE_DELETE = True
        agent = states[True].agents()[0]
        with states[True].open(agent) as db:
            keys = [s.key for s in db.sessions()][: args.deletes]
        purged = delete_times(states[True], keys, purge=True)
        plain = delete_times(states[False], keys, purge=False)

    on, off = statistics.median(rates[True]), statistics.median(rates[False])
    print(f"{'import + reconcile (messages/s)':<36} {'p50':>9} {'min':>9}  {'vs baseline':>11}")
    print(f"{'secure_delete off (baseline)':<36} {off:>9,.0f} {min(rates[False]):>9,.0f}  "
          f"{'1.00x':>11}")
    print(f"{'secure_delete on':<36} {on:>9,.0f} {min(rates[True]):>9,.0f}  {on / off:>10.2f}x")
    print(f"\n{'delete one session (ms)':<36} {'p50':>9} {'p95':>9}  {'vs baseline':>11}")
    p50, p95 = pct(plain, 0.5) * 1000, pct(plain, 0.95) * 1000
    print(f"{'plain delete transaction (baseline)':<36} {p50:>9.1f} {p95:>9.1f}  {'1.0x':>11}")
    q50, q95 = pct(purged, 0.5) * 1000, pct(purged, 0.95) * 1000
    print(f"{'delete + purge (optimize, checkpoint)':<36} {q50:>9.1f} {q95:>9.1f}  "
          f"{q50 / p50:>10.1f}x")
    print(f"\n{args.runs} runs each, alternating; {len(keys)} deletes in the first agent")


if __name__ == "__main__":
    main()
