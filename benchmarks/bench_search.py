"""The speed suite (SPEC 12, docs/performance.md): one table per query class, for the operator
and for callers who see 10 and 1,000 sessions, beside two baselines run on the same data:
the straightforward plan (bm25 over every match, then the visibility filter) in the same
process, and ripgrep over the same transcripts as JSONL files. Then appends, import +
reconciliation, peak memory, sizes, and the command line's start.

    .venv/bin/python benchmarks/bench_search.py [--messages 1000000] [--runs 30]
    .venv/bin/python benchmarks/bench_search.py --shape middle --before main --no-cli
    .venv/bin/python benchmarks/bench_search.py --grouped [--messages 1000000]

``--grouped`` times only the grouped answer, one row per conversation (the browser's, ``search
--group``, the MCP tool ``conversations_search``): conversation matching (each word somewhere
in the conversation, core/convmatch.py) beside the per-message grouping (every word in one
message) and ``sessions_search``, each a library call, for the same classes plus
``GROUPED_CLASSES``. ``--shape middle`` searches an archive with words of the middle band written in
(``bench_data.MIDDLE_WORDS``) and adds their classes; ``--before REF`` also times the library
call of the code at git revision REF (its ``core/`` exported into a temporary package), call
by call alternating with this code's, and says whether any answer differs.

The archive and the state are built once under --cache (default /tmp/backscroll-bench) and
reused; a new indexer version or schema builds a new state. Takes ~10 minutes at 1M once
built (the first build adds ~5). Not run by CI. Needs ``rg`` on PATH for the ripgrep column
(``apt-get install ripgrep``); without it that column is left out.
"""

from __future__ import annotations

import argparse
import compileall
import importlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_data

from backscroll.core.excerpt import make_excerpt
from backscroll.core.grouped import conversations_search
from backscroll.core.query import parse_query
from backscroll.core.search import EXCERPT_CHARS, SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.textseg import desegment
from backscroll.core.visibility import OPERATOR, Caller, Policy
from backscroll.core.visible_sessions import listed, visible_sessions

# name -> (query, match mode, ripgrep pattern)
CLASSES = {
    "rare word": ("keychain", "exact", "keychain"),
    "word in ~60% of messages": ("the", "exact", "the"),
    "two common words": ("the and", "exact", "the.*and"),
    "phrase of two common words": ('"in the"', "exact", "in the"),
    "two-letter prefix": ("co", "prefix", "co"),
    "accented word (folded)": ("réplica", "exact", "r[eé]plica"),
    "CJK, 1 character": ("要", "exact", "要"),
    "CJK, 3 characters": ("数据库", "exact", "数据库"),
}
# The middle shape's words (bench_data.MIDDLE_WORDS): every match up to the rank window is a
# candidate, scored in Python.
MIDDLE_CLASSES = {
    "accented word in ~5k messages": ("fiabilité", "exact", "fiabilit[eé]"),
    "CJK 3 characters in ~6k messages": ("缓存区", "exact", "缓存区"),
    "word in ~20k messages": ("kestrel", "exact", "kestrel"),
}
# Conversation matching (``--grouped``, issue 27): words a conversation holds in different
# messages, beside the classes above (shares of the demo's indexed messages, measured on the
# 3,000-message demo).
GROUPED_CLASSES = {
    "two words ~1% each": ("canary incident", "exact", ""),
    "three words 2-5% each": ("billing rollback latency", "exact", ""),
    "rare word and a word in ~60%": ("keychain the", "exact", ""),
}
NO_MATCH = "zzqxjvnomatch"


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def timed(fn, runs: int) -> list[float]:
    fn()  # warm: caches, the visible-session set
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def timed_pair(fn, other, runs: int) -> tuple[list[float], list[float], list[float], list[float]]:
    """``fn`` and ``other`` timed call by call alternating (after one warm-up call each), so
    the machine's moment weighs on both alike: wall times, then CPU times (the thread's, which
    other tenants' load inflates far less) of each."""
    fn()
    other()
    out: tuple[list[float], ...] = ([], [], [], [])
    for _ in range(runs):
        for k, call in enumerate((fn, other)):
            start, cpu = time.perf_counter(), time.thread_time()
            call()
            out[k].append((time.perf_counter() - start) * 1000)
            out[k + 2].append((time.thread_time() - cpu) * 1000)
    return out  # type: ignore[return-value]


