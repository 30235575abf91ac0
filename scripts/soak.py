"""The soak (local only, not in CI): writer processes appending at full speed, an importer
adding transcripts that wait for reconciliation, a reconciler, searchers and history readers,
all at once on one state dir for a fixed time. Prints throughput, p50/p99 latencies and every
error that surfaced (the goal is none), then checks the files (integrity, ``verify``).

    .venv/bin/python scripts/soak.py [--seconds 300] [--writers 3] [--searchers 2] [--readers 1]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sqlite3
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

AGENTS = ("main", "ops")
WORDS = ("heron", "otter", "deploy", "pool", "latency", "café", "数据库", "rollback", "zebra")


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def writer(root: str, index: int, seconds: float) -> dict[str, Any]:
    """Append to its own sessions at full speed; now and then a leaf control (a rewind)
    leaves a session for reconciliation."""
    from backscroll.core.state import StateDir
    from backscroll.core.storage import SessionMeta

    rng = random.Random(index)
    state = StateDir(root)
    latencies, errors, n = [], [], 0
    dbs = {agent: state.open(agent, write=True) for agent in AGENTS}
    end = time.monotonic() + seconds
    last: dict[str, str] = {}
    while time.monotonic() < end:
        agent = AGENTS[n % 2]
        key = f"agent:{agent}:w{index}-{rng.randrange(5)}"
        if key in last and rng.random() < 0.03:
            event = {"type": "leaf", "targetId": last[key]}
        else:
            eid = f"w{index}-{n}"
            event = {"type": "message", "id": eid, "message": {
                "role": rng.choice(("user", "assistant")),
                "content": f"{_words(rng, 20)} token=sk{n}abcdefghijklmnop number {n}"}}
            last[key] = eid
        start = time.perf_counter()
        try:
            dbs[agent].append(SessionMeta(key), json.dumps(event, ensure_ascii=False))
            latencies.append(time.perf_counter() - start)
        except Exception as err:  # noqa: BLE001 - the soak counts what surfaces
            errors.append(f"{type(err).__name__}: {err}")
        n += 1
    for db in dbs.values():
        db.close()
    return {"role": "append", "latencies": latencies, "errors": errors}


def importer(root: str, index: int, seconds: float) -> dict[str, Any]:
    """Every second, a new OpenClaw folder of ten transcripts: stored, waiting for
    reconciliation."""
    from backscroll.core.importers.openclaw import import_openclaw
    from backscroll.core.state import StateDir

    rng = random.Random(100 + index)
    state = StateDir(root)
    latencies, errors, n = [], [], 0
    end = time.monotonic() + seconds
    with tempfile.TemporaryDirectory() as tmp:
        while time.monotonic() < end:
            folder = Path(tmp) / f"batch{n}" / "agents" / "ops" / "sessions"
            folder.mkdir(parents=True)
            for s in range(10):
                sid = f"imp-{n}-{s}"
                events = [{"type": "session", "version": 3, "id": sid}] + [
                    {"type": "message", "id": f"{sid}-{i}", "message": {
                        "role": "user" if i % 2 == 0 else "assistant", "content": _words(rng, 30)}}
                    for i in range(50)
                ]
                (folder / f"{sid}.jsonl").write_text("\n".join(json.dumps(e) for e in events))
            start = time.perf_counter()
            try:
                import_openclaw(state, folder)
                latencies.append(time.perf_counter() - start)
            except Exception as err:  # noqa: BLE001
                errors.append(f"{type(err).__name__}: {err}")
            n += 1
            time.sleep(max(0.0, 1.0 - (time.perf_counter() - start)))
    return {"role": "import (10 sessions)", "latencies": latencies, "errors": errors}


def reconciler(root: str, index: int, seconds: float) -> dict[str, Any]:
    from backscroll.core.reconcile import reconcile_agent
    from backscroll.core.state import StateDir

    state = StateDir(root)
    latencies, errors, messages = [], [], 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for agent in AGENTS:
            start = time.perf_counter()
            try:
                stats = reconcile_agent(state, agent)
                messages += stats.messages
                if stats.started:
                    latencies.append(time.perf_counter() - start)
            except Exception as err:  # noqa: BLE001
                errors.append(f"{type(err).__name__}: {err}")
        time.sleep(0.2)
    return {"role": "reconcile pass", "latencies": latencies, "errors": errors,
            "messages": messages}


def _exists(state: Any, caller: Any) -> bool:
    from backscroll.core.errors import Forbidden
    from backscroll.core.visible_sessions import resolve_caller

    try:
        resolve_caller(state, caller)
    except Forbidden:
        return False
    return True


def searcher(root: str, index: int, seconds: float) -> dict[str, Any]:
    from backscroll.core.config import load_config, make_caller
    from backscroll.core.search import SearchRequest, sessions_search
    from backscroll.core.state import StateDir
    from backscroll.core.visibility import OPERATOR

    rng = random.Random(200 + index)
    state = StateDir(root)
    config = load_config(state.path)
    callers = [OPERATOR, make_caller(config, "agent:main:w0-1", "agent"),
               make_caller(config, "agent:ops:w1-2", "self")]
    latencies, errors = [], []
    end = time.monotonic() + seconds
    # The two session callers are sessions the writers create: until then a search as them is
    # rightly forbidden, so the searchers start once both exist.
    while time.monotonic() < end and not all(_exists(state, c) for c in callers[1:]):
        time.sleep(0.05)
    while time.monotonic() < end:
        query = rng.choice((*WORDS, "heron otter", '"deploy pool"', "ro"))
        request = SearchRequest(query, limit=10, match="prefix" if query == "ro" else "exact")
        start = time.perf_counter()
        try:
            sessions_search(state, request, rng.choice(callers))
            latencies.append(time.perf_counter() - start)
        except Exception as err:  # noqa: BLE001
            errors.append(f"{type(err).__name__}: {err}")
    return {"role": "search", "latencies": latencies, "errors": errors}


def reader(root: str, index: int, seconds: float) -> dict[str, Any]:
    from backscroll.core.catalog import list_sessions
    from backscroll.core.history import HistoryRequest, sessions_history
    from backscroll.core.state import StateDir
    from backscroll.core.visibility import OPERATOR

    rng = random.Random(300 + index)
    state = StateDir(root)
    latencies, errors = [], []
    keys: list[str] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not keys or rng.random() < 0.02:
            keys = [s.key for s in list_sessions(state)] or keys
            if not keys:
                time.sleep(0.1)
                continue
        start = time.perf_counter()
        try:
            sessions_history(state, HistoryRequest(rng.choice(keys), limit=50), OPERATOR)
            latencies.append(time.perf_counter() - start)
        except Exception as err:  # noqa: BLE001
            errors.append(f"{type(err).__name__}: {err}")
    return {"role": "history", "latencies": latencies, "errors": errors}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else 0.0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--writers", type=int, default=3)
    parser.add_argument("--searchers", type=int, default=2)
    parser.add_argument("--readers", type=int, default=1)
    args = parser.parse_args()
    plan = ([(writer, i) for i in range(args.writers)] + [(importer, 0), (reconciler, 0)]
            + [(searcher, i) for i in range(args.searchers)]
            + [(reader, i) for i in range(args.readers)])
    from backscroll.core.state import StateDir
    from backscroll.core.verify import verify_state

    with tempfile.TemporaryDirectory() as tmp:
        root = str(Path(tmp) / "state")
        for agent in AGENTS:
            StateDir(root).open(agent, write=True).close()
        context = multiprocessing.get_context("spawn")
        print(f"soak: {len(plan)} processes for {args.seconds:.0f} s ...", flush=True)
        with ProcessPoolExecutor(max_workers=len(plan), mp_context=context) as pool:
            futures = [pool.submit(fn, root, i, args.seconds) for fn, i in plan]
            results = [f.result() for f in futures]
        state = StateDir(root)
        from backscroll.core.reconcile import reconcile_all

        reconcile_all(state)
        report = verify_state(state)
        integrity = []
        for agent in state.agents():
            conn = sqlite3.connect(state.db_path(agent))
            integrity.append(conn.execute("PRAGMA integrity_check").fetchone()[0])
            conn.close()

    by_role: dict[str, dict[str, Any]] = {}
    for result in results:
        row = by_role.setdefault(result["role"], {"latencies": [], "errors": [], "procs": 0})
        row["latencies"] += result["latencies"]
        row["errors"] += result["errors"]
        row["procs"] += 1
    print(f"\n{'operation':<22} {'procs':>5} {'count':>9} {'per s':>9} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'errors':>6}")
    for role, row in by_role.items():
        lat = row["latencies"]
        print(f"{role:<22} {row['procs']:>5} {len(lat):>9,} {len(lat) / args.seconds:>9,.1f} "
              f"{pct(lat, 0.5):>8.2f} {pct(lat, 0.99):>8.2f} {len(row['errors']):>6}")
    indexed = sum(r.get("messages", 0) for r in results)
    print(f"\nreconciliation indexed {indexed:,} messages; integrity: {', '.join(integrity)}; "
          f"verify: {'ok' if report.ok else 'FAILED'} ({report.sessions_checked} sessions, "
          f"{report.rows_checked:,} rows)")
    errors = Counter(e for row in by_role.values() for e in row["errors"])
    for error, count in errors.most_common(10):
        print(f"  {count} x {error}")
    print(f"surfaced errors: {sum(errors.values())}")
    return 0 if not errors and report.ok and set(integrity) == {"ok"} else 1


if __name__ == "__main__":
    raise SystemExit(main())
