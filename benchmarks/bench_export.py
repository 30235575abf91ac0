"""``backscroll export`` of a 5,000-message conversation, as whole processes (not a test): the
interpreter's start, the imports, reading the branch, redacting every field, rendering and
writing, as a person or a script running the command pays for it.

Each row is one command, run ``--runs`` times, the rows taken in turn (round robin) so a
passing load falls on all of them alike; p50 and p95 in milliseconds and the ratio of each
p50 to the baseline measured in the same run, ``history --json`` (the newest 80 KiB of the
same conversation: the command's start and a read of the outline). The machine's load
(``uptime``) before and after.

    .venv/bin/python benchmarks/bench_export.py [--messages 5000] [--runs 15]

The conversation: user and assistant messages of about 60 characters, every 100th message
a ``bash`` call and its result (every other one failed), as ``tests/test_export_chromium.py``
opens in Chromium.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backscroll.core.state import StateDir  # noqa: E402
from backscroll.core.storage import SessionMeta  # noqa: E402
from tests.events import billing_conversation  # noqa: E402

KEY = "agent:ops:session-long"


def build(path: Path, messages: int) -> StateDir:
    state = StateDir(path, database_url="")
    with state.open("ops", write=True) as db:
        db.import_session(SessionMeta(KEY, session_id="sid-long"), billing_conversation(messages))
    return state


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def in_process(state: StateDir, runs: int) -> dict[str, list[float]]:
    """Where a process's time goes: the export itself, without the start and the imports."""
    from backscroll.core.export import export_conversation
    from backscroll.core.visibility import OPERATOR

    times: dict[str, list[float]] = {"json": [], "markdown": [], "html": []}
    for _ in range(runs):
        for fmt, values in times.items():
            started = time.perf_counter()
            export_conversation(state, KEY, OPERATOR, fmt, include_tools=True)
            values.append((time.perf_counter() - started) * 1000)
    return times


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "load: " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    print(f"before: {uptime()}")
    with tempfile.TemporaryDirectory() as tmp:
        state = build(Path(tmp) / "state", args.messages)
        cli = [sys.executable, "-m", "backscroll.tui.cli"]
        common = ["--state-dir", str(state.path)]
        out = Path(tmp) / "out"
        rows: list[tuple[str, list[str]]] = [
            ("history --json (baseline)", [*cli, "history", KEY, "--json", *common]),
            ("export --format json --include-tools",
             [*cli, "export", KEY, "--format", "json", "--include-tools", *common]),
            ("export --include-tools (markdown)",
             [*cli, "export", KEY, "--include-tools", *common]),
            ("export --format html", [*cli, "export", KEY, "--format", "html", *common]),
            ("export --format html --include-tools",
             [*cli, "export", KEY, "--format", "html", "--include-tools", *common]),
            ("  the same, -o FILE --force",
             [*cli, "export", KEY, "--format", "html", "--include-tools", "-o", str(out),
              "--force", *common]),
        ]
        times: dict[str, list[float]] = {name: [] for name, _ in rows}
        sizes: dict[str, int] = {}
        for _ in range(args.runs):
            for name, command in rows:
                started = time.perf_counter()
                done = subprocess.run(command, capture_output=True, check=True)
                times[name].append((time.perf_counter() - started) * 1000)
                sizes[name] = len(done.stdout) if "-o" not in command else out.stat().st_size
        inside = in_process(state, max(3, args.runs // 3))
    base = statistics.median(times[rows[0][0]])
    print(f"{args.messages:,} messages, {args.runs} runs each, whole processes")
    print("| command | p50 ms | p95 ms | x baseline | output bytes |")
    print("|---|---:|---:|---:|---:|")
    for name, _ in rows:
        p50 = statistics.median(times[name])
        print(f"| `{name.strip()}` | {p50:,.0f} | {percentile(times[name], 0.95):,.0f} | "
              f"{p50 / base:.1f} | {sizes[name]:,} |")
    print("in one process (export_conversation, the same conversation, tools included):")
    for fmt, values in inside.items():
        print(f"  {fmt:<8} p50 {statistics.median(values):,.0f} ms  "
              f"p95 {percentile(values, 0.95):,.0f} ms")
    print(f"after: {uptime()}")


if __name__ == "__main__":
    main()