def code_at(ref: str, folder: Path):
    """The ``sessions_search`` of git revision ``ref``: its ``core/`` exported as the package
    ``before_backscroll.core`` (core's imports are relative) under ``folder``."""
    repo = Path(__file__).resolve().parent.parent
    package = folder / "before_backscroll"
    package.mkdir()
    (package / "__init__.py").write_text("")
    tar = subprocess.run(["git", "-C", str(repo), "archive", ref, "core"], check=True,
                         capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(package)], input=tar, check=True)
    sys.path.insert(0, str(folder))
    search = importlib.import_module("before_backscroll.core.search")
    visibility = importlib.import_module("before_backscroll.core.visibility")
    return search, visibility


def answer(response) -> list[tuple]:
    return [(r.session_key, r.message_id, r.score, r.excerpt) for r in response.results]


def straightforward(state: StateDir, request: SearchRequest, caller: Caller) -> list:
    """The reference plan: FTS5's bm25 over every match, then the caller's sessions, then the
    same excerpts backscroll makes (the filter comes before the limit, as it must)."""
    parsed = parse_query(request.query, request.match)
    results = []
    for agent in state.agents():
        with state.open(agent) as db, db.snapshot():
            visible = visible_sessions(db, caller)
            for row, score in db.match_all_then_filter(parsed, listed(db, visible.searchable),
                                                      request.limit):
                results.append((score, make_excerpt(desegment(row.body), parsed, EXCERPT_CHARS)))
    return sorted(results, key=lambda r: r[0])[: request.limit]


def cli(state: Path, query: str, match: str, caller: str | None) -> list[str]:
    argv = [str(Path(sys.executable).with_name("backscroll")), "search", query, "--json",
            "--state-dir", str(state)]
    if match == "prefix":
        argv.append("--prefix")
    if caller:
        argv += ["--as", caller]
    return argv


def compile_bytecode() -> None:
    """Write the package's bytecode first, as an install does: with PYTHONDONTWRITEBYTECODE set
    (these machines set it) every start would otherwise compile each changed module again."""
    import backscroll.core
    import backscroll.tui

    for folder in [*backscroll.core.__path__, *backscroll.tui.__path__]:
        compileall.compile_dir(folder, quiet=1)


def run_cli(argv: list[str]) -> None:
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def caller_files(archive: Path, caller: str | None, state: StateDir) -> list[str] | None:
    """The JSONL files of the sessions a caller sees (None: the whole archive)."""
    if caller is None:
        return None
    with state.open(bench_data.AGENT) as db:
        visible = visible_sessions(db, Caller(caller, Policy("tree")))
        ids = [s.session_id for s in db.sessions_by_pk(listed(db, visible.searchable)).values()]
    folder = archive / "agents" / bench_data.AGENT / "sessions"
    return [str(folder / f"{sid}.jsonl") for sid in ids]


def ripgrep(pattern: str, archive: Path, files: list[str] | None) -> list[str]:
    return ["rg", "-i", "-c", "--no-messages", "-e", pattern] + (files or [str(archive)])


def run_rg(argv: list[str]) -> None:
    subprocess.run(argv, stdout=subprocess.DEVNULL)  # exit 1 = no match: fine


