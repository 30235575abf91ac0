"""What the entry bounds cost on the import path (not a test).

1. Decodes the demo generator's transcripts as JSON lines (what an import reads) with the
   bounded decoder (``transcript.decode_line``: size, nesting depth, Unicode checks) and with
   the baseline, the same process and data: plain ``bytes.decode`` + ``json.loads``.
2. Imports the same transcripts as an OpenClaw state dir (``import_openclaw``) with the bounded
   decoder and, as the baseline, with the plain one swapped in.

Alternating runs; min, p50 and p95 of the per-run times, and the ratios.

    .venv/bin/python benchmarks/bench_bounds.py [--messages 50000] [--runs 15] [--imports 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench_reconcile import write_archive

from backscroll.core.demo.corpus import generate
from backscroll.core.importers import common
from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.state import StateDir
from backscroll.core.transcript import decode_line


def corpus(messages: int) -> list[bytes]:
    return [
        json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()
        for session in generate(seed=3, messages=messages)
        for event in session.events
    ]


def baseline(lines: list[bytes]) -> None:
    for line in lines:
        json.loads(line.decode("utf-8"))


def bounded(lines: list[bytes]) -> None:
    for line in lines:
        decode_line(line)


def plain(line: bytes, max_bytes: object = None) -> object:
    return json.loads(line.decode("utf-8"))


def imports(messages: int, runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"baseline": [], "bounded": []}
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "openclaw"
        write_archive(archive, messages, max(messages // 100, 1), seed=11)
        for run in range(runs):
            for name in (("baseline", "bounded") if run % 2 else ("bounded", "baseline")):
                common.decode_line = plain if name == "baseline" else decode_line
                start = time.perf_counter()
                import_openclaw(StateDir(Path(tmp) / f"state-{run}-{name}"), archive)
                times[name].append(time.perf_counter() - start)
        common.decode_line = decode_line
    return times


def table(title: str, times: dict[str, list[float]], count: int, unit: str) -> None:
    print(f"{title:<32} {'min s':>7} {'p50 s':>7} {'p95 s':>7} {unit + '/s (p50)':>15} "
          f"{'p50 vs base':>12} {'min vs base':>12}")
    base50, base_min = statistics.median(times["baseline"]), min(times["baseline"])
    for name, label in (("baseline", "plain json.loads (baseline)"),
                        ("bounded", "bounded decode_line")):
        ordered = sorted(times[name])
        p50 = statistics.median(ordered)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        print(f"  {label:<30} {ordered[0]:>7.3f} {p50:>7.3f} {p95:>7.3f} {count / p50:>15,.0f} "
              f"{p50 / base50:>11.2f}x {ordered[0] / base_min:>11.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--imports", type=int, default=5)
    args = parser.parse_args()
    lines = corpus(args.messages)
    size = sum(map(len, lines))
    times: dict[str, list[float]] = {"baseline": [], "bounded": []}
    for run in range(args.runs):
        order = (baseline, bounded) if run % 2 else (bounded, baseline)
        for fn in order:
            start = time.perf_counter()
            fn(lines)
            times[fn.__name__].append(time.perf_counter() - start)
    print(f"{len(lines):,} lines, {size / 1e6:.1f} MB, {args.runs} runs each, alternating\n")
    table("decoding every line", times, len(lines), "lines")
    print()
    table(f"import_openclaw, {args.imports} runs", imports(args.messages, args.imports),
          args.messages, "msgs")
    print("\n(the minimum is the run least disturbed by other processes on a shared machine)")


if __name__ == "__main__":
    main()
