"""The bulk import path against import + reconciliation, alternating on one archive (issue 27
part 4; docs/performance.md "Ten million messages").

    .venv/bin/python benchmarks/bench_bulk.py [--messages 1000000] [--rounds 2]
        [--cache /work/bench-state]

The archive is ``bench_data``'s (the demo generator's corpus, one agent, written once under
``--cache``). Each round builds a fresh state both ways, each in a process of its own (its
peak memory its own), the order alternating from round to round:

- **two passes**: ``import_openclaw(read_ahead=True)`` with no index built as the files are
  read (the events stored, every session dirty), then ``reconcile_all``: the path before;
- **bulk**: the same import building each transcript's index in the read-ahead helper and
  publishing it with the events of the sessions it creates, then ``reconcile_all`` (which
  finds only the sessions the import left to it).

``--groups 8000 16000`` adds the bulk path with import groups of that many events (a
transaction each; ``imports.IMPORT_GROUP_EVENTS`` is the default). Prints wall seconds, messages/s, CPU of the storing process and of its helpers, peak RSS,
sessions left to reconciliation, the state's size, and ``uptime`` before and after. The
states are deleted after each round.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import bench_data

from backscroll.core.importers.openclaw import TranscriptRead, read_transcript


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def read_plain(root: Path, file: Path, build: bool = False) -> TranscriptRead:
    """The import's reader building no index (the import's helper runs it too: a module-level
    function, bound to the reader before the child replaces it)."""
    return read_transcript(root, file, False)


def child(archive: Path, state_dir: Path, mode: str) -> None:
    from backscroll.core.importers import openclaw
    from backscroll.core.reconcile import reconcile_all
    from backscroll.core.state import StateDir

    if mode == "two-passes":  # what the import did before: no index built as it reads
        openclaw.read_transcript = read_plain
    elif mode.startswith("bulk-"):  # bulk, another group size (events a transaction)
        from backscroll.core.storage.sqlite import imports

        imports.IMPORT_GROUP_EVENTS = int(mode.removeprefix("bulk-"))
    state = StateDir(state_dir)
    t0 = time.perf_counter()
    openclaw.import_openclaw(state, archive, read_ahead=True)
    t1 = time.perf_counter()
    import_cpu, import_helper = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    left = 0
    for agent in state.agents():
        with state.open(agent) as db:
            left += db.pending_count()[0]
    t2 = time.perf_counter()
    results = reconcile_all(state)
    t3 = time.perf_counter()
    print(json.dumps({
        "import_s": t1 - t0, "reconcile_s": t3 - t2, "total_s": (t1 - t0) + (t3 - t2),
        "import_cpu_s": import_cpu, "import_helper_cpu_s": import_helper,
        "reconcile_cpu_s": _cpu(resource.RUSAGE_SELF) - import_cpu,
        "reconcile_helper_cpu_s": _cpu(resource.RUSAGE_CHILDREN) - import_helper,
        "left_to_reconcile": left, "reconciled_messages": sum(r.messages for r in results),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "helper_peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }))


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=Path("/work/bench-state"))
    parser.add_argument("--groups", type=int, nargs="*", default=[],
                        help="also the bulk path with import groups of these many events")
    args = parser.parse_args()

    archive = bench_data.archive_path(args.cache, args.messages)
    if not (archive / "bench-archive.json").is_file():
        print(f"writing the archive ({args.messages:,} messages) to {archive} ...", flush=True)
        counts = bench_data.write_archive(archive, args.messages)
        (archive / "bench-archive.json").write_text(json.dumps(counts))
    messages = json.loads((archive / "bench-archive.json").read_text())["messages"]
    print(f"load before: {uptime()}", flush=True)
    modes = ["two-passes", "bulk"] + [f"bulk-{g}" for g in args.groups]
    runs: dict[str, list[dict]] = {mode: [] for mode in modes}
    for n in range(args.rounds):
        order = modes if n % 2 == 0 else modes[::-1]
        for mode in order:
            state = args.cache / f"bench-bulk-{mode}"
            shutil.rmtree(state, ignore_errors=True)
            out = subprocess.run([sys.executable, __file__, "--child", str(archive), str(state),
                                  mode], check=True, capture_output=True, text=True).stdout
            run = json.loads(out.strip().splitlines()[-1])
            run["state_mb"] = bench_data.size_mb(state)
            runs[mode].append(run)
            print(f"round {n + 1} {mode}: {json.dumps(run)}  ({uptime()})", flush=True)
            shutil.rmtree(state)
    print(f"load after: {uptime()}\n")
    base = statistics.median(r["total_s"] for r in runs["two-passes"])
    print(f"{messages:,} messages, {args.rounds} rounds alternating; medians "
          "(import + reconcile wall s; CPU s of the storing process / its helpers)")
    print("| path | import s | reconcile s | total s | messages/s | x two passes | CPU storing "
          "| CPU helpers | left to reconcile | peak RSS MB (+ helper) | state MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for mode, rs in runs.items():
        def med(field: str, rs: list[dict] = rs) -> float:
            return statistics.median(r[field] for r in rs)
        total = med("total_s")
        print(f"| {mode} | {med('import_s'):.1f} | {med('reconcile_s'):.1f} | {total:.1f} | "
              f"{messages / total:,.0f} | {base / total:.2f} | "
              f"{med('import_cpu_s') + med('reconcile_cpu_s'):.1f} | "
              f"{med('import_helper_cpu_s') + med('reconcile_helper_cpu_s'):.1f} | "
              f"{med('left_to_reconcile'):,.0f} | {med('peak_rss_mb'):.0f} "
              f"(+ {med('helper_peak_rss_mb'):.0f}) | {med('state_mb'):,.0f} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4])
    else:
        main()