def appends(state: StateDir, count: int) -> list[float]:
    """The live write path: one committed transaction per message, index row included."""
    key = "agent:main:bench:append"
    out = []
    with state.open(bench_data.AGENT, write=True) as db:
        meta = SessionMeta(key)
        parent = None
        for n in range(count):
            event = {"type": "message", "id": f"b{n}", "parentId": parent,
                     "timestamp": "2026-11-30T11:00:00Z",
                     "message": {"role": "user", "content": f"appended message {n} about a deploy"}}
            start = time.perf_counter()
            db.append(meta, json.dumps(event))
            out.append((time.perf_counter() - start) * 1000)
            parent = f"b{n}"
        db.delete_session(key)
    return out


def grouped_tables(state: StateDir, callers: dict[str, str | None], runs: int,
                   report: dict, wanted: set[str] | None = None) -> None:
    """Conversation matching, per class and caller, beside the per-message grouping and the
    message-level answer, timed call by call alternating (``timed_pair``: wall and the
    thread's CPU time, which other tenants' load inflates least)."""
    for name, (query, match, _pattern) in {**CLASSES, **GROUPED_CLASSES}.items():
        if wanted and name not in wanted:
            continue
        print(f"\n{name}: {query!r}{' (prefix)' if match == 'prefix' else ''}")
        print(f"{'caller':<11} {'conversations p50/p95':>22} {'per-message p50/p95':>20} "
              f"{'x':>5} {'sessions_search':>16} {'found':>6} {'one msg':>7}  windowed  "
              f"{'CPU p50/p95':>12} {'per-message':>12}")
        for label, key in callers.items():
            caller = OPERATOR if key is None else Caller(key, Policy("tree"))
            request = SearchRequest(query, match=match)
            now, grouped, cpu_now, cpu_grouped = timed_pair(
                lambda: conversations_search(state, request, caller),
                lambda: conversations_search(state, request, caller, spread=False), runs)
            messages = percentiles(timed(lambda: sessions_search(state, request, caller), runs))
            conv, per = percentiles(now), percentiles(grouped)
            found = conversations_search(state, request, caller)
            together = len(conversations_search(state, request, caller,
                                                spread=False).conversations)
            windowed = found.response.ranked_window
            cpu = percentiles(cpu_now), percentiles(cpu_grouped)
            report.setdefault("grouped", {}).setdefault(name, {})[label] = {
                "conversations": conv, "per_message": per, "sessions_search": messages,
                "found": len(found.conversations), "windowed": windowed,
                "cpu_conversations": cpu[0], "cpu_per_message": cpu[1]}
            print(f"{label:<11} {conv[0]:>11.1f}/{conv[1]:<10.1f} {per[0]:>10.1f}/{per[1]:<9.1f} "
                  f"{conv[0] / per[0]:>5.1f} {messages[0]:>8.1f}/{messages[1]:<7.1f} "
                  f"{len(found.conversations):>6} {together:>7}  {'yes' if windowed else 'no':<8}  "
                  f"{cpu[0][0]:>5.1f}/{cpu[0][1]:<6.1f} {cpu[1][0]:>5.1f}/{cpu[1][1]:<6.1f}")


