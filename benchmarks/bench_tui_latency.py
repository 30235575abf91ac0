"""Keystroke-to-repaint latency of the browser's search as you type (not a test).

Builds (once, then reuses, under ``/tmp``) a demo state of ``--messages`` messages in one agent,
one session per 100 messages (SPEC 12's shape: 1,000,000 messages in 10,000 sessions), with
``backscroll.core.demo.build_demo``, reconciles it fully, then drives the real app headless
with Pilot: each query is typed one character at a time, and for every keystroke the time runs
from just before the key is pressed to the moment the results list painted the answer for
exactly that text (the list records the text whose answer its options hold when
``render_lines`` first ran for them). The debounce is included: it is part of what a person
waits for. Goal (SPEC 12): p95 <= 100 ms. After each query the benchmark waits, as a person
reading the answer does, until the preview shows the highlighted row's conversation.

The row modes run on the same state: results grouped by conversation (the browser's default),
one row per message (the baseline) and tool calls (the tool mode, ``t``: ``tools_search`` over
the tool-call index), so the table gives their ratios against per message. Every
round of every mode runs in a process of its own (a fresh app, as a person starts it), the
modes alternating. ``--before REF`` also runs the browser and core of git revision REF (its
``core/`` and ``tui/`` exported into a temporary ``backscroll`` package), alternating with
this code's round by round, so both see the same machine; the table then has a row per code
and mode, and ratios against REF. REF must have this code's schema and extraction version (it
reads the same state; a round of another refuses to run).

The keystrokes are also split by the length of the word being typed (1 letter, 2 letters,
3 or more). A browser that answers a keystroke with the rows on screen and the full page once
typing pauses (docs/browser.md) is timed to the first page painted for exactly the text typed;
a second table gives the time from a query's last keystroke to its full page painted.

    .venv/bin/python benchmarks/bench_tui_latency.py [--messages 200000] [--rounds 2]
    .venv/bin/python benchmarks/bench_tui_latency.py --messages 1000000 --before main --after HEAD
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

QUERIES = ("deploy", "connection pool", "certificate", "rollback", "migration", "backup",
           "café", "disk usage", "webhook", "flaky tests")
CACHE = Path("/tmp/backscroll-bench-tui")
MODES = ("grouped", "per message", "tool calls")
LENGTHS = ("1 letter", "2 letters", "3+ letters")


def prepare(path: Path | None, messages: int) -> Path:
    """The demo state (built once): one agent, one session per 100 messages."""
    from backscroll.core.demo import build_demo
    from backscroll.core.indexer import INDEXER_VERSION
    from backscroll.core.reconcile import reconcile_all
    from backscroll.core.state import StateDir
    from backscroll.core.status import state_status
    from backscroll.core.storage.sqlite.schema import SCHEMA_VERSION

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


def word_length(typed: str) -> str:
    """Which of LENGTHS the keystroke that made ``typed`` belongs to: the length of the word
    being typed (a space: the word it ended)."""
    words = typed.split()
    n = len(words[-1]) if words else 0
    return LENGTHS[min(n, 3) - 1] if n else LENGTHS[-1]


# --- one round, in a child process ----------------------------------------------------------

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
                  ) -> tuple[list[tuple[str, float, float]], list[tuple[str, float]]]:
    """(text typed, keystroke-to-repaint ms, core search ms) for every keystroke of
    ``queries``; and (query, ms) from its last keystroke to the full page painted, for each
    query whose keystrokes were answered with a first page (a browser that asks for the rows
    on screen while typing, and for the full page once typing pauses)."""
    from backscroll.core.grouped import conversations_search
    from backscroll.core.search import LIMIT_MAX, sessions_search
    from backscroll.core.state import StateDir
    from backscroll.tui.app import make_app
    from backscroll.tui.screens import search as search_screen

    search_screen.sessions_search = timed(sessions_search)  # the screen's own calls, timed
    search_screen.conversations_search = timed(conversations_search)
    if mode == "tool calls":  # a revision without the tool-call index has no such round
        from backscroll.core.tool_search import tools_search

        search_screen.tools_search = timed(tools_search)
    app = make_app(StateDir(path), auto_reconcile=False, sources=False,
                   grouped=mode == "grouped")
    keystrokes: list[tuple[str, float, float]] = []
    full_pages: list[tuple[str, float]] = []
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
                keystrokes.append((typed, (results.painted_at - start) * 1000,
                                   CORE_MS.get(typed, float("nan"))))
            screen = app.search_screen
            if getattr(screen.scheduler, "full_page_due", False):  # the rest once typing pauses
                painted = results.painted_answers
                while not (results.painted_answers > painted and screen.last_request is not None
                           and screen.last_request.limit == LIMIT_MAX):
                    if time.perf_counter() > deadline:
                        raise SystemExit(f"no full page for {typed!r} within 10 s")
                    await asyncio.sleep(0.001)
                full_pages.append((typed, (results.painted_at - start) * 1000))
            # a person reads the answer: the preview is drawn before the next query (in every
            # code alike, so no code's preview lands in another's next keystrokes)
            while not previewed(screen):
                if time.perf_counter() > deadline:
                    raise SystemExit(f"no preview for {typed!r} within 10 s")
                await asyncio.sleep(0.005)
    return keystrokes, full_pages


def previewed(screen: Any) -> bool:
    """The preview shows the conversation of the highlighted row (or no row is highlighted)."""
    from backscroll.tui.widgets import row_anchor, row_key

    current = screen.results.current
    return current is None or screen.history.shown == (row_key(current),
                                                       row_anchor(current) or "")


def child(args: argparse.Namespace) -> None:
    """One round: type every query once in one row mode; the keystrokes as JSON on stdout."""
    import backscroll.tui
    from backscroll.core.indexer import INDEXER_VERSION
    from backscroll.core.storage.sqlite.schema import SCHEMA_VERSION

    versions = f"-v{INDEXER_VERSION}-s{SCHEMA_VERSION}"
    if args.state.parent == CACHE and not args.state.name.endswith(versions):
        # its reconciliation would re-index or migrate the state the other code reads
        raise SystemExit(f"{backscroll.tui.__file__}: this code indexes or stores differently "
                         f"({versions[1:]}, the state {args.state.name}); compare revisions "
                         "of one schema and extraction version")

    width, height = (int(n) for n in args.size.split("x"))
    keystrokes, full_pages = asyncio.run(measure(args.state, QUERIES, (width, height),
                                                 args.mode))
    print(json.dumps({"code": str(Path(backscroll.tui.__file__).parent.parent),
                      "keystrokes": keystrokes, "full_pages": full_pages}))


# --- the rounds, alternating, and the table -------------------------------------------------

def export_code(ref: str) -> Path:
    """Git revision ``ref``'s ``core/`` and ``tui/`` as the package ``backscroll`` in a new
    folder (put first on a child's PYTHONPATH, it shadows this worktree's)."""
    repo = Path(__file__).resolve().parent.parent
    folder = Path(tempfile.mkdtemp(prefix="bench-tui-before-"))
    package = folder / "backscroll"
    package.mkdir()
    tar = subprocess.run(["git", "-C", str(repo), "archive", ref, "core", "tui"], check=True,
                         capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(package)], input=tar, check=True)
    return folder


def run_round(state: Path, mode: str, size: str, code: Path | None) -> dict[str, Any]:
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, __file__, "--child", "--state", str(state), "--mode",
                           mode, "--size", size], env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"a round failed ({mode}, {code or 'this worktree'}):\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def report(results: dict[tuple[str, str], list[tuple[str, float, float]]], codes: list[str],
           full_pages: dict[tuple[str, str], list[tuple[str, float]]]) -> None:
    """One row per code, mode and word length, ratios against per message (same code) and
    against the first code (``--before``'s REF) in the same mode."""
    print("\nkeystroke to repainted results (ms), every keystroke of every query; core = the "
          "core's search alone, same keystrokes; ratios = p50 / p95 against the same code's "
          "per message rows, and against the first code's same rows, same run")
    print(f"{'code':<8}{'rows':<13}{'word':<12}{'keys':>6}{'p50':>8}{'p95':>8}{'max':>8}"
          f"{'core p50':>10}{'core p95':>10}{'vs per message':>16}{'vs ' + codes[0]:>16}")
    for code in codes:
        for mode in MODES:
            for length in ("all", *LENGTHS):
                def keys(c: str, m: str, n: str = length) -> list[tuple[str, float, float]]:
                    return [k for k in results[c, m] if n == "all" or word_length(k[0]) == n]

                rows = keys(code, mode)
                if not rows:
                    continue
                latencies = [k[1] for k in rows]
                core = [k[2] for k in rows]
                p50, p95 = statistics.median(latencies), percentile(latencies, 0.95)

                def ratio(other: list[tuple[str, float, float]]) -> str:
                    base = [k[1] for k in other]
                    return (f"{p50 / statistics.median(base):.2f} / "
                            f"{p95 / percentile(base, 0.95):.2f}")

                print(f"{code:<8}{mode:<13}{length:<12}{len(rows):>6}{p50:>8.1f}{p95:>8.1f}"
                      f"{max(latencies):>8.1f}{statistics.median(core):>10.1f}"
                      f"{percentile(core, 0.95):>10.1f}{ratio(keys(code, 'per message')):>16}"
                      f"{ratio(keys(codes[0], mode)):>16}")
    print("\nlast keystroke of a query to the full page painted (ms; the pause in typing the "
          "browser waits for is included), where the keystrokes got a first page")
    for (code, mode), pages in full_pages.items():
        if pages:
            ms = [p[1] for p in pages]
            print(f"{code:<8}{mode:<13}{len(ms):>6} queries  p50 {statistics.median(ms):>7.1f}"
                  f"  p95 {percentile(ms, 0.95):>7.1f}  max {max(ms):>7.1f}")
    grouped = [k[1] for k in results[codes[-1], "grouped"]]
    verdict = "meets" if percentile(grouped, 0.95) <= 100 else "misses"
    print(f"\n{codes[-1]}: grouped p95 {percentile(grouped, 0.95):.1f} ms {verdict} the 100 ms "
          "goal (debounce included)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--state", type=Path, help="reuse or build the demo here")
    parser.add_argument("--size", default="120x35", help="terminal size, WxH")
    parser.add_argument("--rounds", type=int, default=2, help="type every query this often")
    parser.add_argument("--before", metavar="REF",
                        help="also measure git revision REF's browser, alternating")
    parser.add_argument("--after", metavar="REF",
                        help="measure git revision REF's browser instead of this worktree's "
                             "(edits made while it runs change nothing)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    path = prepare(args.state, args.messages)
    codes: dict[str, Path | None] = {}
    if args.before:
        codes[args.before] = export_code(args.before)
    codes[args.after or "now"] = export_code(args.after) if args.after else None
    print(f"load before: {load()}", flush=True)
    results: dict[tuple[str, str], list[tuple[str, float, float]]] = {
        (name, mode): [] for name in codes for mode in MODES}
    full_pages: dict[tuple[str, str], list[tuple[str, float]]] = {key: [] for key in results}
    for round_no in range(args.rounds):
        for mode in MODES:
            for name, code in codes.items():
                answer = run_round(path, mode, args.size, code)
                results[name, mode] += answer["keystrokes"]
                full_pages[name, mode] += answer["full_pages"]
                print(f"round {round_no + 1}, {mode}, {name} ({answer['code']}): "
                      f"{len(answer['keystrokes'])} keystrokes", flush=True)
    print(f"load after: {load()}")
    report(results, list(codes), full_pages)


if __name__ == "__main__":
    main()
