"""The tool-call index (issue 26, docs/tool-calls.md): what it costs and how fast it answers.

    .venv/bin/python benchmarks/bench_tools.py [--messages 1000000] [--runs 30]

On the benchmark archive (bench_data: the demo generator's corpus, whose assistant turns make
exec, read, edit, web_fetch, ... calls with results, some failed), in one run:

1. import + reconciliation twice, each in a process of its own, into two fresh states: with
   the tool index, and without it (the same code with ``tool_rows_for_branch`` answering
   nothing): what the index adds to the build's time, and to the database's size;
2. tool search (``tools_search``, limit 10, excerpts and redaction included) p50/p95 per
   query class, for the operator and for a granted caller who sees 10 sessions (plus its
   own), beside ``sessions_search`` of the same words in the same process, call by call
   alternating;
3. the machine's load (``uptime``) before and after.

The archive is bench_data's (cached under --cache); the two states are built in a temporary
folder beside it and removed at the end (``--keep`` keeps them).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import bench_data
from bench_search import percentiles, timed_pair

from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.tool_search import ToolSearchRequest, tools_search
from backscroll.core.visibility import OPERATOR, Caller, Policy

# name -> (words, tool filter, failed only)
CLASSES = {
    "rare word (a person's name)": ("Oskar", None, False),
    "common word in commands": ("kubectl", None, False),
    "word in most results": ("the", None, False),
    "two words": ("rollout status", None, False),
    "phrase": ('"connection pool"', None, False),
    "word + --tool exec": ("deploy", "exec", False),
    "word + --failed": ("error", None, True),
    "listing --failed": ("", None, True),
    "listing --tool web_fetch": ("", "web_fetch", False),
}

# The build without the index: every process of it (the row builder's helper process too, which
# imports the code afresh) finds no tool calls, through a sitecustomize on its PYTHONPATH.
_WITHOUT_TOOLS = """
import backscroll.core.tool_index as tool_index
tool_index.tool_rows_for_branch = lambda *args, **kwargs: []
"""


def build(archive: Path, state: Path, with_tools: bool, work: Path) -> dict:
    env = dict(os.environ)
    if not with_tools:
        site = work / "without-site"
        site.mkdir(exist_ok=True)
        (site / "sitecustomize.py").write_text(_WITHOUT_TOOLS)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    command = [sys.executable, str(Path(__file__).resolve().parent / "bench_data.py"),
               str(archive), str(state)]
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def table_bytes(db: Path, prefix: str) -> int | None:
    """Bytes of the tables and indexes named ``prefix*`` (dbstat), None without dbstat."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE ?",
                                (prefix + "%",)).fetchone()[0]
    except sqlite3.OperationalError:
        return None


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/backscroll-bench"))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    print(f"load before: {load()}", flush=True)
    archive = bench_data.archive_path(args.cache, args.messages)
    if not (archive / "bench-archive.json").is_file():
        print(f"writing the archive ({args.messages:,} messages) to {archive} ...", flush=True)
        counts = bench_data.write_archive(archive, args.messages)
        (archive / "bench-archive.json").write_text(json.dumps(counts))
    work = Path(tempfile.mkdtemp(prefix="bench-tools-", dir=args.cache))
    try:
        builds = {}
        for name, with_tools in (("without", False), ("with", True)):
            print(f"import + reconcile {name} the tool index ...", flush=True)
            builds[name] = build(archive, work / name, with_tools, work)
        os.sync()
        messages = json.loads((archive / "bench-archive.json").read_text())["messages"]
        _build_table(builds, work, messages)
        _search_table(StateDir(work / "with"), args.runs)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"load after: {load()}")


def _build_table(builds: dict, work: Path, messages: int) -> None:
    db = {name: StateDir(work / name).storage.db_path(bench_data.AGENT) for name in builds}
    with sqlite3.connect(f"file:{db['with']}?mode=ro", uri=True) as conn:
        tool_rows = conn.execute("SELECT count(*) FROM tool_index").fetchone()[0]
        failed = conn.execute("SELECT count(*) FROM tool_index WHERE status = 'failed'"
                              ).fetchone()[0]
        message_rows = conn.execute("SELECT count(*) FROM message_index").fetchone()[0]
    print(f"\n{message_rows:,} message rows, {tool_rows:,} tool rows ({failed:,} failed)")
    print("| build | import s | reconcile s | import + reconcile s | messages/s | CPU s "
          "(both processes) | db MB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    cpu = {}
    for name, b in builds.items():
        total = b["import_s"] + b["reconcile_s"]
        cpu[name] = b["import_cpu_s"] + b["reconcile_cpu_s"] + b["helper_cpu_s"]
        size = db[name].stat().st_size / 1e6
        print(f"| {name} the tool index | {b['import_s']:.1f} | {b['reconcile_s']:.1f} | "
              f"{total:.1f} | {messages / total:,.0f} | {cpu[name]:.1f} | {size:,.0f} |")
    w, wo = builds["with"], builds["without"]
    added = (w["import_s"] + w["reconcile_s"]) / (wo["import_s"] + wo["reconcile_s"])
    print(f"import + reconcile with / without: {added:.2f}x wall, "
          f"{cpu['with'] / cpu['without']:.2f}x CPU")
    tool_bytes = table_bytes(db["with"], "tool_")
    grown = db["with"].stat().st_size - db["without"].stat().st_size
    print(f"tool index: {grown / 1e6:,.0f} MB more database"
          + (f"; its tables and indexes (dbstat) {tool_bytes / 1e6:,.0f} MB" if tool_bytes else ""))


def _search_table(state: StateDir, runs: int) -> None:
    callers = {
        "operator": OPERATOR,
        "caller seeing 10": Caller(bench_data.CALLERS[10], Policy(tool_calls=("*",))),
    }
    print(f"\ntool search (limit 10) against sessions_search of the same words, {runs} runs "
          "each, alternating call by call; ms")
    print("| query | caller | hits | tool p50 | tool p95 | messages p50 | messages p95 | "
          "p95 ratio | tool CPU p50 | tool CPU p95 |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, (words, tool, failed) in CLASSES.items():
        for who, caller in callers.items():
            request = ToolSearchRequest(SearchRequest(words, limit=10), tool, failed)
            plain = SearchRequest(words or "error", limit=10)
            hits = len(tools_search(state, request, caller).results)
            tool_ms, plain_ms, tool_cpu, _plain_cpu = timed_pair(
                lambda: tools_search(state, request, caller),
                lambda: sessions_search(state, plain, caller), runs)
            t50, t95 = percentiles(tool_ms)
            m50, m95 = percentiles(plain_ms)
            c50, c95 = percentiles(tool_cpu)
            print(f"| {name} | {who} | {hits} | {t50:.1f} | {t95:.1f} | {m50:.1f} | {m95:.1f} | "
                  f"{t95 / m95:.2f} | {c50:.1f} | {c95:.1f} |", flush=True)


if __name__ == "__main__":
    main()
