"""What the facts of a session (issue 26, docs/usage.md) cost, measured in one run against
baselines measured beside them, call by call alternating, on the demo corpus:

- an append that folds a message into its session's facts and usage row (an assistant
  message recording a model, usage and an edit) against the same append of a user message
  with the same text (indexed alike, no facts);
- a list of conversations (``visible_session_list``, which now reads each listed session's
  facts) against the same list's storage read alone (``session_cards``);
- ``usage_report`` over the last 30 days (by day, and by project) against a list of 50
  conversations.

    .venv/bin/python benchmarks/bench_facts.py [--messages 20000] [--runs 60]

Prints the machine's load (``uptime``) before and after. Not run by CI.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

from backscroll.core.catalog import visible_session_list
from backscroll.core.demo.parts import DEFAULT_NOW_MS
from backscroll.core.demo.state import build_demo
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionFilter, SessionMeta
from backscroll.core.usage import usage_report
from backscroll.core.visibility import OPERATOR


def alternating(base: Callable[[], object], other: Callable[[], object], runs: int
                ) -> tuple[list[float], list[float]]:
    base(), other()
    out: tuple[list[float], list[float]] = ([], [])
    for n in range(runs):
        pair = ((0, base), (1, other)) if n % 2 == 0 else ((1, other), (0, base))
        for side, fn in pair:
            start = time.perf_counter()
            fn()
            out[side].append((time.perf_counter() - start) * 1000)
    return out


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def row(measured: str, baseline: str, base: list[float], other: list[float]) -> str:
    return (f"{measured:<34} {p(other, 50):8.2f} {p(other, 95):8.2f}   {baseline:<24} "
            f"{p(base, 50):8.2f} {p(base, 95):8.2f} {p(other, 50) / p(base, 50):7.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    print("load before:", load())
    with tempfile.TemporaryDirectory() as tmp:
        state = StateDir(Path(tmp) / "demo", database_url="")
        start = time.perf_counter()
        counts = build_demo(state, messages=args.messages, leave_imported_pending=False)
        print(f"demo: {counts['sessions']:,} sessions, {args.messages:,} messages, built in "
              f"{time.perf_counter() - start:.1f} s")
        agent = state.agents()[0]
        lines = []
        with state.open(agent, write=True) as db:
            counter = itertools.count()

            def appender(role: str) -> Callable[[], None]:
                meta = SessionMeta(f"agent:{agent}:bench-{role}")

                def append() -> None:
                    n = next(counter)
                    msg: dict = {"role": role, "content": [
                        {"type": "text", "text": f"appended message {n} about a deploy"}]}
                    if role == "assistant":
                        msg["content"].append({"type": "toolCall", "id": f"c{n}", "name": "edit",
                                               "arguments": {"path": f"notes/{n % 40}.md"}})
                        msg.update(model="claude-sonnet-4-5", provider="anthropic",
                                   usage={"input": 120, "output": 40, "cacheRead": 9000,
                                          "cacheWrite": 300, "cost": {"total": 0.0123}})
                    db.append(meta, json.dumps({"type": "message", "id": f"{role}{n}",
                                                "timestamp": "2026-11-30T11:00:00Z",
                                                "message": msg}))
                return append

            base, other = alternating(appender("user"), appender("assistant"), args.runs)
            lines.append(row("append: assistant, facts folded", "append: user message", base,
                             other))
            rows = db.session_cards(SessionFilter([], exclude=True), limit=1000)
            pks = [r.pk for r in rows]
            base, other = alternating(
                lambda: db.session_cards(SessionFilter([], exclude=True), limit=1000),
                lambda: (db.session_cards(SessionFilter([], exclude=True), limit=1000),
                         db.session_facts(pks)), args.runs)
            lines.append(row(f"{len(pks)} cards + their facts", f"{len(pks)} cards", base, other))
        now = DEFAULT_NOW_MS
        list50 = lambda: visible_session_list(state, OPERATOR, limit=50)  # noqa: E731
        for by in ("day", "project"):
            base, other = alternating(
                list50, lambda by=by: usage_report(state, OPERATOR, by=by, now_ms=now), args.runs)
            lines.append(row(f"usage, 30 days, by {by}", "sessions_list limit 50", base, other))
        base, other = alternating(
            list50, lambda: visible_session_list(state, OPERATOR, limit=1000), args.runs)
        lines.append(row("sessions_list limit 1000", "sessions_list limit 50", base, other))
    print(f"{'measured (ms)':<34} {'p50':>8} {'p95':>8}   {'baseline':<24} {'p50':>8} "
          f"{'p95':>8} {'ratio':>8}")
    print("\n".join(lines))
    print("load after:", load())


if __name__ == "__main__":
    main()