def held(state: StateDir) -> dict:
    """What a state holds (``--state``): its sessions, the events stored as "messages" (the
    user and assistant messages are about half of them in this corpus) and the rows indexed."""
    import sqlite3

    conn = sqlite3.connect(f"file:{state.db_path(bench_data.AGENT)}?mode=ro", uri=True)
    try:
        sessions, events = conn.execute("SELECT count(*), sum(last_seq) FROM sessions").fetchone()
        indexed = conn.execute("SELECT sum(rows) FROM index_state").fetchone()[0]
    finally:
        conn.close()
    return {"messages": events, "indexed": indexed, "sessions": sessions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=30, help="runs per class and caller")
    parser.add_argument("--baseline-runs", type=int, default=10)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/backscroll-bench"))
    parser.add_argument("--classes", help="comma-separated class names (default: all)")
    parser.add_argument("--no-cli", action="store_true", help="skip whole-process timings")
    parser.add_argument("--state", type=Path,
                        help="time searches on this state dir as it is (a build stopped "
                             "midway, say): nothing is built, no build figures")
    parser.add_argument("--no-baselines", action="store_true",
                        help="skip the straightforward plan and ripgrep (at 10M: minutes a cell)")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    parser.add_argument("--shape", choices=bench_data.SHAPES, default="demo")
    parser.add_argument("--grouped", action="store_true",
                        help="time only the grouped answer (conversation matching)")
    parser.add_argument("--before", metavar="REF",
                        help="also time the library call of this git revision, alternating")
    args = parser.parse_args()

    archive = bench_data.archive_path(args.cache, args.messages, args.shape)
    if args.state is not None:
        state_dir = args.state
        build = held(StateDir(state_dir))
    else:
        build = bench_data.ensure(args.cache, args.messages, args.shape)
        state_dir = bench_data.state_path(args.cache, args.messages, args.shape)
    before = None
    if args.before:
        before = code_at(args.before, Path(tempfile.mkdtemp(prefix="bench-before-")))
    state = StateDir(state_dir)
    has_rg = shutil.which("rg") is not None
    load = os.getloadavg()
    print(f"\n{build['messages']:,} messages ({build['indexed']:,} indexed) in "
          f"{build['sessions']:,} sessions; {os.cpu_count()} cores; load {load[0]:.2f} "
          f"{load[1]:.2f} {load[2]:.2f}; {args.runs} runs per cell (baseline "
          f"{args.baseline_runs}); times in ms")
    report: dict = {"build": build, "load_before": load, "classes": {}}

    callers = {"operator": None}
    with state.open(bench_data.AGENT) as db:
        for key in bench_data.CALLERS.values():
            seen = len(visible_sessions(db, Caller(key, Policy("tree"))).searchable)
            callers[f"sees {seen:,}"] = key
    if args.grouped:
        grouped_tables(state, callers, args.runs, report,
                       set(args.classes.split(",")) if args.classes else None)
        report["load_after"] = os.getloadavg()
        print(f"load after: {' '.join(f'{x:.2f}' for x in report['load_after'])}")
        if args.json:
            args.json.write_text(json.dumps(report, indent=1))
        return
    start_p50 = None
    if not args.no_cli:
        compile_bytecode()
        samples = timed(lambda: run_cli(cli(state_dir, NO_MATCH, "exact", None)), args.runs)
        start_p50, start_p95 = percentiles(samples)
        report["cli_start"] = {"p50": start_p50, "p95": start_p95}
        print(f"command line, a search that matches nothing (whole process): "
              f"p50 {start_p50:.0f}, p95 {start_p95:.0f} (goal: 150)")

    classes = {**CLASSES, **(MIDDLE_CLASSES if args.shape == "middle" else {})}
    wanted = set(args.classes.split(",")) if args.classes else set(classes)
    for name, (query, match, pattern) in classes.items():
        if name not in wanted:
            continue
        print(f"\n{name}: {query!r}{' (prefix)' if match == 'prefix' else ''}")
        head = (f"{'caller':<11} {'library p50/p95':>16} {'CLI p50/p95':>13} {'CLI-start':>9} "
                f"{'straightforward':>16} {'x':>6} {'ripgrep':>14} {'x':>6}  windowed"
                + (f"  {'before p50/p95':>16} {'x':>5} same {'CPU':>6} {'before':>6}"
                   if before else ""))
        print(head)
        for label, key in callers.items():
            caller = OPERATOR if key is None else Caller(key, Policy("tree"))
            request = SearchRequest(query, match=match)
            answer_now = sessions_search(state, request, caller)
            before_cell = ""
            if before is None:
                lib = percentiles(timed(lambda: sessions_search(state, request, caller), args.runs))
            else:
                old_search, old_visibility = before
                old_caller = old_visibility.OPERATOR if key is None else old_visibility.Caller(
                    key, old_visibility.Policy("tree"))
                old_request = old_search.SearchRequest(query, match=match)
                old_state = importlib.import_module("before_backscroll.core.state").StateDir(
                    state_dir)
                now, then, now_cpu, then_cpu = timed_pair(
                    lambda: sessions_search(state, request, caller),
                    lambda: old_search.sessions_search(old_state, old_request, old_caller),
                    args.runs,
                )
                lib, old = percentiles(now), percentiles(then)
                cpu = (statistics.median(now_cpu), statistics.median(then_cpu))
                same = answer(old_search.sessions_search(old_state, old_request, old_caller)) \
                    == answer(answer_now)
                before_cell = (f"  {old[0]:>8.1f}/{old[1]:<7.1f} {old[0] / lib[0]:>5.1f} "
                               f"{'yes' if same else 'NO':<4} {cpu[0]:>6.1f} {cpu[1]:>6.1f}")
            base = (float("nan"), float("nan")) if args.no_baselines else percentiles(
                timed(lambda: straightforward(state, request, caller), args.baseline_runs))
            row = {"library": lib, "straightforward": base,
                   "windowed": answer_now.ranked_window, "results": len(answer_now.results)}
            if before is not None:
                row["before"] = {"library": old, "same_answer": same, "cpu_p50": cpu}
            cli_cell = start_cell = "-"
            if not args.no_cli:
                argv = cli(state_dir, query, match, key)
                row["cli"] = percentiles(timed(lambda: run_cli(argv), args.runs))
                cli_cell = f"{row['cli'][0]:.0f}/{row['cli'][1]:.0f}"
                start_cell = f"{row['cli'][0] - start_p50:.0f}"
            rg_cell, rg_ratio = "-", "-"
            if has_rg and not args.no_baselines:
                argv = ripgrep(pattern, archive, caller_files(archive, key, state))
                row["ripgrep"] = percentiles(timed(lambda: run_rg(argv), args.baseline_runs))
                rg_cell = f"{row['ripgrep'][0]:.0f}/{row['ripgrep'][1]:.0f}"
                rg_ratio = f"{row['ripgrep'][0] / lib[0]:.0f}"
            report["classes"].setdefault(name, {})[label] = row
            print(f"{label:<11} {lib[0]:>8.1f}/{lib[1]:<7.1f} {cli_cell:>13} {start_cell:>9} "
                  f"{base[0]:>8.0f}/{base[1]:<7.0f} {base[0] / lib[0]:>6.0f} {rg_cell:>14} "
                  f"{rg_ratio:>6}  {'yes' if answer_now.ranked_window else 'no':<8}{before_cell}")

    # the searching process's peak memory (the page cache it reads through is the system's)
    report["search_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS of this process after the searches: {report['search_peak_rss_mb']:.0f} MB")
    samples = appends(state, 2000)
    ordered = sorted(samples)
    report["append"] = {"p50": statistics.median(ordered), "p99": ordered[int(0.99 * len(ordered))]}
    report["sizes_mb"] = {"state": bench_data.size_mb(state_dir),
                          "jsonl": bench_data.size_mb(archive)}
    print(f"\nappend (one transaction per message, index row included): "
          f"p50 {report['append']['p50']:.3f} ms, p99 {report['append']['p99']:.3f} ms "
          f"(goals: 0.3, 10)")
    if "import_s" in build:
        rate = build["messages"] / (build["import_s"] + build["reconcile_s"])
        print(f"import + reconcile: {build['import_s']:.1f} s + {build['reconcile_s']:.1f} s = "
              f"{rate:,.0f} messages/s (goal: 30,000); peak memory {build['peak_rss_mb']:.0f} "
              f"MB (+ helper process {build['helper_peak_rss_mb']:.0f} MB)")
    print(f"state dir {report['sizes_mb']['state']:,.0f} MB for "
          f"{report['sizes_mb']['jsonl']:,.0f} MB of JSONL "
          f"({report['sizes_mb']['state'] / report['sizes_mb']['jsonl']:.2f}x)")
    report["load_after"] = os.getloadavg()
    print(f"load after: {' '.join(f'{x:.2f}' for x in report['load_after'])}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
