"""What the entry bounds cost on the import path (not a test).

Decodes the demo generator's transcripts as JSON lines (what an import reads) with the
bounded decoder (``transcript.decode_line``: size, nesting depth, Unicode checks) and with
the baseline, the same process and data: plain ``bytes.decode`` + ``json.loads``. Alternating
runs; p50 and p95 of the per-run time over all lines, and the ratio.

    .venv/bin/python benchmarks/bench_bounds.py [--messages 50000] [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from backscroll.core.demo.corpus import generate
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=15)
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
    print(f"{'decoder':<40} {'p50 s':>8} {'p95 s':>8} {'lines/s':>11} {'vs baseline':>12}")
    base = statistics.median(times["baseline"])
    for name, label in (("baseline", "json.loads (baseline)"),
                        ("bounded", "decode_line (bounds checked)")):
        ordered = sorted(times[name])
        p50 = statistics.median(ordered)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        print(f"{label:<40} {p50:>8.3f} {p95:>8.3f} {len(lines) / p50:>11,.0f} "
              f"{p50 / base:>11.2f}x")


if __name__ == "__main__":
    main()
