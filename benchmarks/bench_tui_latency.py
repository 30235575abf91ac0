"""Keystroke-to-repaint latency of the browser's search as you type (not a test).

Builds (once, then reuses, under ``/tmp``) a demo state of ``--messages`` messages in one agent,
one session per 100 messages (SPEC 12's shape: 1,000,000 messages in 10,000 sessions), with
``backscroll.core.demo.build_demo``, reconciles it fully, then drives the real app headless
with Pilot: each query is typed one character at a time, and for every keystroke the time runs
from just before the key is pressed to the moment the results list painted the answer for
exactly that text (the list records when ``render_lines`` first ran for new options). The
debounce is included: it is part of what a person waits for. Goal (SPEC 12): p95 <= 100 ms.

The row modes run in the same process on the same state, one after the other: results
grouped by conversation (the browser's default), one row per message (the baseline, what
the browser showed before) and tool calls (the tool mode, ``t``: ``tools_search`` over the
tool-call index), so the table gives their ratios against per message.

    .venv/bin/python benchmarks/bench_tui_latency.py [--messages 200000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from backscroll.core.demo import build_demo
from backscroll.core.grouped import conversations_search
from backscroll.core.indexer import INDEXER_VERSION
from backscroll.core.reconcile import reconcile_all
from backscroll.core.search import sessions_search
from backscroll.core.state import StateDir
from backscroll.core.status import state_status
from backscroll.core.storage.sqlite.schema import SCHEMA_VERSION
from backscroll.core.tool_search import tools_search
from backscroll.tui.app import make_app
from backscroll.tui.screens import search as search_screen

QUERIES = ("deploy", "connection pool", "certificate", "rollback", "migration", "backup",
           "café", "disk usage", "webhook", "flaky tests")
CACHE = Path("/tmp/backscroll-bench-tui")
MODES = ("grouped", "per message", "tool calls")


def prepare(path: Path | None, messages: int) -> Path:
    """The demo state (built once): one agent, one session per 100 messages."""
    started = time.perf_counter()
    path = path or CACHE / f"demo-m{messages}-v{INDEXER_VERSION}-s{SCHEMA_VERSION}"
    done = path / ".bench-ready"
    state = StateDir(path)
    if not done.is_file():
        print(f"building the demo ({messages:,} messages) in {path} ...", flush=True)
        build_demo(state, messages=messages, agents=1, sessions=max(1, messages // 100))
        reconcile_all(state)  # measure the steady state, not a half-built index
        done.write_text("ready\n")
    status = state_status(state)
    total = sum(a.messages for a in status.agents)
    print(f"state: {path}  ({status.total_sessions:,} sessions, {total:,} messages; "
          f"ready in {time.perf_counter() - started:.1f} s)")
    return path


CORE_MS: dict[str, float] = {}  # query text -> time the core's search took for it


def timed(search: Any) -> Any:
    def run(state: Any, request: Any, caller: Any, on_pending: Any = None) -> Any:
        start = time.perf_counter()
        try:
            return search(state, request, caller, on_pending=on_pending)
        finally:  # a tool search's request holds a message search's (its words)
            query = getattr(request, "search", request).query
            CORE_MS[query] = (time.perf_counter() - start) * 1000

    return run


async def measure(path: Path, queries: tuple[str, ...], size: tuple[int, int], mode: str
                  ) -> tuple[list[float], list[float]]:
    """(keystroke-to-repaint ms, core search ms) for every keystroke of ``queries``."""
    search_screen.sessions_search = timed(sessions_search)  # the screen's own calls, timed
    search_screen.conversations_search = timed(conversations_search)
    search_screen.tools_search = timed(tools_search)
    app = make_app(StateDir(path), auto_reconcile=False, sources=False,
                   grouped=mode == "grouped")
    latencies: list[float] = []
    core: list[float] = []
    async with app.run_test(size=size) as pilot:
        while app.status is None or not app.search_screen.results.rows:
            await pilot.pause(0.02)
        if mode == "tool calls":
            app.search_screen.action_toggle_tools()
            await pilot.pause(0.5)
        for query in queries:
            app.search_screen.search_input.value = ""
            await pilot.pause(0.2)
            typed = ""
            for char in query:
                typed += char
                CORE_MS.pop(typed, None)
                start = time.perf_counter()
                await pilot.press("space" if char == " " else char)
                results = app.search_screen.results
                deadline = start + 10
                while not (results.painted_for == typed and results.painted_at >= start):
                    if time.perf_counter() > deadline:
                        raise SystemExit(f"no repaint for {typed!r} within 10 s")
                    await asyncio.sleep(0.001)
                latencies.append((results.painted_at - start) * 1000)
                core.append(CORE_MS.get(typed, float("nan")))
    return latencies, core


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def uptime() -> str:
    """The machine's load (the machine is shared: figures mean little without it)."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def report(results: dict[str, tuple[list[float], list[float]]]) -> None:
    base = results["per message"][0]
    print("\nkeystroke to repainted results (ms), every keystroke of every query; core = the "
          "core's search alone, same keystrokes; ratio = against per message, same run")
    print(f"{'rows':<13}{'keys':>6}{'p50':>8}{'p95':>8}{'max':>8}{'core p50':>10}"
          f"{'core p95':>10}{'p50 ratio':>11}{'p95 ratio':>11}")
    for mode, (latencies, core) in results.items():
        print(f"{mode:<13}{len(latencies):>6}{statistics.median(latencies):>8.1f}"
              f"{percentile(latencies, 0.95):>8.1f}{max(latencies):>8.1f}"
              f"{statistics.median(core):>10.1f}{percentile(core, 0.95):>10.1f}"
              f"{statistics.median(latencies) / statistics.median(base):>11.2f}"
              f"{percentile(latencies, 0.95) / percentile(base, 0.95):>11.2f}")
    grouped = results["grouped"][0]
    verdict = "meets" if percentile(grouped, 0.95) <= 100 else "misses"
    print(f"\ngrouped p95 {percentile(grouped, 0.95):.1f} ms {verdict} the 100 ms goal "
          "(debounce included)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--state", type=Path, help="reuse or build the demo here")
    parser.add_argument("--size", default="120x35", help="terminal size, WxH")
    parser.add_argument("--rounds", type=int, default=2, help="type every query this often")
    args = parser.parse_args()
    path = prepare(args.state, args.messages)
    print(f"load before: {uptime()}")
    width, height = (int(n) for n in args.size.split("x"))
    results = {}
    for mode in MODES:
        results[mode] = asyncio.run(measure(path, QUERIES * args.rounds, (width, height), mode))
    report(results)
    print(f"load after: {uptime()}")


if __name__ == "__main__":
    main()
