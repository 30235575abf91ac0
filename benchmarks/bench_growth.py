"""How the figures grow when the archive doubles (SPEC 12: at 2M messages every figure stays
within 1.3x of its 1M value), measured in one run: every search class and caller, the
command line's start and the appends, alternating between the two states call by call, so
the machine's load and caches weigh on both sides alike (two runs of bench_search.py, minutes
apart, differ by more than what is measured here).

    .venv/bin/python benchmarks/bench_growth.py [--messages 1000000] [--runs 40]

Uses (and builds, once) the same cached states as bench_search.py, at --messages and twice
that. ``--states BEFORE AFTER`` compares two given state dirs the same way instead: two
builds of one archive (another page size, another schema). Not run by CI.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Callable

import bench_data
from bench_search import CLASSES, NO_MATCH, cli, compile_bytecode, percentiles, run_cli

from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import AgentWriter, SessionMeta
from backscroll.core.visibility import OPERATOR, Caller, Policy

LIMIT = 1.3


def alternating(small: Callable[[], object], large: Callable[[], object], runs: int
                ) -> tuple[list[float], list[float]]:
    """Times of ``runs`` calls of each, interleaved (which goes first alternates too)."""
    small(), large()  # warm: caches, the visible-session sets
    out: tuple[list[float], list[float]] = ([], [])
    for n in range(runs):
        pair = ((0, small), (1, large)) if n % 2 == 0 else ((1, large), (0, small))
        for side, fn in pair:
            start = time.perf_counter()
            fn()
            out[side].append((time.perf_counter() - start) * 1000)
    return out


def appending(db: AgentWriter, meta: SessionMeta) -> Callable[[], None]:
    """One indexed append per call, each its own transaction (bench_search.appends' event)."""
    count = itertools.count()

    def append() -> None:
        n = next(count)
        event = {"type": "message", "id": f"g{n}", "parentId": f"g{n - 1}" if n else None,
                 "timestamp": "2026-11-30T11:00:00Z",
                 "message": {"role": "user", "content": f"appended message {n} about a deploy"}}
        db.append(meta, json.dumps(event))

    return append


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000, help="the smaller archive")
    parser.add_argument("--runs", type=int, default=40, help="calls per cell and size")
    parser.add_argument("--appends", type=int, default=2000, help="appends per size")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/backscroll-bench"))
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    parser.add_argument("--states", type=Path, nargs=2, metavar=("BEFORE", "AFTER"),
                        help="compare two state dirs of one archive instead (two builds of it: "
                             "another page size, another schema)")
    args = parser.parse_args()

    sizes = (args.messages, 2 * args.messages)
    names = [f"{size:,} messages" for size in sizes]
    if args.states:
        dirs = list(args.states)
        names = [str(d) for d in dirs]
    else:
        for size in sizes:
            bench_data.ensure(args.cache, size)
        dirs = [bench_data.state_path(args.cache, size) for size in sizes]
    states = [StateDir(d) for d in dirs]
    load = os.getloadavg()
    print(f"\n{names[0]} against {names[1]}, alternating; {os.cpu_count()} cores; "
          f"load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {args.runs} calls per cell and "
          f"size; times in ms, p50/p95; ratio of the p50s (limit {LIMIT})")
    report: dict = {"compared": names, "load_before": load, "cells": {}}
    ratios: list[float] = []

    def row(label: str, small: tuple[float, float], large: tuple[float, float], at: int = 0
            ) -> None:
        ratio = large[at] / small[at]
        ratios.append(ratio)
        report["cells"][label] = {"small": small, "large": large, "ratio": ratio}
        print(f"{label:<48} {small[0]:>7.2f}/{small[1]:<7.2f} {large[0]:>7.2f}/{large[1]:<7.2f} "
              f"{ratio:>5.2f}{'' if ratio <= LIMIT else '  over'}")

    print(f"{'':<48} {'first':>15} {'second':>15} {'ratio':>5}")
    callers = {"operator": None} | {f"sees {n + 1:,}": k for n, k in bench_data.CALLERS.items()}
    for name, (query, match, _) in CLASSES.items():
        request = SearchRequest(query, match=match)
        for label, key in callers.items():
            caller = OPERATOR if key is None else Caller(key, Policy("tree"))
            calls = [lambda s=s: sessions_search(s, request, caller) for s in states]
            small, large = alternating(*calls, args.runs)
            row(f"{name}, {label}", percentiles(small), percentiles(large))

    compile_bytecode()
    starts = [lambda d=d: run_cli(cli(d, NO_MATCH, "exact", None)) for d in dirs]
    small, large = alternating(*starts, args.runs)
    row("command line, a search that matches nothing", percentiles(small), percentiles(large))
    meta = SessionMeta("agent:main:bench:growth")
    with ExitStack() as stack:
        dbs = [stack.enter_context(s.open(bench_data.AGENT, write=True)) for s in states]
        try:
            small, large = alternating(*(appending(db, meta) for db in dbs), args.appends)
        finally:
            for db in dbs:
                db.delete_session(meta.key)
    row("append p50/p99, ratio of the p50s", _p99(small), _p99(large))
    row("append p50/p99, ratio of the p99s", _p99(small), _p99(large), at=1)

    within = sum(r <= LIMIT for r in ratios)
    report["load_after"] = os.getloadavg()
    print(f"\n{within} of {len(ratios)} figures within {LIMIT}x; median ratio "
          f"{statistics.median(ratios):.2f}; load after "
          f"{' '.join(f'{x:.2f}' for x in report['load_after'])}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


def _p99(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.99 * len(ordered))]


if __name__ == "__main__":
    main()
